/* lockblame's process lifecycle: start in the constructor (or at first
 * use), finish once (destructor, fatal signal, exec), fork handling.
 *
 * Invariants: lb_runtime_phase only moves OFF -> STARTING -> RUNNING ->
 * FINISHED (a fork child goes back to RUNNING). Finishing is claimed with
 * one CAS, so exactly one thread writes the profile. */
#include "interpose/runtime.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/real.h"
#include "core/thread.h"
#include "core/undirected.h"
#include "interpose/thread_create.h"
#include "locks/monitored.h"
#include "report/writer/writer.h"
#include "sampler/sampler.h"
#include "sampler/unwind.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/pages.h"

static char output_path[PATH_MAX];

/* The database path: LOCKBLAME_OUTPUT, or lockblame.<prog>.<pid>.db in
 * the working directory at start. Relative paths are made absolute now,
 * because the program may chdir. A fork child (forked) gets its own file:
 * the default name with its pid, or LOCKBLAME_OUTPUT with ".<pid>" put
 * before a ".db" suffix. */
static void choose_output_path(bool forked)
{
    static char start_cwd[PATH_MAX];
    if (!forked && !getcwd(start_cwd, sizeof start_cwd))
        strcpy(start_cwd, ".");
    const char *given = getenv("LOCKBLAME_OUTPUT");
    char name[PATH_MAX];
    int pid = (int)getpid();
    if (given && *given) {
        size_t len = strlen(given);
        bool has_db = len > 3 && strcmp(given + len - 3, ".db") == 0;
        if (!forked)
            snprintf(name, sizeof name, "%s", given);
        else if (has_db)
            snprintf(name, sizeof name, "%.*s.%d.db", (int)(len - 3), given, pid);
        else
            snprintf(name, sizeof name, "%s.%d", given, pid);
    } else {
        extern char *program_invocation_short_name;
        snprintf(name, sizeof name, "lockblame.%s.%d.db", program_invocation_short_name, pid);
    }
    int n;
    if (name[0] == '/')
        n = snprintf(output_path, sizeof output_path, "%s", name);
    else
        n = snprintf(output_path, sizeof output_path, "%s/%s", start_cwd, name);
    if (n >= (int)sizeof output_path)
        lb_warn("output path too long; writing %s", output_path);
}

static void print_summary(const lb_summary_t *s)
{
    double pct = s->effort_s > 0 ? 100.0 * s->idleness_s / s->effort_s : 0;
    lb_warn("effort %.3f s = work %.3f s + idleness %.3f s (%.1f%% idle); threads waited %.3f s;"
            " profile %s",
            s->effort_s, s->work_s, s->idleness_s, pct, s->wait_s,
            s->path ? s->path : output_path);
    if (s->top_site[0])
        lb_warn("top release site: %s, %.3f s %s blame", s->top_site, s->top_site_s,
                s->top_object);
}

void lb_runtime_finish(const char *reason)
{
    int expected = LB_PHASE_RUNNING;
    if (!__atomic_compare_exchange_n(&lb_runtime_phase, &expected, LB_PHASE_FINISHED, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return;
    int saved_errno = errno;
    lb_thread_t *self = lb_self;
    if (self)
        lb_enter(self); /* our own sqlite/malloc locking goes straight to glibc */
    lb_sampler_quiesce();
    lb_thread_freeze();
    lb_summary_t summary = { 0 };
    if (lb_write_profile(output_path, reason, &summary) == 0)
        print_summary(&summary);
    if (self)
        lb_leave(self);
    errno = saved_errno;
}

/* SIGINT, SIGTERM and SIGABRT with the default action: write, then die of
 * the signal. Writing is not async-signal-safe; an alarm bounds a deadlock
 * (a signal that interrupted malloc, or an abort from inside malloc) to a
 * few seconds, after which the process dies of SIGALRM. For SIGABRT this
 * is best effort: the program is already failing. */
static const struct {
    int sig;
    const char *reason;
} fatal_signals[] = {
    { SIGINT, "signal SIGINT" },
    { SIGTERM, "signal SIGTERM" },
    { SIGABRT, "signal SIGABRT" },
};

static void on_fatal_signal(int sig)
{
    signal(sig, SIG_DFL);
    signal(SIGALRM, SIG_DFL);
    alarm(sig == SIGABRT ? 3 : 10);
    const char *reason = "signal";
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++) {
        if (fatal_signals[i].sig == sig)
            reason = fatal_signals[i].reason;
    }
    lb_runtime_finish(reason);
    raise(sig);
}

static void install_fatal_handlers(void)
{
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++) {
        struct sigaction old;
        if (sigaction(fatal_signals[i].sig, NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
            (old.sa_flags & SA_SIGINFO))
            continue; /* the program (or its parent, via SIG_IGN) decides */
        struct sigaction sa = { 0 };
        sa.sa_handler = on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        sigaction(fatal_signals[i].sig, &sa, NULL);
    }
}

static void before_fork(void)
{
    lb_mon_fork_prepare();
    lb_arena_fork_prepare();
}

static void after_fork_parent(void)
{
    lb_arena_fork_done();
    lb_mon_fork_parent();
}

static void after_fork_child(void)
{
    lb_arena_fork_done();
    lb_mon_fork_child();
    lb_thread_t *self = lb_self;
    if (!self || __atomic_load_n(&lb_runtime_phase, __ATOMIC_ACQUIRE) != LB_PHASE_RUNNING)
        return;
    /* The sampler first: it closes the events inherited from the other
     * threads, which it finds through the registry about to be pruned. */
    lb_sampler_after_fork_child(self);
    lb_thread_after_fork_child(self);
    lb_undirected_after_fork();
    choose_output_path(true);
}

void lb_runtime_start(void)
{
    int expected = LB_PHASE_OFF;
    if (!__atomic_compare_exchange_n(&lb_runtime_phase, &expected, LB_PHASE_STARTING, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return;
    int saved_errno = errno;
    lb_real_resolve();
    lb_runtime_stamp_start();
    choose_output_path(false);
    if (lb_mon_pool_setup() != 0)
        lb_warn("cannot reserve memory for monitored locks; locks stay unmonitored");
    lb_unwind_setup();
    uintptr_t root_lo, root_hi;
    lb_thread_root_range(&root_lo, &root_hi);
    lb_unwind_set_stop_range(root_lo, root_hi);
    lb_sampler_setup();
    /* The main thread; later threads attach in the create trampoline. */
    lb_thread_attach(0, 0, 0);
    install_fatal_handlers();
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
    __atomic_store_n(&lb_runtime_phase, LB_PHASE_RUNNING, __ATOMIC_RELEASE);
    errno = saved_errno;
}

__attribute__((constructor)) static void lb_constructor(void)
{
    if (getenv("LOCKBLAME_DISABLE"))
        return;
    lb_runtime_start();
}

__attribute__((destructor)) static void lb_destructor(void)
{
    lb_runtime_finish("exit");
}
