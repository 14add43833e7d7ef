/* The dispositions of the signals lockblame catches to write its profile
 * before the process dies (SIGINT, SIGTERM, SIGABRT, SIGSEGV, SIGBUS,
 * SIGILL, SIGFPE) are the program's to see: sigaction, signal and sigset
 * report the default action, as natively, and a program that installs
 * its own handler only where the default is in force (Rust's runtime does
 * so for SIGSEGV and SIGBUS, to report stack overflows) gets it, and its
 * handler runs on the fault. Exits 0 from that handler. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *disposition(sighandler_t h)
{
    return h == SIG_DFL ? "default" : h == SIG_IGN ? "ignore" : "a handler";
}

static void on_segv(int sig)
{
    static const char msg[] = "the program's own SIGSEGV handler ran\n";
    (void)sig;
    ssize_t rc = write(1, msg, sizeof msg - 1);
    _exit(rc == (ssize_t)(sizeof msg - 1) ? 0 : 1);
}

int main(void)
{
    static const int fatal[] = { SIGINT, SIGTERM, SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE };
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
        struct sigaction old;
        memset(&old, 0xff, sizeof old);
        if (sigaction(fatal[i], NULL, &old) != 0)
            perror("sigaction");
        int blocked = 0;
        for (int s = 1; s < NSIG; s++)
            blocked += sigismember(&old.sa_mask, s) == 1;
        printf("%s: %s, flags %#x, %d signals masked\n", strsignal(fatal[i]),
               disposition(old.sa_handler), (unsigned)old.sa_flags, blocked);
    }
    printf("signal(SIGTERM, SIG_IGN) replaced %s\n", disposition(signal(SIGTERM, SIG_IGN)));
    printf("signal(SIGTERM, SIG_DFL) replaced %s\n", disposition(signal(SIGTERM, SIG_DFL)));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* sigset: still in use */
    printf("sigset(SIGFPE, SIG_DFL) replaced %s\n", disposition(sigset(SIGFPE, SIG_DFL)));
#pragma GCC diagnostic pop

    struct sigaction old;
    if (sigaction(SIGSEGV, NULL, &old) == 0 && old.sa_handler == SIG_DFL) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_segv;
        sigaction(SIGSEGV, &sa, NULL);
        printf("installed a SIGSEGV handler: the default was in force\n");
    } else {
        printf("left SIGSEGV alone: %s was in force\n", disposition(old.sa_handler));
    }
    fflush(stdout);
    volatile int *volatile nowhere = (volatile int *)(uintptr_t)8;
    *nowhere = 1; /* a fault */
    printf("the fault returned\n");
    return 2;
}
