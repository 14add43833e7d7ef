/*
 * select.h - the process selection options that `report` and `compare`
 * share: --pid N and --comm NAME fill a struct lb_select (profile.h), which
 * lb_profile_load_select applies while loading; both commands parse, explain
 * and describe them here, so they mean the same in each.
 */
#ifndef LB_CLI_SELECT_H
#define LB_CLI_SELECT_H

#include <getopt.h>
#include <stdbool.h>

#include "report/cli/profile.h"

/* getopt_long values of the two options, above every command's own. */
enum {
    LB_OPT_PID = 1024,
    LB_OPT_COMM,
    LB_OPT_WINDOW,
    LB_OPT_SINCE,
    LB_OPT_UNTIL
};

/* Entries for a command's struct option table. */
#define LB_SELECT_LONGOPTS                                    \
    { "pid", required_argument, NULL, LB_OPT_PID },           \
        { "comm", required_argument, NULL, LB_OPT_COMM },     \
        { "window", required_argument, NULL, LB_OPT_WINDOW }, \
        { "since", required_argument, NULL, LB_OPT_SINCE },   \
    {                                                         \
        "until", required_argument, NULL, LB_OPT_UNTIL        \
    }

/* The options' lines in a command's --help. */
#define LB_SELECT_HELP                                                              \
    "  --pid N        only the process(es) with pid N (default: all processes)\n"   \
    "  --comm NAME    only the processes whose command is NAME (argv[0]'s or the\n" \
    "                 executable's base name)\n"                                    \
    "  --window N     only time window N (or N-M) of a run written in time\n"       \
    "                 windows (report's windows option lists them)\n"               \
    "  --since T      only the time windows that end after T: seconds from the\n"   \
    "                 start, or a wall-clock time HH:MM[:SS]\n"                     \
    "  --until T      only the time windows that begin before T\n"

/* Store the argument of option opt (LB_OPT_PID .. LB_OPT_UNTIL) in sel; a
 * bad value (not a pid, an empty name) exits 2 with one line starting
 * with cmd. */
void lb_select_option(struct lb_select *sel, const char *cmd, int opt, const char *arg);

/* Whether sel selects anything less than every process. */
bool lb_select_any(const struct lb_select *sel);

/* The selection in a header's words: "pid=N", "comm=NAME" or both, space
 * separated; nothing for none. Appends to out. */
void lb_select_describe(const struct lb_select *sel, struct lb_buf *out);

#endif
