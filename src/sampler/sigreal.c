/* libc's signal functions, past lockblame's exported wrappers of the same
 * names (src/interpose/signals.c): internal calls to sigaction() from this
 * library would otherwise bind to our own export and come back through the
 * wrapper. Resolved lazily (util/next_symbol.h): the program may call
 * sigaction before our constructor runs. dlsym never calls these itself,
 * so resolution cannot recurse. */
#include <errno.h>
#include <signal.h>

#include "sampler/backend.h"
#include "sampler/sigreal.h"
#include "util/next_symbol.h"

typedef int (*lb_sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef int (*lb_sigmask_fn)(int, const sigset_t *, sigset_t *);
typedef sighandler_t (*lb_signal_fn)(int, sighandler_t);

LB_NEXT_SYMBOL(lb_sigaction_real, "sigaction");
LB_NEXT_SYMBOL(lb_pthread_sigmask_real, "pthread_sigmask");
LB_NEXT_SYMBOL(lb_sigprocmask_real, "sigprocmask");
LB_NEXT_SYMBOL(lb_signal_real, "signal");
LB_NEXT_SYMBOL(lb_sigset_real, "sigset");

int lb_real_sigaction(int signo, const struct sigaction *act, struct sigaction *old)
{
    lb_sigaction_fn f = (lb_sigaction_fn)lb_next_symbol(&lb_sigaction_real);
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    return f(signo, act, old);
}

/* pthread_sigmask returns an error number (not -1/errno). */
int lb_real_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    lb_sigmask_fn f = (lb_sigmask_fn)lb_next_symbol(&lb_pthread_sigmask_real);
    return f ? f(how, set, old) : ENOSYS;
}

int lb_real_sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    lb_sigmask_fn f = (lb_sigmask_fn)lb_next_symbol(&lb_sigprocmask_real);
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    return f(how, set, old);
}

/* signal() and sigset() have one shape; SIG_ERR with ENOSYS if the real
 * function cannot be found. */
static sighandler_t call_signal_like(lb_next_symbol_t *entry, int signo, sighandler_t disp)
{
    lb_signal_fn f = (lb_signal_fn)lb_next_symbol(entry);
    if (!f) {
        errno = ENOSYS;
        return SIG_ERR;
    }
    return f(signo, disp);
}

sighandler_t lb_real_signal(int signo, sighandler_t handler)
{
    return call_signal_like(&lb_signal_real, signo, handler);
}

sighandler_t lb_real_sigset(int signo, sighandler_t disp)
{
    return call_signal_like(&lb_sigset_real, signo, disp);
}
