/* The TSC-scaled monotonic clock: eligibility and calibration (clock.h). */
#include "util/clock.h"

#include <cpuid.h>
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>

#include "util/raw_syscall.h"
#include "util/read_head.h"

#define LB_TSC_CALIBRATE_NS 50000000ull /* 50 ms: the scale to ~1e-6 */

struct lb_tsc lb_tsc;

enum {
    TSC_NEVER = -1,
    TSC_IDLE = 0,
    TSC_READY = 1,
    TSC_CALIBRATING = 2,
    TSC_MEASURING = 3
};

/* The calibration's first reading (TSC_MEASURING), taken at setup. */
static uint64_t start_tsc, start_ns;

/* Under kvm-clock, the vDSO's clock_gettime is the host's pvclock
 * arithmetic on the TSC only while the host marks the guest's TSC stable
 * (one rate, and the same count on every vCPU); otherwise it makes the
 * system call. So a vDSO read far cheaper than the system call itself
 * says that the kernel's own time is a linear function of the TSC, and
 * lb_now_ns may scale the TSC as where the clocksource is "tsc". Told
 * apart by cost in TSC ticks, the cheapest of a few of each: a vDSO that
 * makes the call costs at least the call, so the test never says yes
 * wrongly; a no (a machine where both cost about the same) only keeps
 * clock_gettime. On the 2-vCPU Firecracker VM: ~105 ticks against
 * ~2,500. */
static bool vdso_reads_tsc(void)
{
    uint64_t vdso = UINT64_MAX, call = UINT64_MAX;
    struct timespec ts;
    for (int i = 0; i < 8; i++) {
        uint64_t t0 = __rdtsc();
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t t1 = __rdtsc();
        lb_raw_syscall(SYS_clock_gettime, CLOCK_MONOTONIC, (long)&ts, 0, 0, 0, 0);
        uint64_t t2 = __rdtsc();
        vdso = t1 - t0 < vdso ? t1 - t0 : vdso;
        call = t2 - t1 < call ? t2 - t1 : call;
    }
    return vdso * 4 < call;
}

/* The kernel keeps time by the TSC (clocksource "tsc", or "kvm-clock"
 * whose vDSO reads the TSC: vdso_reads_tsc), and the TSC ticks at one
 * rate in every power state (CPUID 0x80000007 EDX bit 8, "invariant
 * TSC": the kernel's constant_tsc and nonstop_tsc flags). CPUID, not
 * /proc/cpuinfo: every exec'd process asks, and the kernel formats that
 * file for every CPU. */
static bool tsc_eligible(void)
{
    char buf[64];
    int saved_errno = errno; /* asked from any clock read, inside the program's calls */
    long got = lb_read_head("/sys/devices/system/clocksource/clocksource0/current_clocksource", buf,
                            sizeof buf);
    errno = saved_errno;
    if (got < 0)
        return false;
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx) || !(edx & (1u << 8)))
        return false;
    if (strcmp(buf, "tsc\n") == 0)
        return true;
    return strcmp(buf, "kvm-clock\n") == 0 && vdso_reads_tsc();
}

/* One (TSC, CLOCK_MONOTONIC) pair for the calibration: the TSC read on
 * both sides of the clock read, of a few tries the one whose two TSC reads
 * lie closest (a preemption or an interrupt between them put the scale
 * off by microseconds over the 50 ms: unit/util_clock failed once under
 * a loaded make check), the TSC taken as their middle. */
static void paired_read(uint64_t *tsc, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t t0 = __rdtsc();
        uint64_t now = lb_monotonic_ns();
        uint64_t t1 = __rdtsc();
        if (t1 >= t0 && t1 - t0 < best) {
            best = t1 - t0;
            *tsc = t0 + (t1 - t0) / 2;
            *ns = now;
        }
    }
    if (best == UINT64_MAX) { /* (a counter that went backwards: caught by the caller) */
        *ns = lb_monotonic_ns();
        *tsc = __rdtsc();
    }
}

/* Whether the TSC may be used is asked only when the calibration is due:
 * a process that ends within LB_TSC_CALIBRATE_NS never uses the TSC, and
 * the question costs a file of sysfs read and a CPUID (which a VM's
 * hypervisor answers: tens of microseconds nested), paid by every exec'd
 * image at its start where it was asked there. A process that cannot
 * read the file by then (one that chroots or filters its own system
 * calls early) keeps clock_gettime, as where the TSC is not eligible. */
void lb_clock_setup(void)
{
    if (__atomic_load_n(&lb_tsc.ready, __ATOMIC_RELAXED) != TSC_IDLE)
        return;
    paired_read(&start_tsc, &start_ns);
    __atomic_store_n(&lb_tsc.ready, TSC_MEASURING, __ATOMIC_RELEASE);
}

uint64_t lb_clock_slow_ns(void)
{
    uint64_t now = lb_monotonic_ns();
    int state = TSC_MEASURING;
    if (__atomic_load_n(&lb_tsc.ready, __ATOMIC_ACQUIRE) != TSC_MEASURING ||
        now - start_ns < LB_TSC_CALIBRATE_NS ||
        !__atomic_compare_exchange_n(&lb_tsc.ready, &state, TSC_CALIBRATING, false,
                                     __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        return now;
    if (!tsc_eligible()) {
        __atomic_store_n(&lb_tsc.ready, TSC_NEVER, __ATOMIC_RELEASE);
        return now;
    }
    uint64_t tsc;
    paired_read(&tsc, &now);
    if (tsc <= start_tsc) { /* not a usable counter after all */
        __atomic_store_n(&lb_tsc.ready, TSC_NEVER, __ATOMIC_RELEASE);
        return now;
    }
    lb_tsc.mult = (uint64_t)((((unsigned __int128)(now - start_ns)) << 32) / (tsc - start_tsc));
    lb_tsc.base_tsc = tsc;
    lb_tsc.base_ns = now;
    __atomic_store_n(&lb_tsc.ready, TSC_READY, __ATOMIC_RELEASE);
    return now;
}

void lb_clock_fork_child(void)
{
    /* another thread of the parent was calibrating: the child's first
     * reading is still good, and its own calibration is due again (a
     * store only then: it would copy the page the child shares) */
    if (__atomic_load_n(&lb_tsc.ready, __ATOMIC_RELAXED) == TSC_CALIBRATING)
        __atomic_store_n(&lb_tsc.ready, TSC_MEASURING, __ATOMIC_RELAXED);
}

void lb_clock_settle(void)
{
    if (__atomic_load_n(&lb_tsc.ready, __ATOMIC_ACQUIRE) == TSC_MEASURING)
        (void)lb_clock_slow_ns();
}
