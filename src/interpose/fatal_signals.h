/* The fatal signals lockblame catches to write its profile before the
 * process dies of them (SIGINT, SIGTERM, SIGABRT, SIGSEGV, SIGBUS,
 * SIGILL, SIGFPE with the default action), and how the program's own
 * signal calls see them: as natively, at their default action. See
 * fatal_signals.c. */
#ifndef LB_INTERPOSE_FATAL_SIGNALS_H
#define LB_INTERPOSE_FATAL_SIGNALS_H
#include <signal.h>
#include <stdbool.h>

/* Does lockblame catch signo, or would it if the program set the
 * default action on it (one of the fatal signals, lockblame running)? */
bool lb_fatal_signal_watched(int signo);
/* The program's sigaction, signal and sigset on such a signal: while
 * lockblame's handler is installed each reports what the program set
 * (the default action), and a new disposition replaces the handler,
 * unless it is the default action again. Return values and errno are
 * libc's. */
int lb_fatal_sigaction(int signo, const struct sigaction *act, struct sigaction *old);
sighandler_t lb_fatal_signal(int signo, sighandler_t handler);
sighandler_t lb_fatal_sigset(int signo, sighandler_t disp);
#endif
