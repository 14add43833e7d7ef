/* The runtime phase and start stamps; see phase.h. */
#include "core/phase.h"

#include <stddef.h>
#include <sys/time.h>
#include <unistd.h>

#include "common/ledger.h"
#include "util/clock.h"
#include "util/proc_numbers.h"

int lb_runtime_phase LB_FORK_WRITTEN = LB_PHASE_OFF;

static pid_t own_pid LB_FORK_WRITTEN; /* getpid() at start or fork; a vfork child differs */
static unsigned long long start_ns;
static double start_unix;

void lb_runtime_stamp_start(void)
{
    lb_clock_setup();
    start_ns = lb_now_ns();
    struct timeval tv;
    gettimeofday(&tv, NULL);
    start_unix = (double)tv.tv_sec + tv.tv_usec / 1e6;
}

unsigned long long lb_runtime_proc_start(pid_t pid)
{
    uint64_t start = lb_proc_start_known(pid);
    if (!start) {
        start = lb_proc_start_of(pid);
        lb_proc_start_keep(pid, start);
    }
    return start;
}

void lb_runtime_stamp_pid(void)
{
    __atomic_store_n(&own_pid, lb_own_pid(), __ATOMIC_RELAXED); /* stamped just before */
}

pid_t lb_runtime_pid(void)
{
    return __atomic_load_n(&own_pid, __ATOMIC_RELAXED);
}

unsigned long long lb_runtime_start_ns(void)
{
    return start_ns;
}

double lb_runtime_start_unix(void)
{
    return start_unix;
}
