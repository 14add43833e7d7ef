/* Exported signal functions: the program's use of the sampling signal
 * (docs/DESIGN.md "The program's signals"). Each forwards to libc unchanged unless
 * the call concerns the signal lockblame samples on; the logic is in
 * src/sampler (sigconflict.c, sampler.c), or a fatal signal lockblame
 * catches to write its profile, whose disposition the program sees as the
 * default (fatal_signals.c). Return values and errno are
 * libc's own: lockblame's part runs before (moving the signal away) or
 * after a successful call (pausing sampling), and preserves errno. */
#include <signal.h>

#include "core/thread.h"
#include "interpose/fatal_signals.h"
#include "sampler/sampler.h"
#include "sampler/sigreal.h"
#include "util/common.h"

LB_EXPORT int sigaction(int signo, const struct sigaction *act, struct sigaction *old)
{
    if (lb_unlikely(lb_fatal_signal_watched(signo)))
        return lb_fatal_sigaction(signo, act, old);
    int ours = lb_sampler_signal_now();
    if (lb_likely(!ours || signo != ours))
        return lb_real_sigaction(signo, act, old);
    if (!act || lb_sampler_default_kept(act->sa_handler, act->sa_flags)) {
        if (old)
            lb_sampler_program_view(signo, old);
        return 0;
    }
    lb_sampler_release_signal(signo);
    return lb_real_sigaction(signo, act, old);
}

LB_EXPORT sighandler_t signal(int signo, sighandler_t handler)
{
    if (lb_unlikely(lb_fatal_signal_watched(signo)))
        return lb_fatal_signal(signo, handler);
    int ours = lb_sampler_signal_now();
    if (ours && signo == ours) {
        if (lb_sampler_default_kept(handler, 0))
            return SIG_DFL; /* the program's view, unchanged */
        lb_sampler_release_signal(signo);
    }
    return lb_real_signal(signo, handler);
}

LB_EXPORT sighandler_t sigset(int signo, sighandler_t disp)
{
    if (lb_unlikely(lb_fatal_signal_watched(signo)))
        return lb_fatal_sigset(signo, disp);
    int ours = lb_sampler_signal_now();
    if (ours && signo == ours && disp != SIG_HOLD)
        lb_sampler_release_signal(signo); /* (sigset also unblocks: the real call does) */
    sighandler_t rc = lb_real_sigset(signo, disp);
    if (ours && signo == ours && disp == SIG_HOLD)
        lb_sampler_mask_reread(lb_self);
    return rc;
}

/* Both mask calls: the real call, then the sampler learns whether the
 * sampling signal became blocked or unblocked for this thread. Returns what
 * the real call returned (sigprocmask: 0/-1 with errno; pthread_sigmask: an
 * error number), with *old filled as the real call would. */
static int forward_mask(int (*real)(int, const sigset_t *, sigset_t *), int how,
                        const sigset_t *set, sigset_t *old)
{
    if (!set || !lb_self)
        return real(how, set, old);
    sigset_t want = *set, was;
    int rc = real(how, set, &was);
    if (rc == 0) {
        if (old)
            *old = was;
        lb_sampler_mask_changed(lb_self, how, &want, &was);
    }
    return rc;
}

LB_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    return forward_mask(lb_real_sigprocmask, how, set, old);
}

LB_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    return forward_mask(lb_real_sigmask, how, set, old);
}
