/* Fatal signals: write the profile, then die of the signal.
 *
 * Each of SIGINT, SIGTERM, SIGABRT and the faults (SIGSEGV, SIGBUS,
 * SIGILL, SIGFPE) whose action is the default gets lockblame's handler:
 * at start, and again whenever the program sets the default action
 * itself (a program that resets inherited dispositions, or one that
 * restores the default after a phase of its own). A disposition the
 * program (or its parent, through SIG_IGN) chose stays as it is. The
 * handler writes the profile and re-raises the signal with the default
 * action. Writing is not async-signal-safe; an alarm bounds a deadlock (a
 * signal that interrupted malloc, or an abort from inside malloc) to a few
 * seconds, after which the process dies of SIGALRM. For SIGABRT and the
 * faults this is best effort: the program is already failing. A fault
 * re-raised while its handler runs stays pending (it is blocked) and kills
 * the process on return; a real fault also recurs when the instruction is
 * retried.
 *
 * The handler is lockblame's, not the program's: the program's sigaction,
 * signal and sigset see the default action for these signals (with the
 * mask and flags the program gave it, if it set it), as they would
 * natively, and a disposition other than the default replaces the
 * handler (the profile is then written at exit, as usual). A program that
 * installs its handler only where the default is in force (Rust's runtime
 * does so for SIGSEGV and SIGBUS, to report stack overflows) behaves as
 * without lockblame.
 *
 * Invariants: a signal's bit in `caught` is set only while lockblame's
 * handler is installed for it, and `shown` then holds what the program
 * sees. Two threads setting one signal's disposition at once may leave
 * `shown` with either's mask (the kernel would keep one of them too). */
#include "interpose/fatal_signals.h"

#include <stdint.h>
#include <unistd.h>

#include "core/hooks.h"
#include "core/phase.h"
#include "core/runtime.h"
#include "sampler/sigreal.h"
#include "util/common.h"
#include "util/kernel_sigmask.h"

#define FATAL_SIGNALS 7
static const struct {
    int sig;
    const char *reason;
} fatal_signals[FATAL_SIGNALS] = {
    { SIGINT, "signal SIGINT" },   { SIGTERM, "signal SIGTERM" }, { SIGABRT, "signal SIGABRT" },
    { SIGSEGV, "signal SIGSEGV" }, { SIGBUS, "signal SIGBUS" },   { SIGILL, "signal SIGILL" },
    { SIGFPE, "signal SIGFPE" },
};

/* bit (sig - 1): lockblame's handler is in place; a fork child's program
 * sets handlers of its own (util/common.h) */
static uint64_t caught LB_FORK_WRITTEN;
static struct sigaction shown[FATAL_SIGNALS]; /* what the program sees meanwhile */

static int index_of(int signo)
{
    for (int i = 0; i < FATAL_SIGNALS; i++) {
        if (fatal_signals[i].sig == signo)
            return i;
    }
    return -1;
}

static bool is_caught(int signo)
{
    return (__atomic_load_n(&caught, __ATOMIC_ACQUIRE) & lb_sig_bit(signo)) != 0;
}

bool lb_fatal_signal_watched(int signo)
{
    return is_caught(signo) || (index_of(signo) >= 0 && lb_runtime_monitoring());
}

static void given_up(int signo)
{
    __atomic_and_fetch(&caught, ~lb_sig_bit(signo), __ATOMIC_ACQ_REL);
}

static void on_fatal_signal(int sig)
{
    if (!lb_runtime_is_own_process()) {
        /* a vfork child, in its parent's memory (its dispositions its
         * own): it dies as it would natively, and leaves the parent's
         * state, its profile included, alone */
        lb_real_signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    given_up(sig);
    lb_real_signal(sig, SIG_DFL);
    lb_real_signal(SIGALRM, SIG_DFL);
    alarm(sig == SIGINT || sig == SIGTERM ? 10 : 3);
    int i = index_of(sig);
    lb_runtime_finish(i >= 0 ? fatal_signals[i].reason : "signal");
    raise(sig);
}

/* Put lockblame's handler on signo (whose action is the default now),
 * showing the program `view`. 0, or -1 with errno. */
static int catch (int signo, const struct sigaction *view)
{
    struct sigaction sa = { 0 };
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    shown[index_of(signo)] = *view;
    if (lb_real_sigaction(signo, &sa, NULL) != 0)
        return -1;
    __atomic_or_fetch(&caught, lb_sig_bit(signo), __ATOMIC_ACQ_REL);
    return 0;
}

/* Catch signo if its action is the default now, showing the program
 * exactly what the kernel holds (its mask and flags included); any other
 * disposition is the program's (or its parent's, through SIG_IGN). */
static void catch_if_default(int signo)
{
    struct sigaction view;
    if (lb_real_sigaction(signo, NULL, &view) == 0 && view.sa_handler == SIG_DFL &&
        !(view.sa_flags & SA_SIGINFO))
        catch (signo, &view);
}

static void install(void)
{
    for (int i = 0; i < FATAL_SIGNALS; i++)
        catch_if_default(fatal_signals[i].sig);
}

/* The program has just set signo's disposition: lockblame's handler is
 * no longer installed, and goes back if that disposition is the default. */
static void program_set(int signo)
{
    given_up(signo);
    if (lb_runtime_monitoring())
        catch_if_default(signo);
}

int lb_fatal_sigaction(int signo, const struct sigaction *act, struct sigaction *old)
{
    bool was = is_caught(signo);
    struct sigaction before;
    if (was)
        before = shown[index_of(signo)];
    int rc = lb_real_sigaction(signo, act, was || !old ? NULL : &before);
    if (rc != 0)
        return rc;
    if (act)
        program_set(signo);
    if (old)
        *old = before;
    return 0;
}

sighandler_t lb_fatal_signal(int signo, sighandler_t handler)
{
    bool was = is_caught(signo);
    sighandler_t prev = lb_real_signal(signo, handler);
    if (prev == SIG_ERR)
        return prev;
    program_set(signo);
    return was ? SIG_DFL : prev;
}

sighandler_t lb_fatal_sigset(int signo, sighandler_t disp)
{
    sighandler_t prev = lb_real_sigset(signo, disp);
    if (prev == SIG_ERR)
        return prev;
    if (disp != SIG_HOLD)
        program_set(signo);
    return prev == on_fatal_signal ? SIG_DFL : prev;
}

LB_PROCESS_HOOKS(fatal_signal_hooks) = {
    .rank = LB_RANK_INTERPOSE,
    .setup = install,
};
