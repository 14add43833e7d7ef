/* The TSC-scaled monotonic clock: eligibility and calibration (clock.h). */
#include "util/clock.h"

#include <cpuid.h>
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>

#include "util/raw_syscall.h"
#include "util/read_head.h"

#define LB_TSC_CALIBRATE_NS  50000000ull  /* 50 ms: the scale to ~1e-6 */
#define LB_TSC_VERIFY_NS     100000000ull /* the scaled TSC checked at most every 100 ms */
#define LB_TSC_PACE_SLACK_NS 200000ull    /* and allowed 200 us off, plus 1000 ppm */
#define LB_TSC_TAKEOVER      16u /* intervals overdue before a stuck verification is taken over */

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

/* Added to clock_gettime once a verification dropped the scaled TSC: the
 * scaled time's lead then, so that lb_now_ns never steps back (callers
 * difference its values unchecked). */
static uint64_t fallback_offset_ns;

/* The last verification's CLOCK_MONOTONIC reading (its TSC reading is
 * lb_tsc.verified_tsc, which lb_now_ns compares), and whether a thread is
 * verifying now. */
static struct {
    uint64_t ns;
    uint32_t busy;
} verified;

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
    long got = lb_read_head("/sys/devices/system/clocksource/clocksource0/current_clocksource", buf,
                            sizeof buf);
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
    uint64_t now = lb_monotonic_ns() + __atomic_load_n(&fallback_offset_ns, __ATOMIC_RELAXED);
    int state = TSC_MEASURING;
    if (__atomic_load_n(&lb_tsc.ready, __ATOMIC_ACQUIRE) != TSC_MEASURING ||
        now - start_ns < LB_TSC_CALIBRATE_NS ||
        !__atomic_compare_exchange_n(&lb_tsc.ready, &state, TSC_CALIBRATING, false,
                                     __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        return now;
    int saved_errno = errno; /* asked from any clock read, inside the program's calls */
    bool eligible = tsc_eligible();
    errno = saved_errno;
    if (!eligible) {
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
    lb_tsc.verify_ticks =
        lb_tsc.mult ? (uint64_t)(((unsigned __int128)LB_TSC_VERIFY_NS << 32) / lb_tsc.mult) : 1;
    lb_tsc.verified_tsc = tsc;
    verified.ns = now;
    __atomic_store_n(&lb_tsc.ready, TSC_READY, __ATOMIC_RELEASE);
    return now;
}

/* |the scaled TSC's time from (tsc0, ns0) to (tsc1, ns1) - CLOCK_MONOTONIC's|
 * within LB_TSC_PACE_SLACK_NS plus 1000 ppm of the elapsed time (NTP
 * slews CLOCK_MONOTONIC by up to 500 ppm; the scale is the calibration's,
 * not re-read). Signed: a pair a few ns out of order is no failure. */
static bool keeps_pace(uint64_t tsc0, uint64_t ns0, uint64_t tsc1, uint64_t ns1)
{
    __int128 ticks = (__int128)tsc1 - (__int128)tsc0;
    __int128 scaled = ticks * (__int128)lb_tsc.mult / ((__int128)1 << 32);
    __int128 elapsed = (__int128)ns1 - (__int128)ns0;
    __int128 apart = scaled - elapsed;
    if (apart < 0)
        apart = -apart;
    return apart <= (__int128)LB_TSC_PACE_SLACK_NS + (elapsed < 0 ? -elapsed : elapsed) / 1000;
}

/* The latest time readers may have been given by the scaled TSC, when a
 * verification (prev_tsc, prev_ns) -> (tsc, ns) drops it: the scaled time
 * now, or, where the TSC went back since the last verification (a VM
 * moved without an offset: readers were given up to where it was before
 * the jump, and a TSC below the calibration's wraps the scaling), the
 * last verification's scaled time plus the real time since, with the
 * pace's slack. The fallback goes on from there, so that lb_now_ns never
 * steps back. */
static uint64_t handed_out_ns(uint64_t prev_tsc, uint64_t prev_ns, uint64_t tsc, uint64_t ns)
{
    uint64_t elapsed = ns > prev_ns ? ns - prev_ns : 0;
    uint64_t since_last =
        lb_tsc_scaled_ns(prev_tsc) + elapsed + elapsed / 1000 + LB_TSC_PACE_SLACK_NS;
    if (tsc < prev_tsc)
        return since_last;
    uint64_t scaled = lb_tsc_scaled_ns(tsc);
    return scaled > since_last ? scaled : since_last;
}

/* The scaled TSC against CLOCK_MONOTONIC, at most every LB_TSC_VERIFY_NS
 * (one thread at a time; the interval is read again once it holds
 * `busy`, so that a verification right after another's is not made):
 * over the interval since the last verification (a jump, or a new rate:
 * a VM restored from a snapshot or moved to another host, a host that
 * stops marking its TSC stable) and since the calibration (a drift of
 * more than 1000 ppm). A failure makes lb_now_ns clock_gettime for the
 * rest of the process, plus the offset that keeps it from stepping back
 * (fallback_offset_ns). */
void lb_clock_verify(void)
{
    if (__atomic_load_n(&lb_tsc.ready, __ATOMIC_ACQUIRE) != TSC_READY)
        return;
    uint64_t overdue = __rdtsc() - __atomic_load_n(&lb_tsc.verified_tsc, __ATOMIC_RELAXED);
    if (overdue < lb_tsc.verify_ticks)
        return;
    /* busy is read before it is taken: every clock read of the process
     * comes here while one thread verifies. A verification that never
     * finished (its thread cancelled, or a program's signal handler that
     * jumped out of the call it interrupted) leaves busy set: once
     * LB_TSC_TAKEOVER intervals overdue, another thread takes over, so
     * that clock reads do not stay on this path. (Two that take over at
     * once may write mismatched pairs: the next verification then drops
     * the TSC, the safe side.) */
    if ((__atomic_load_n(&verified.busy, __ATOMIC_RELAXED) ||
         __atomic_exchange_n(&verified.busy, 1, __ATOMIC_ACQUIRE)) &&
        overdue / LB_TSC_TAKEOVER < lb_tsc.verify_ticks)
        return;
    uint64_t prev_tsc = __atomic_load_n(&lb_tsc.verified_tsc, __ATOMIC_RELAXED);
    uint64_t prev_ns = __atomic_load_n(&verified.ns, __ATOMIC_RELAXED);
    if (__rdtsc() - prev_tsc < lb_tsc.verify_ticks) { /* another verified meanwhile */
        __atomic_store_n(&verified.busy, 0, __ATOMIC_RELEASE);
        return;
    }
    int saved_errno = errno;
    uint64_t tsc, ns;
    paired_read(&tsc, &ns);
    if (!keeps_pace(prev_tsc, prev_ns, tsc, ns) ||
        !keeps_pace(lb_tsc.base_tsc, lb_tsc.base_ns, tsc, ns)) {
        uint64_t lead = handed_out_ns(prev_tsc, prev_ns, tsc, ns);
        __atomic_store_n(&fallback_offset_ns, lead > ns ? lead - ns : 0, __ATOMIC_RELAXED);
        __atomic_store_n(&lb_tsc.ready, TSC_NEVER, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&verified.ns, ns, __ATOMIC_RELAXED);
    __atomic_store_n(&lb_tsc.verified_tsc, tsc, __ATOMIC_RELAXED);
    __atomic_store_n(&verified.busy, 0, __ATOMIC_RELEASE);
    errno = saved_errno;
}

uint64_t lb_clock_verified_ns(void)
{
    lb_clock_verify();
    if (lb_likely(__atomic_load_n(&lb_tsc.ready, __ATOMIC_ACQUIRE) == TSC_READY))
        return lb_tsc_scaled_ns(__rdtsc());
    return lb_clock_slow_ns();
}

void lb_clock_fork_child(void)
{
    /* another thread of the parent was calibrating: the child's first
     * reading is still good, and its own calibration is due again (a
     * store only then: it would copy the page the child shares) */
    if (__atomic_load_n(&lb_tsc.ready, __ATOMIC_RELAXED) == TSC_CALIBRATING)
        __atomic_store_n(&lb_tsc.ready, TSC_MEASURING, __ATOMIC_RELAXED);
    if (__atomic_load_n(&verified.busy, __ATOMIC_RELAXED)) { /* another thread was verifying: */
        paired_read(&lb_tsc.verified_tsc, &verified.ns);     /* its pair may be half written */
        __atomic_store_n(&verified.busy, 0, __ATOMIC_RELAXED);
    }
}

void lb_clock_settle(void)
{
    if (__atomic_load_n(&lb_tsc.ready, __ATOMIC_ACQUIRE) == TSC_MEASURING)
        (void)lb_clock_slow_ns();
    /* a verification due is made here, once, not by each child's first
     * clock read (a parent that forks often and reads the clock seldom:
     * make, a shell, a server forking a process per connection) */
    lb_clock_verify();
}
