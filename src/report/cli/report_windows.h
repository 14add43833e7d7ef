/*
 * report_windows.h - the report's time-window outputs (report_windows.c).
 */
#ifndef LB_CLI_REPORT_WINDOWS_H
#define LB_CLI_REPORT_WINDOWS_H

#include <stdbool.h>

#include "report/cli/profile.h"
#include "report/cli/views.h"

/* `report --windows`: one line per window (csv: with a header row). */
int lb_report_windows_list(const char *path, bool csv);
/* A database with no process's whole-run profile yet (its processes still
 * run) that holds time windows: one line on stderr saying how to read
 * them. */
void lb_report_windows_hint(const char *path);
/* `report --format pprof --per-window DIR`: DIR/window-NNNN.pb.gz for
 * each window (only --window N's with --window). */
int lb_report_per_window(struct lb_report_opts *o, const struct lb_select *sel, const char *dir);
#endif
