/* The program's own use of the signal lockblame samples on by default
 * (docs/DESIGN.md "The program's signals"), built -O2. It checks what sigaction reports before
 * it installs anything, installs a handler for SIGRTMIN+5, and computes
 * while it sends itself SENT signals (raise and sigqueue alternately);
 * then blocks the signal, queues HELD more, collects them with sigwaitinfo
 * and unblocks. Every line it prints is its own ground truth and must
 * read the same natively and preloaded: its handler runs exactly once per
 * signal it sent, never for anyone else's. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SENT 100
#define HELD 5

static volatile sig_atomic_t handled;
static volatile sig_atomic_t foreign; /* handler calls not from this program */

static void on_signal(int signo, siginfo_t *info, void *uc)
{
    (void)signo;
    (void)uc;
    if (info->si_pid == getpid() &&
        (info->si_code == SI_TKILL || info->si_code == SI_QUEUE || info->si_code == SI_USER))
        handled++;
    else
        foreign++;
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile unsigned long sink;

static void compute_ms(int ms)
{
    unsigned long x = 88172645463325252ul;
    double start = cpu_s();
    while (cpu_s() - start < ms / 1000.0) {
        for (int i = 0; i < 20000; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        sink += x;
    }
}

int main(void)
{
    int sig = SIGRTMIN + 5;
    struct sigaction old;
    sigaction(sig, NULL, &old);
    printf("before: %s\n", (old.sa_flags & SA_SIGINFO) ? "a siginfo handler"
                           : old.sa_handler == SIG_DFL ? "SIG_DFL"
                           : old.sa_handler == SIG_IGN ? "SIG_IGN"
                                                       : "a handler");

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    int rc = sigaction(sig, &sa, &old);
    printf("install: %d, previous %s\n", rc, old.sa_handler == SIG_DFL ? "SIG_DFL" : "other");

    for (int i = 0; i < SENT; i++) {
        compute_ms(3);
        if (i % 2)
            raise(sig);
        else
            sigqueue(getpid(), sig, (union sigval){ .sival_int = i });
    }
    compute_ms(50);
    printf("handled %d of %d sent, %d from elsewhere\n", (int)handled, SENT, (int)foreign);

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_BLOCK, &set, NULL);
    for (int i = 0; i < HELD; i++)
        sigqueue(getpid(), sig, (union sigval){ .sival_int = 1000 + i });
    compute_ms(30);
    int got = 0;
    struct timespec zero = { 0, 0 };
    siginfo_t info;
    while (sigtimedwait(&set, &info, &zero) == sig)
        got += info.si_value.sival_int >= 1000;
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    printf("held %d, collected %d by sigtimedwait; handler calls now %d\n", HELD, got,
           (int)handled);

    struct sigaction now;
    sigaction(sig, NULL, &now);
    printf("after: %s\n", now.sa_sigaction == on_signal ? "our handler" : "something else");
    return handled == SENT && got == HELD && !foreign ? 0 : 1;
}
