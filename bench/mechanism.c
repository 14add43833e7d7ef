/* The sampling mechanisms alone, without lockblame: the reference that
 * tells a mechanism's own cost on a machine (the kernel's timer or perf
 * event, its signals) from the cost of what lockblame does around it.
 * Preloaded like lockblame; every thread (the main one and each one
 * pthread_create starts) gets the chosen mechanism, delivering
 * SIGRTMIN+5 to a handler that only counts (perf: and re-arms).
 *
 *   MECHANISM=timer       timer_create(CLOCK_THREAD_CPUTIME_ID): user and
 *                         kernel time, what lockblame uses without a PMU
 *   MECHANISM=timer-user  the thread's user-time clock (CPUCLOCK_VIRT)
 *   MECHANISM=task-clock  a perf task-clock event, user time, signalled
 *                         through F_SETSIG with PERF_EVENT_IOC_REFRESH 1
 *   unset or other        nothing: a bare pthread_create interposer
 *   MECHANISM_NS          the period, ns (default 1000000)
 *   MECHANISM_REPORT=1    at exit, "mechanism: N signals" on stderr
 *
 * Used as a bench/scale.sh variant, e.g.
 *   SCALE_VARIANTS='default mtimer:LIB=build/bench/libmechanism.so,MECHANISM=timer'
 * On 16 cores (docs/PERFORMANCE.md, "Scaling to 16 cores") the timer alone cost
 * nothing on the task queue, while task-clock alone made it run faster
 * than natively on that machine. Built as $(BUILD)/bench/libmechanism.so;
 * never part of lockblame. */
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum mechanism {
    NONE,
    TIMER,
    TIMER_USER,
    TASK_CLOCK
};

static enum mechanism chosen;
static long period_ns = 1000000;
static __thread int perf_fd = -1;
static volatile unsigned long signals_seen;

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static create_fn next_create;

static void on_signal(int signo, siginfo_t *info, void *uc)
{
    (void)signo, (void)info, (void)uc;
    signals_seen++;
    if (chosen == TASK_CLOCK && perf_fd >= 0)
        ioctl(perf_fd, PERF_EVENT_IOC_REFRESH, 1);
}

static void complain(const char *what)
{
    ssize_t n = write(2, what, strlen(what));
    (void)n;
}

static void arm_timer(pid_t tid)
{
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGRTMIN + 5;
    sev._sigev_un._tid = tid;
    /* Linux's per-thread CPU clock ids: (~tid << 3) | 4 (per thread) | 1
     * (VIRT: user time) */
    clockid_t clock =
        chosen == TIMER ? CLOCK_THREAD_CPUTIME_ID : (clockid_t)((~(unsigned)tid << 3) | 4 | 1);
    timer_t timer;
    if (timer_create(clock, &sev, &timer) != 0) {
        complain("mechanism: timer_create failed\n");
        return;
    }
    struct timespec every = { period_ns / 1000000000, period_ns % 1000000000 };
    struct itimerspec its = { every, every };
    timer_settime(timer, 0, &its, NULL);
}

static void arm_task_clock(pid_t tid)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_TASK_CLOCK;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attr.wakeup_events = 1;
    attr.sample_period = (unsigned long)period_ns;
    int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
    if (fd < 0) {
        complain("mechanism: perf_event_open failed\n");
        return;
    }
    struct f_owner_ex owner = { F_OWNER_TID, tid };
    fcntl(fd, F_SETSIG, SIGRTMIN + 5);
    fcntl(fd, F_SETOWN_EX, &owner);
    fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK);
    perf_fd = fd;
    ioctl(fd, PERF_EVENT_IOC_REFRESH, 1);
}

static void arm_this_thread(void)
{
    pid_t tid = gettid();
    if (chosen == TIMER || chosen == TIMER_USER)
        arm_timer(tid);
    else if (chosen == TASK_CLOCK)
        arm_task_clock(tid);
}

struct start {
    void *(*routine)(void *);
    void *arg;
};

static void *started(void *p)
{
    struct start s = *(struct start *)p;
    free(p);
    arm_this_thread();
    return s.routine(s.arg);
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*routine)(void *),
                   void *arg)
{
    struct start *s = chosen == NONE ? NULL : malloc(sizeof *s);
    if (!s)
        return next_create(thread, attr, routine, arg);
    *s = (struct start){ routine, arg };
    int rc = next_create(thread, attr, started, s);
    if (rc != 0)
        free(s);
    return rc;
}

__attribute__((constructor)) static void setup(void)
{
    next_create = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
    const char *m = getenv("MECHANISM"), *ns = getenv("MECHANISM_NS");
    if (ns && atol(ns) > 0)
        period_ns = atol(ns);
    chosen = !m                             ? NONE
             : strcmp(m, "timer") == 0      ? TIMER
             : strcmp(m, "timer-user") == 0 ? TIMER_USER
             : strcmp(m, "task-clock") == 0 ? TASK_CLOCK
                                            : NONE;
    if (chosen == NONE)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGRTMIN + 5, &sa, NULL);
    arm_this_thread();
}

__attribute__((destructor)) static void report(void)
{
    const char *want = getenv("MECHANISM_REPORT");
    if (!want || strcmp(want, "1") != 0)
        return;
    char line[64];
    int n = snprintf(line, sizeof line, "mechanism: %lu signals\n", signals_seen);
    if (n > 0)
        complain(line);
}
