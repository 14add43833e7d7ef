/*
 * main.c - `lockblame` entry point: dispatch to run, report, compare, merge
 * and events; top-level help and version.
 *
 * Exit codes: 0 success, 1 runtime failure, 2 usage error or bad input;
 * `run` exits with the profiled program's status instead.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/switches.h"
#include "common/symindex.h"
#include "report/cli/commands.h"
#include "report/cli/util.h"

static const char main_usage[] =
    "usage: lockblame COMMAND [OPTIONS]\n"
    "\n"
    "Blame-shifting profiler for pthread programs: who made the threads wait.\n"
    "\n"
    "commands:\n"
    "  run [-o FILE] [-e EVENT[@PERIOD]] [-F HZ] [--interval T] -- PROG [ARGS]\n"
    "                 run PROG with liblockblame.so preloaded\n"
    "  report [VIEW] [--pid N] [--comm NAME] [--metric M] [--kind KINDS]\n"
    "         [--format table|csv|json|folded|html|pprof] [-n N] [--per-address] [-o FILE] [DB]\n"
    "                 show a database (default: newest lockblame.*.db here);\n"
    "                 pprof exports to go tool pprof, Pyroscope, Parca\n"
    "  compare [--pid N] [--comm NAME] [--format table|csv|json] [--by-function] [-n N]\n"
    "          A.db B.db [C.db ...]\n"
    "                 where B gains or loses effort against A, B faster or\n"
    "                 slower (scaling loss, before/after a fix)\n"
    "  merge -o ALL.db A.db B.db ...\n"
    "                 combine databases; each input's processes stay their own\n"
    "  events [-a]    perf events known to libpfm4; * marks those that open here\n"
    "  whatif [-o FILE] [--site NAME] [-n K] [-r RUNS] [--progress FUNCTION]\n"
    "         [--format table|json] (-- PROG [ARGS] | FILE | --show FILE)\n"
    "                 predict the gain of shorter holds at the top release sites,\n"
    "                 by virtual speedup experiments\n"
    "  snapshot PID   a running profiled process that writes time windows, and\n"
    "                 its children, write a window now\n"
    "\n"
    "'lockblame COMMAND --help' describes a command. See lockblame(1).\n"
    "Exit status: 0 ok, 1 runtime failure, 2 usage error or bad input.\n";

void lb_bad_option(const char *cmd, int opt, const char *arg)
{
    if (opt == ':')
        cli_die(LB_EXIT_USAGE, "%s: option '%s' needs an argument (see 'lockblame %s --help')", cmd,
                arg ? arg : "?", cmd);
    if (opt && opt < 256)
        cli_die(LB_EXIT_USAGE, "%s: unknown option '-%c' (see 'lockblame %s --help')", cmd, opt,
                cmd);
    cli_die(LB_EXIT_USAGE, "%s: unknown option '%s' (see 'lockblame %s --help')", cmd,
            arg ? arg : "?", cmd);
}

/* LOCKBLAME_CACHE, the one switch the CLI itself reads: judged by every
 * command but run, which judges them all (common/switches.h). */
static const char *cache_switch_only(const char *name)
{
    return strcmp(name, "LOCKBLAME_CACHE") == 0 ? getenv(name) : NULL;
}

static void say_switch(const char *line)
{
    cli_warn("%s", line);
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } cmds[] = {
        { "run", lb_cmd_run },           { "report", lb_cmd_report }, { "compare", lb_cmd_compare },
        { "merge", lb_cmd_merge },       { "events", lb_cmd_events }, { "whatif", lb_cmd_whatif },
        { "snapshot", lb_cmd_snapshot },
    };

    /* Before SQLite's first use: no memory statistics, which take its
     * malloc mutex around every allocation and free (a tenth of what
     * `run` spends merging a tree's pending profiles); lockblame reads
     * none of them. */
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    /* Big modules' symbol indexes from the per-user cache: every command
     * that names frames (a merge of pending profiles, report's names). */
    lb_symindex_cache_use();
    if (argc < 2)
        cli_die(LB_EXIT_USAGE, "missing command (run, report, compare, merge, events, whatif,"
                               " snapshot; see 'lockblame --help')");
    const char *cmd = argv[1];
    if (strcmp(cmd, "run") != 0) /* (run judges every switch for its tree) */
        lb_switches_check(cache_switch_only, say_switch);

    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        fputs(main_usage, stdout);
        return LB_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("lockblame %s\n", LB_VERSION);
        return LB_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++)
        if (strcmp(cmd, cmds[i].name) == 0)
            return cmds[i].fn(argc - 1, argv + 1);
    if (cmd[0] == '-')
        cli_die(LB_EXIT_USAGE, "unknown option '%s' (see 'lockblame --help')", cmd);
    cli_die(LB_EXIT_USAGE,
            "unknown command '%s' (run, report, compare, merge, events, whatif, snapshot; see"
            " 'lockblame "
            "--help')",
            cmd);
}
