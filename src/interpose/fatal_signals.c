/* Fatal signals: write the profile, then die of the signal.
 *
 * At start, each of SIGINT, SIGTERM, SIGABRT and the faults (SIGSEGV,
 * SIGBUS, SIGILL, SIGFPE) whose disposition is the default gets
 * lockblame's handler; one the program (or its parent, through SIG_IGN)
 * has set stays as it is. The handler writes the profile and re-raises
 * the signal with the default action. Writing is not async-signal-safe;
 * an alarm bounds a deadlock (a signal that interrupted malloc, or an
 * abort from inside malloc) to a few seconds, after which the process
 * dies of SIGALRM. For SIGABRT and the faults this is best effort: the
 * program is already failing. A fault re-raised while its handler runs
 * stays pending (it is blocked) and kills the process on return; a real
 * fault also recurs when the instruction is retried.
 *
 * The handler is lockblame's, not the program's: the program's sigaction,
 * signal and sigset report the default action for these signals, as they
 * would natively, and the first disposition the program sets replaces the
 * handler (the profile is then written at exit, as usual). A program that
 * installs its handler only where the default is in force (Rust's runtime
 * does so for SIGSEGV and SIGBUS, to report stack overflows) behaves as
 * without lockblame.
 *
 * Invariants: `caught` has a signal's bit set only while lockblame's
 * handler is installed for it and the program has not set a disposition
 * since; bits are set once, at start (before the program's main), and
 * only cleared after. */
#include "interpose/fatal_signals.h"

#include <stdint.h>
#include <unistd.h>

#include "core/hooks.h"
#include "core/runtime.h"
#include "sampler/sigreal.h"

static const struct {
    int sig;
    const char *reason;
} fatal_signals[] = {
    { SIGINT, "signal SIGINT" },
    { SIGTERM, "signal SIGTERM" },
    { SIGABRT, "signal SIGABRT" },
    { SIGSEGV, "signal SIGSEGV" },
    { SIGBUS, "signal SIGBUS" },
    { SIGILL, "signal SIGILL" },
    { SIGFPE, "signal SIGFPE" },
};

static uint64_t caught; /* bit (sig - 1): lockblame's handler is in place */

static uint64_t bit(int signo)
{
    return signo >= 1 && signo <= 64 ? (uint64_t)1 << (signo - 1) : 0;
}

bool lb_fatal_signal_caught(int signo)
{
    return (__atomic_load_n(&caught, __ATOMIC_ACQUIRE) & bit(signo)) != 0;
}

/* The program's disposition replaced lockblame's handler. */
static void given_up(int signo)
{
    __atomic_and_fetch(&caught, ~bit(signo), __ATOMIC_ACQ_REL);
}

static void on_fatal_signal(int sig)
{
    given_up(sig);
    lb_real_signal(sig, SIG_DFL);
    lb_real_signal(SIGALRM, SIG_DFL);
    alarm(sig == SIGINT || sig == SIGTERM ? 10 : 3);
    const char *reason = "signal";
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++) {
        if (fatal_signals[i].sig == sig)
            reason = fatal_signals[i].reason;
    }
    lb_runtime_finish(reason);
    raise(sig);
}

static void install(void)
{
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++) {
        int sig = fatal_signals[i].sig;
        struct sigaction old;
        if (lb_real_sigaction(sig, NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
            (old.sa_flags & SA_SIGINFO))
            continue; /* the program (or its parent, via SIG_IGN) decides */
        struct sigaction sa = { 0 };
        sa.sa_handler = on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        if (lb_real_sigaction(sig, &sa, NULL) == 0)
            __atomic_or_fetch(&caught, bit(sig), __ATOMIC_ACQ_REL);
    }
}

/* What sigaction reports for a signal at its default action. */
static void default_disposition(struct sigaction *old)
{
    *old = (struct sigaction){ 0 };
    old->sa_handler = SIG_DFL;
    sigemptyset(&old->sa_mask);
}

int lb_fatal_sigaction(int signo, const struct sigaction *act, struct sigaction *old)
{
    struct sigaction ours;
    int rc = lb_real_sigaction(signo, act, old ? &ours : NULL);
    if (rc != 0)
        return rc;
    if (act)
        given_up(signo);
    if (old && ours.sa_handler == on_fatal_signal)
        default_disposition(old);
    else if (old)
        *old = ours; /* replaced behind libc's back (a raw system call) */
    return 0;
}

sighandler_t lb_fatal_signal(int signo, sighandler_t handler)
{
    sighandler_t was = lb_real_signal(signo, handler);
    if (was == SIG_ERR)
        return was;
    given_up(signo);
    return was == on_fatal_signal ? SIG_DFL : was;
}

sighandler_t lb_fatal_sigset(int signo, sighandler_t disp)
{
    sighandler_t was = lb_real_sigset(signo, disp);
    if (was == SIG_ERR || was != on_fatal_signal)
        return was; /* SIG_HOLD: the signal was already blocked */
    if (disp != SIG_HOLD)
        given_up(signo);
    return SIG_DFL;
}

LB_PROCESS_HOOKS(fatal_signal_hooks) = {
    .rank = LB_RANK_INTERPOSE,
    .setup = install,
};
