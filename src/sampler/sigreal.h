/* libc's signal functions, bypassing lockblame's exported wrappers
 * (src/interpose/signals.c). Same contracts as libc's: sigaction and
 * sigprocmask return 0 or -1 with errno; pthread_sigmask (lb_real_sigmask)
 * returns 0 or an error number; signal/sigset return SIG_ERR on failure.
 * Each fails with ENOSYS if libc's symbol cannot be found. */
#ifndef LB_SAMPLER_SIGREAL_H
#define LB_SAMPLER_SIGREAL_H
#include <signal.h>

int lb_real_sigaction(int signo, const struct sigaction *act, struct sigaction *old);
int lb_real_sigmask(int how, const sigset_t *set, sigset_t *old);
int lb_real_sigprocmask(int how, const sigset_t *set, sigset_t *old);
sighandler_t lb_real_signal(int signo, sighandler_t handler);
sighandler_t lb_real_sigset(int signo, sighandler_t disp);
#endif
