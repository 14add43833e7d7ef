/* Work done in a periodic timer's handler, built -O2 -g as users build:
 * a SIGALRM every 4 ms (setitimer ITIMER_REAL: the kernel tick's period
 * at HZ=250), whose handler computes in alarm_work, while main computes
 * in main_work for CPU_S seconds of its CPU time (argv[1], default 1.2;
 * argv[2]: alarm_work's iterations, default 300000). The CPU-time timer's
 * samples come at the tick, in step with the alarms, and find the handler
 * always or never. Prints its own truth: the CPU time spent in the handler
 * (CLOCK_THREAD_CPUTIME_ID around alarm_work) and in total. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

static volatile unsigned long sink;
static long alarm_iterations = 300000;
static double handler_cpu;
static volatile int alarms;

static double thread_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static __attribute__((noinline)) void alarm_work(void)
{
    for (long i = 0; i < alarm_iterations; i++)
        sink += (unsigned long)i;
}

static void on_alarm(int signo)
{
    (void)signo;
    double c = thread_cpu();
    alarm_work();
    handler_cpu += thread_cpu() - c;
    alarms++;
}

static __attribute__((noinline)) void main_work(void)
{
    for (int i = 0; i < 1000; i++)
        sink += (unsigned long)i;
}

int main(int argc, char **argv)
{
    double cpu_s = argc > 1 ? atof(argv[1]) : 1.2;
    if (argc > 2)
        alarm_iterations = atol(argv[2]);
    struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval every_4ms = { { 0, 4000 }, { 0, 4000 } };
    setitimer(ITIMER_REAL, &every_4ms, NULL);
    double start = thread_cpu();
    while (thread_cpu() - start < cpu_s)
        main_work();
    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &off, NULL);
    printf("handler %.6f s of %.6f s in %d alarms\n", handler_cpu, thread_cpu() - start, alarms);
    return 0;
}
