/* The fatal signals lockblame catches to write its profile before the
 * process dies of them (SIGINT, SIGTERM, SIGABRT, SIGSEGV, SIGBUS,
 * SIGILL, SIGFPE with the default action), and how the program's own
 * signal calls see them: as natively, at their default action. See
 * fatal_signals.c. */
#ifndef LB_INTERPOSE_FATAL_SIGNALS_H
#define LB_INTERPOSE_FATAL_SIGNALS_H
#include <signal.h>
#include <stdbool.h>

/* Is lockblame's handler installed for signo (the program has not set a
 * disposition of its own since)? */
bool lb_fatal_signal_caught(int signo);
/* The program's sigaction, signal and sigset on a signal lockblame
 * catches: each reports the default action as the previous disposition,
 * and a new disposition (anything but a query, or sigset's SIG_HOLD)
 * replaces lockblame's handler for good. Return values and errno are
 * libc's. */
int lb_fatal_sigaction(int signo, const struct sigaction *act, struct sigaction *old);
sighandler_t lb_fatal_signal(int signo, sighandler_t handler);
sighandler_t lb_fatal_sigset(int signo, sighandler_t disp);
#endif
