/*
 * views.h - the report views. Each one reads a loaded profile, builds a
 * struct lb_table (or folded lines) and prints it to stdout in the format
 * chosen. They return an exit status (0, or 1 for a runtime failure).
 */
#ifndef LB_CLI_VIEWS_H
#define LB_CLI_VIEWS_H

#include <stdbool.h>
#include <stdio.h>

#include "report/cli/format.h"
#include "report/cli/profile.h"

enum lb_view {
    LB_V_RELEASE_SITE,
    LB_V_LOCK,
    LB_V_THREAD,
    LB_V_TOP_DOWN,
    LB_V_BOTTOM_UP,
    LB_V_FLAT,
    LB_V_PROCESS
};

struct lb_report_opts {
    enum lb_view view;
    enum lb_metric metric;
    enum lb_format format;
    int n;            /* -n: depth or rows (see the man page); -1 = default */
    unsigned kinds;   /* --kind: object kinds kept (bit 1 << kind); 0 = all */
    const char *db;   /* database path */
    const char *out;  /* -o FILE, NULL for stdout */
    bool per_address; /* --by-lock --per-address: one row per object */
};

/* Run header and totals; table format only (header.c). */
void lb_print_header(struct lb_profile *p, const struct lb_report_opts *o, FILE *out);
/* For each thread (entry[i], p->threads[i]) whose start routine is a
 * runtime routine (std::thread's), the program function it ran: the
 * outermost program frame of its heaviest contexts; for threads sharing a
 * program start routine (a trampoline) that ran different functions
 * below it, the callee of each one's heaviest contexts; -1 otherwise
 * (thread_entry.c). */
void lb_thread_entries(struct lb_profile *p, int32_t *entry);
/* The same, one frame per function (the first seen): threads that ran one
 * function name one release site (site_frame.c, lb_release_frame). */
void lb_release_entries(struct lb_profile *p, int32_t *entry);
/* At load, before indexing: each std::thread's join blame moves from
 * libstdc++'s trampoline to a child named by the function the thread ran
 * (join_entries.c). */
void lb_profile_join_entries(struct lb_profile *p);
/* Thread i's name as --by-thread gives it, into out: "main", its start
 * routine, or what lb_thread_entries found (entry may be NULL). */
void lb_thread_label(struct lb_profile *p, int32_t i, const int32_t *entry, struct lb_buf *out);
/* A process's initial thread (its tid is the process's pid). */
bool lb_thread_is_initial(const struct lb_profile *p, const struct lb_thread *t);
/* The text of the "waiters:" line (under the release-site table, in the
 * HTML page's header) when helper threads, busy a small part of their
 * lives, did most of the waiting; false, nothing added, otherwise
 * (waiters_hint.c). */
bool lb_waiters_hint(struct lb_profile *p, struct lb_buf *b);
/* "blame ... + hand-off ... + unattributed ... = total wait" line. */
void lb_print_conservation(const struct lb_profile *p, FILE *out);
/* Seconds for people in text cells: "0.600 s", "0.065 ms", "12.3 us". */
void lb_buf_seconds(struct lb_buf *b, double s);
/* "seconds (x% of effort)" helper used by headers. */
double lb_share(double part, double whole); /* 0 when whole is 0 */

int lb_view_release_sites(struct lb_profile *p, const struct lb_report_opts *o);
int lb_view_locks(struct lb_profile *p, const struct lb_report_opts *o);
int lb_view_threads(struct lb_profile *p, const struct lb_report_opts *o);
int lb_view_top_down(struct lb_profile *p, const struct lb_report_opts *o);
int lb_view_bottom_up(struct lb_profile *p, const struct lb_report_opts *o);
int lb_view_flat(struct lb_profile *p, const struct lb_report_opts *o);
int lb_view_processes(struct lb_profile *p, const struct lb_report_opts *o);
int lb_view_folded(struct lb_profile *p, const struct lb_report_opts *o);
/* --format html: the whole page (format_html.c). */
int lb_view_html(struct lb_profile *p, const struct lb_report_opts *o);
/* --format pprof: gzipped profile.proto on stdout (format_pprof.c). */
int lb_view_pprof(struct lb_profile *p, const struct lb_report_opts *o);

/* Interned frame keys (function\tfile\tline or module+0xOFF) per frame:
 * returns a malloc'd array of nframes ids into `tab`. */
int32_t *lb_frame_key_ids(struct lb_profile *p, struct lb_strtab *tab);
/* Same for procedure keys (label\tmodule). */
int32_t *lb_frame_proc_ids(struct lb_profile *p, struct lb_strtab *tab);

#endif
