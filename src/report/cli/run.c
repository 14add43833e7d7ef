/*
 * run.c - `lockblame run`: start a program with liblockblame.so preloaded.
 *
 * The library is the one next to this executable (/proc/self/exe), put in
 * front of any LD_PRELOAD already set; -o/-e/-F become LOCKBLAME_OUTPUT,
 * LOCKBLAME_EVENT and LOCKBLAME_FREQ. The whole process tree writes into
 * one database: FILE, or lockblame.<prog>.<pid>.db here (pid: PROG's),
 * made absolute, with a run key (LOCKBLAME_RUN) of ours, and
 * LOCKBLAME_SUMMARY=run, which keeps the processes quiet: we print one
 * summary for the whole database when PROG has ended (run_summary.c).
 * A lockblame database already at the path is removed first (this run
 * replaces it); anything else there is left alone and PROG runs
 * unprofiled. The child's stdin/stdout/stderr are ours, untouched. We exit
 * with its status; if a signal killed it, we die of the same signal (no
 * core), or exit 128 + N if we cannot.
 *
 * Signals (run_signals below): while PROG runs, SIGINT, SIGTERM, SIGHUP,
 * SIGQUIT, SIGUSR1 and SIGUSR2 sent to us by a process (kill, a service
 * manager, a CI's timeout) are passed on to PROG, and we go on waiting, so
 * that PROG can end in its own way, its tree can write its profile and we
 * print the summary and exit with PROG's status; `run` is never killed
 * while PROG is left running. Signals the kernel sends on a terminal's
 * behalf (^C, ^\, a hang-up) reach PROG from the terminal itself, as it
 * is in our process group: they are not passed on again. A signal our
 * parent ignores (a shell's background job ignores SIGINT and SIGQUIT;
 * nohup, SIGHUP) is caught too, and passed on: PROG starts with the
 * disposition it would have had, so it ignores it in its turn unless it
 * installed a handler (as a server does), exactly as if signalled itself.
 *
 * Daemons: while profiling, we are a child subreaper (PR_SET_CHILD_SUBREAPER),
 * so a process of the tree whose parent ends (a daemon's child, once its
 * first process exits) becomes our child before PROG's end reaches us;
 * the summary counts those still running (run_summary.c), even one that
 * has not run a single instruction yet. We reap every child while we wait
 * for PROG (no orphan stays a zombie of ours), and at our exit those still
 * running pass on to init as they would have.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/resource.h>
#include <sys/time.h>

#include "common/db_name.h"
#include "common/duration.h"
#include "common/ledger.h"
#include "common/spool.h"
#include "common/switches.h"
#include "report/cli/commands.h"
#include "report/cli/run_checks.h"
#include "report/cli/run_merge.h"
#include "report/cli/util.h"

static const char run_usage[] =
    "usage: lockblame run [-o FILE] [-e EVENT[@PERIOD]] [-F HZ] -- PROG [ARGS]\n"
    "\n"
    "Run PROG with liblockblame.so (from lockblame's own directory) preloaded.\n"
    "Every process of PROG's tree that recorded something (a thread, a sample, a\n"
    "wait, blame for another process's waits) adds its profile to one database:\n"
    "FILE, or lockblame.<prog>.<pid>.db in the current directory. When PROG ends,\n"
    "prints a summary of the whole run and exits with PROG's status (dies of the\n"
    "same signal if a signal killed it).\n"
    "SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to lockblame run\n"
    "are passed on to PROG, which ends in its own way before the summary.\n"
    "\n"
    "options:\n"
    "  -o FILE            database path (sets LOCKBLAME_OUTPUT)\n"
    "  -e EVENT[@PERIOD]  sampling event, a libpfm4 name such as cycles@2000000\n"
    "                     or task-clock (sets LOCKBLAME_EVENT); see 'lockblame events'\n"
    "  -F HZ              sampling frequency per thread (sets LOCKBLAME_FREQ)\n"
    "  --interval T       write a time window every T (10s, 500ms, 1m; 0: only when\n"
    "                     'lockblame snapshot PID' asks), so that a server's profile\n"
    "                     is read while it runs (sets LOCKBLAME_INTERVAL; see\n"
    "                     'lockblame report --windows' and --window N)\n"
    "  -h, --help         this help\n";

/* Directory of the running executable + "/liblockblame.so"; NULL if
 * /proc/self/exe cannot be read. Caller frees. */
static char *library_path(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);

    if (n <= 0)
        return NULL;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');

    if (!slash)
        return NULL;
    *slash = '\0';
    struct lb_buf b = { 0 };

    lb_buf_printf(&b, "%s/liblockblame.so", exe);
    return b.s;
}

static void set_env(const char *name, const char *value)
{
    if (setenv(name, value, 1) != 0)
        cli_die(LB_EXIT_FAIL, "run: cannot set %s: %s", name, strerror(errno));
}

static void set_preload(void)
{
    char *lib = library_path();
    struct stat st;

    if (!lib) {
        cli_warn(
            "run: cannot find my own directory (/proc/self/exe); running without liblockblame.so");
        return;
    }
    /* Without the library ld.so would print its own error for every
	 * process; one line of ours is clearer, and the program still runs. */
    if (stat(lib, &st) != 0) {
        cli_warn("run: %s: %s; running the program unprofiled", lib, strerror(errno));
        free(lib);
        return;
    }
    const char *old = getenv("LD_PRELOAD");
    struct lb_buf b = { 0 };

    lb_buf_puts(&b, lib);
    if (old && *old)
        lb_buf_printf(&b, " %s", old);
    set_env("LD_PRELOAD", lb_buf_str(&b));
    lb_buf_free(&b);
    free(lib);
}

/* path made absolute against the current directory. Caller frees. */
static char *absolute(const char *path)
{
    char cwd[PATH_MAX];
    struct lb_buf b = { 0 };

    if (path[0] == '/' || !getcwd(cwd, sizeof cwd))
        lb_buf_puts(&b, path);
    else
        lb_buf_printf(&b, "%s/%s", cwd, path);
    return b.s;
}

/* lockblame.<prog>.<pid>.db in the current directory; a lockblame
 * database left there by an earlier run with the same name is replaced. */
static char *default_path(const char *prog, pid_t pid)
{
    char name[PATH_MAX];

    lb_default_db_name(name, sizeof name, prog, (int)pid);
    return absolute(name);
}

static const char *cli_getenv(const char *name)
{
    return getenv(name);
}

static void say_switch(const char *line)
{
    cli_warn("%s", line);
}

/* A bad LOCKBLAME_SPOOL_MAX, said here once for the tree: no process of
 * it started the run, so none says it (the library's spool_bound.c). */
static void warn_spool_max(void)
{
    char why[256];
    lb_spool_max_setting(getenv("LOCKBLAME_SPOOL_MAX"), why, sizeof why);
    if (why[0])
        cli_warn("%s", why);
}

/* The run key the library stamps on every process of this run. */
static void set_run_key(void)
{
    struct timeval tv;
    char key[64];

    gettimeofday(&tv, NULL);
    snprintf(key, sizeof key, "run.%d.%lld.%06ld", (int)getpid(), (long long)tv.tv_sec,
             (long)tv.tv_usec);
    set_env("LOCKBLAME_RUN", key);
    unsetenv("LOCKBLAME_SAID"); /* a tree around this run said its own (util/log.h) */
}

/* Die of sig as PROG did, so that our parent sees what the shell would
 * have seen; no core file of ours. 128 + sig if we survive it. */
static int die_like(int sig)
{
    struct rlimit no_core = { 0, 0 };
    sigset_t set;

    fflush(NULL);
    setrlimit(RLIMIT_CORE, &no_core);
    signal(sig, SIG_DFL);
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    return 128 + sig;
}

/* The signals passed on to PROG, and PROG's pid for the handler (0
 * before the fork: a signal then stays blocked until PROG exists). */
static const int forwarded_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
#define FORWARDED_SIGNALS (sizeof forwarded_signals / sizeof *forwarded_signals)
static volatile pid_t forward_to;

/* Async-signal-safe: one kill(2), errno kept. A signal from a process
 * (SI_USER, SI_QUEUE, SI_TKILL: si_code <= 0) is passed on; one the
 * kernel sent (the terminal's) has reached PROG already. */
static void forward_signal(int sig, siginfo_t *info, void *uctx)
{
    int saved_errno = errno;

    if (forward_to > 0 && info && info->si_code <= 0 && info->si_pid != forward_to)
        kill(forward_to, sig);
    errno = saved_errno;
}

/* Before the fork: the forwarded signals blocked (into *blocked_before,
 * the mask to restore) and caught; old[] keeps each disposition for
 * PROG. */
static void run_signals_catch(struct sigaction old[FORWARDED_SIGNALS], sigset_t *blocked_before)
{
    sigset_t set;
    struct sigaction forward = { .sa_sigaction = forward_signal,
                                 .sa_flags = SA_SIGINFO | SA_RESTART };

    sigemptyset(&set);
    sigemptyset(&forward.sa_mask);
    for (size_t i = 0; i < FORWARDED_SIGNALS; i++)
        sigaddset(&set, forwarded_signals[i]);
    sigprocmask(SIG_BLOCK, &set, blocked_before);
    for (size_t i = 0; i < FORWARDED_SIGNALS; i++)
        sigaction(forwarded_signals[i], &forward, &old[i]);
}

/* In PROG (before exec): our parent's dispositions and mask again. */
static void run_signals_restore(const struct sigaction old[FORWARDED_SIGNALS],
                                const sigset_t *blocked_before)
{
    for (size_t i = 0; i < FORWARDED_SIGNALS; i++)
        sigaction(forwarded_signals[i], &old[i], NULL);
    sigprocmask(SIG_SETMASK, blocked_before, NULL);
}

static void check_freq(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);

    if (!*s || *end || v <= 0 || v > 1000000)
        cli_die(LB_EXIT_USAGE, "run: -F wants a frequency in Hz (1..1000000), not '%s'", s);
}

/* Whether /proc names this process by another number than getpid()
 * (the library's check is util/proc_numbers.h, which the CLI does not
 * link); false without /proc, where nothing is looked up. */
static bool proc_numbers_other(void)
{
    char link[32];
    ssize_t n = readlink("/proc/self", link, sizeof link - 1);
    if (n <= 0)
        return false;
    link[n] = '\0';
    return strtol(link, NULL, 10) != (long)getpid();
}

int lb_cmd_run(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "help", no_argument, NULL, 'h' },           { "output", required_argument, NULL, 'o' },
        { "event", required_argument, NULL, 'e' },    { "freq", required_argument, NULL, 'F' },
        { "interval", required_argument, NULL, 'I' }, { NULL, 0, NULL, 0 },
    };
    const char *out = NULL, *event = NULL, *freq = NULL, *interval = NULL;
    int c;

    opterr = 0;
    optind = 1;
    /* '+': stop at PROG so that its own options are left alone. */
    while ((c = getopt_long(argc, argv, "+:ho:e:F:", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            fputs(run_usage, stdout);
            return LB_EXIT_OK;
        case 'o':
            out = optarg;
            break;
        case 'e':
            event = optarg;
            break;
        case 'F':
            freq = optarg;
            break;
        case 'I':
            interval = optarg;
            break;
        default:
            lb_bad_option("run", c == ':' ? ':' : optopt, argv[optind - 1]);
        }
    }
    if (optind >= argc)
        cli_die(LB_EXIT_USAGE,
                "run: missing program (usage: lockblame run [OPTIONS] -- PROG [ARGS])");
    if (out && !*out)
        cli_die(LB_EXIT_USAGE, "run: -o wants a file name");
    if (event && !*event)
        cli_die(LB_EXIT_USAGE, "run: -e wants an event name");
    if (freq)
        check_freq(freq);
    uint64_t interval_ns;

    if (interval && !lb_parse_duration(interval, &interval_ns))
        cli_die(LB_EXIT_USAGE, "run: --interval wants a duration such as 10s, 500ms or 0, not '%s'",
                interval);
    char **prog = argv + optind;
    const char *env_out = getenv("LOCKBLAME_OUTPUT");

    if (!out && env_out && *env_out)
        out = env_out; /* the user's name for the run, as -o */
    char *path = out ? absolute(out) : NULL;
    const char *why_not = lb_run_unprofilable(prog[0]);
    char why_not_written[256] = "";
    bool profile = true;

    if (why_not) {
        cli_warn("run: no profile will be written for %s: %s", prog[0], why_not);
        profile = false;
    } else if (getenv("LOCKBLAME_DISABLE")) {
        cli_warn("run: LOCKBLAME_DISABLE is set; running %s unprofiled", prog[0]);
        profile = false;
    } else if (path && lb_run_output_state(path) == LB_OUT_FOREIGN) {
        cli_warn("run: %s exists and is not a lockblame database; not overwriting it, running"
                 " %s unprofiled",
                 path, prog[0]);
        profile = false;
    } else if (!lb_db_writable(path ? path : "./lockblame.db", why_not_written,
                               sizeof why_not_written)) {
        profile = false;
    } else if (path && lb_run_output_state(path) == LB_OUT_LOCKBLAME && unlink(path) != 0) {
        cli_die(LB_EXIT_FAIL, "run: cannot replace %s: %s", path, strerror(errno));
    } else if (!lb_ledger_room(path ? path : "./lockblame.db", why_not_written,
                               sizeof why_not_written)) {
        profile = false; /* (asked once the database it replaces is gone) */
    }
    if (!profile && why_not_written[0])
        cli_warn("run: cannot write profile %s: %s; running %s unprofiled",
                 path ? path : "in the current directory", why_not_written, prog[0]);
    if (profile) {
        set_preload();
        set_run_key();
        set_env("LOCKBLAME_SUMMARY", "run");
        warn_spool_max();
        lb_switches_check(cli_getenv, say_switch); /* no process of the tree started it */
        if (proc_numbers_other())
            cli_warn("%s", LB_PROC_NUMBERS_OTHER_LINE);
    }
    if (event)
        set_env("LOCKBLAME_EVENT", event);
    if (freq)
        set_env("LOCKBLAME_FREQ", freq);
    if (interval)
        set_env("LOCKBLAME_INTERVAL", interval);

    struct sigaction old_actions[FORWARDED_SIGNALS];
    sigset_t blocked_before;

    fflush(NULL);
    if (profile)
        prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); /* the tree's orphans are ours (above) */
    run_signals_catch(old_actions, &blocked_before);
    lb_run_tree_begins();
    pid_t pid = fork();

    if (pid < 0)
        cli_die(LB_EXIT_FAIL, "run: fork: %s", strerror(errno));
    if (!path)
        path = default_path(prog[0], pid > 0 ? pid : getpid());
    if (pid == 0) {
        prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0); /* (not inherited; PROG is not one) */
        run_signals_restore(old_actions, &blocked_before);
        if (profile) {
            set_env("LOCKBLAME_OUTPUT", path);
            /* its processes join it; the run's own only where the path
             * passed the check (-o's above, the default name's here) */
            bool checked = out || lb_run_output_state(path) != LB_OUT_FOREIGN;
            lb_run_fresh_ledger(path, checked ? getenv("LOCKBLAME_RUN") : NULL);
        }
        execvp(prog[0], prog);
        int err = errno;

        /* As the shell does: 127 not found, 126 found but not runnable. */
        fprintf(stderr, "lockblame: run: cannot run '%s': %s\n", prog[0], strerror(err));
        _exit(err == ENOENT ? 127 : 126);
    }
    int status;

    forward_to = pid;
    sigprocmask(SIG_SETMASK, &blocked_before, NULL); /* those that came meanwhile go to PROG */
    if (profile)
        lb_run_merge_start(path, getenv("LOCKBLAME_RUN"));
    /* any child: an orphan of the tree that ended meanwhile is reaped too */
    for (;;) {
        int st;
        pid_t ended = waitpid(-1, &st, 0);
        if (ended == pid) {
            status = st;
            break;
        }
        if (ended < 0 && errno != EINTR)
            cli_die(LB_EXIT_FAIL, "run: waitpid: %s", strerror(errno));
    }
    forward_to = 0; /* PROG's pid may be reused from here on */
    lb_run_merge_stop();
    if (profile)
        lb_run_summary(path, prog, pid, status, why_not);
    lb_run_merge_release();
    free(path);
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return die_like(WTERMSIG(status));
    return LB_EXIT_FAIL;
}
