/*
 * commands.h - the subcommands of `lockblame`. Each takes the argument
 * vector after the subcommand name (argv[0] is the subcommand) and returns
 * the process exit status; usage errors exit 2 from inside.
 */
#ifndef LB_CLI_COMMANDS_H
#define LB_CLI_COMMANDS_H

int lb_cmd_run(int argc, char **argv);
int lb_cmd_report(int argc, char **argv);
int lb_cmd_compare(int argc, char **argv);
int lb_cmd_merge(int argc, char **argv);
int lb_cmd_events(int argc, char **argv);
int lb_cmd_whatif(int argc, char **argv);
int lb_cmd_snapshot(int argc, char **argv);

/* Exit 2 with "unknown option" / "missing argument" for getopt's '?'/':'. */
_Noreturn void lb_bad_option(const char *cmd, int opt, const char *arg);

#include "common/version.h"

#endif
