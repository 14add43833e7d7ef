/* Virtual speedup of one release site: the accounting (whatif.h).
 *
 * Concurrency: the delay's terms (acc), the run's figures and the
 * configuration are process-wide; the configuration is written once at
 * start, before any thread but the first exists, and read-only after.
 * The delay's terms are a seqlock (acc_update, global_at); the figures
 * are atomic adds. Everything else is the calling thread's own (TLS);
 * the sampler's handler uses it only while `inside` is clear, and the
 * code below sets `inside` around every change. */
#include "core/whatif.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/whatif_progress.h"
#include "util/call_dest.h"
#include "util/clock.h"
#include "util/common.h"
#include "util/env.h"
#include "util/log.h"
#include "util/raw_syscall.h"

#define WHATIF_CALLS 64 /* call sites of the selected function, at most, of each kind */
#define WHATIF_HOLDS 16 /* locks one thread holds at once that are timed */
#define PPM          1000000u
#define SITE_CACHE   8 /* release-site answers each thread keeps (a power of 2) */

bool lb_whatif_on;

static struct {
    uint32_t speedup_ppm;          /* p, in millionths */
    uintptr_t function_start;      /* the site's function, for tail-called releases */
    uintptr_t calls[WHATIF_CALLS]; /* return addresses of its release calls */
    uint32_t ncalls;
    uintptr_t acquires[WHATIF_CALLS]; /* return addresses of its lock and wait calls */
    uint32_t nacquires;
    bool signal_site;    /* calls are signals or posts: the code before them is sped up */
    char out[PATH_MAX];  /* results file (appended to) */
    bool progress;       /* a progress point was asked for */
    int progress_errno;  /* why it cannot count (0: it counts) */
    uint64_t started_ns; /* at setup */
} config;

/* The delay every thread owes, as a function of time: holds at the site
 * that ended add p times their length (`settled`); a hold in progress
 * that began at one of the site's lock calls adds p per ns as it goes
 * (`active` of them, their start times summing to `start_sum`), so that
 * a thread that runs beside it owes its share as it runs, as in coz,
 * where delay accrues while the selected code runs. A seqlock: writers
 * (a site hold's start or end) take `writer`, readers retry while `seq`
 * is odd or changed; a thread never reads while it writes (`inside`). */
static struct {
    uint32_t seq, writer;
    uint64_t settled, active, start_sum;
} acc;

static uint64_t slept_total; /* ns: time threads really slept */
static uint64_t site_holds, site_hold_ns;

static uint64_t times_p(uint64_t ns)
{
    return (uint64_t)((unsigned __int128)ns * config.speedup_ppm / PPM);
}

static uint64_t global_at(uint64_t now)
{
    uint64_t settled, active, start_sum;
    uint32_t seq;
    do {
        seq = __atomic_load_n(&acc.seq, __ATOMIC_ACQUIRE);
        settled = __atomic_load_n(&acc.settled, __ATOMIC_RELAXED);
        active = __atomic_load_n(&acc.active, __ATOMIC_RELAXED);
        start_sum = __atomic_load_n(&acc.start_sum, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
    } while ((seq & 1) || seq != __atomic_load_n(&acc.seq, __ATOMIC_RELAXED));
    uint64_t running = active * now > start_sum ? active * now - start_sum : 0;
    return settled + times_p(running);
}

/* One change to the accrual: add `settled`, and start (+1) or end (-1)
 * a hold in progress that began at since. */
static void acc_update(uint64_t settled, int active, uint64_t since)
{
    while (__atomic_exchange_n(&acc.writer, 1, __ATOMIC_ACQUIRE))
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#else
        ;
#endif
    __atomic_store_n(&acc.seq, acc.seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&acc.settled, acc.settled + settled, __ATOMIC_RELAXED);
    __atomic_store_n(&acc.active, acc.active + (uint64_t)(int64_t)active, __ATOMIC_RELAXED);
    __atomic_store_n(&acc.start_sum, acc.start_sum + (uint64_t)(int64_t)active * since,
                     __ATOMIC_RELAXED);
    __atomic_store_n(&acc.seq, acc.seq + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&acc.writer, 0, __ATOMIC_RELEASE);
}

typedef struct {
    uint64_t local;      /* the part of the delay this thread has paid or been excused */
    uint64_t excess;     /* slept beyond what was owed: pays the next debts */
    uint64_t blocked_at; /* the delay when a blocking call began */
    uint64_t blocked_ns; /* and the time then */
    uint64_t own_active, own_start_sum; /* its own site holds in progress (not owed) */
    uint64_t segment_since;             /* its last wake, signal or post, or its start */
    uint64_t segment_slept;             /* slept paying delays since then */
    struct {
        uintptr_t ra;
        bool match;
    } site_cache[SITE_CACHE]; /* the release-site test's answers, by ra */
    bool known;               /* local is set (inherited, or taken from the delay) */
    uint32_t inside;          /* whatif code runs on this thread: the handler stays out */
    uint32_t nholds;
    struct {
        const void *lock;
        uint64_t since;
        bool accruing; /* begun at the site's lock call: in acc.active */
    } holds[WHATIF_HOLDS];
} whatif_thread_t;

static LB_TLS whatif_thread_t me;

/* Around every change to `me` (or to acc): the sampler's handler, which
 * may interrupt this thread anywhere, stays out meanwhile. The fences
 * keep the compiler from moving the changes outside. */
static inline void enter(void)
{
    me.inside++;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void leave(void)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    me.inside--;
}

/* The thread's code from now on runs up to its next signal or post: the
 * code a signal site speeds up, if that signal is the site's. */
static void begin_segment(uint64_t now)
{
    me.segment_since = now;
    me.segment_slept = 0;
}

static void ensure_known(void)
{
    if (lb_unlikely(!me.known)) {
        uint64_t now = lb_now_ns();
        me.local = global_at(now);
        me.known = true;
        begin_segment(now);
    }
}

/* Sleep ns, resuming after signals; returns the time really slept. */
static uint64_t sleep_for(uint64_t ns)
{
    int saved_errno = errno;
    uint64_t begin = lb_monotonic_ns(), now = begin;
    while (now - begin < ns) {
        uint64_t left = ns - (now - begin);
        struct timespec ts = { (time_t)(left / 1000000000u), (long)(left % 1000000000u) };
        lb_raw_syscall(SYS_nanosleep, (long)&ts, 0, 0, 0, 0, 0);
        now = lb_monotonic_ns();
    }
    errno = saved_errno;
    return now - begin;
}

/* What this thread owes now: the delay less its own holds' accrual. */
static void pay_owed(void)
{
    ensure_known();
    uint64_t now = lb_now_ns();
    uint64_t g = global_at(now);
    uint64_t own =
        me.own_active * now > me.own_start_sum ? me.own_active * now - me.own_start_sum : 0;
    g = g > times_p(own) ? g - times_p(own) : 0;
    if (g <= me.local)
        return;
    uint64_t owed = g - me.local;
    me.local = g;
    if (owed <= me.excess) {
        me.excess -= owed;
        return;
    }
    owed -= me.excess;
    uint64_t slept = sleep_for(owed);
    me.excess = slept - owed;
    me.segment_slept += slept;
    __atomic_fetch_add(&slept_total, slept, __ATOMIC_RELAXED);
}

void lb_whatif_pay(void)
{
    enter();
    pay_owed();
    leave();
}

void lb_whatif_tick(void)
{
    if (me.inside == 0)
        lb_whatif_pay();
}

void lb_whatif_block_begin(void)
{
    enter();
    pay_owed();
    me.blocked_ns = lb_now_ns();
    me.blocked_at = global_at(me.blocked_ns);
    leave();
}

void lb_whatif_block_end(bool woken)
{
    enter();
    uint64_t now = lb_now_ns();
    begin_segment(now);
    if (!woken) {
        leave();
        return;
    }
    /* The delay inserted while this thread was blocked, up to p per ns
     * blocked (one site hold at a time): a hold that did not accrue as it
     * went settles all at once when it ends, and the part of it that
     * accrued while this thread still ran is owed. */
    uint64_t g = global_at(now);
    uint64_t inserted = g > me.blocked_at ? g - me.blocked_at : 0;
    uint64_t bound = times_p(now > me.blocked_ns ? now - me.blocked_ns : 0);
    me.local += inserted < bound ? inserted : bound;
    leave();
}

static bool listed(const uintptr_t *list, uint32_t n, uintptr_t ra)
{
    for (uint32_t i = 0; i < n; i++)
        if (list[i] == ra)
            return true;
    return false;
}

void lb_whatif_acquired(const void *lock, uintptr_t ra)
{
    enter();
    if (me.nholds < WHATIF_HOLDS) {
        uint64_t now = lb_now_ns();
        bool accruing = listed(config.acquires, config.nacquires, ra);
        me.holds[me.nholds].lock = lock;
        me.holds[me.nholds].since = now;
        me.holds[me.nholds].accruing = accruing;
        me.nholds++;
        if (accruing) {
            me.own_active++;
            me.own_start_sum += now;
            acc_update(0, +1, now);
        }
    }
    leave();
}

/* End lock's newest timed hold: *accruing says whether it was in
 * acc.active (it is taken out of the thread's own sums here). Returns
 * when it began; 0 if none is timed. */
static uint64_t take_hold(const void *lock, bool *accruing)
{
    *accruing = false;
    for (uint32_t i = me.nholds; i-- > 0;) {
        if (me.holds[i].lock != lock)
            continue;
        uint64_t since = me.holds[i].since;
        *accruing = me.holds[i].accruing;
        me.holds[i] = me.holds[--me.nholds];
        if (*accruing) {
            me.own_active--;
            me.own_start_sum -= since;
        }
        return since;
    }
    return 0;
}

/* A release whose call returns to ra is the selected site: one of its
 * recorded call sites, or a tail call (`call F` just before ra, F the
 * site's function, whose release is a jump): directly, or from another
 * module through F's PLT stub or GOT slot. */
static bool is_site(uintptr_t ra)
{
    size_t slot = (ra ^ (ra >> 6)) & (SITE_CACHE - 1);
    if (me.site_cache[slot].ra == ra)
        return me.site_cache[slot].match;
    bool match = listed(config.calls, config.ncalls, ra);
    if (!match && config.function_start) {
        /* The call that returns to ra ends at ra, so the bytes before it
         * are code of the same mapping (a call of under 5 bytes at the
         * very start of a mapping aside). */
        const unsigned char *call = (const unsigned char *)ra - 5;
        int32_t rel;
        memcpy(&rel, call + 1, sizeof rel);
        match = call[0] == 0xe8 && ra + (uintptr_t)(intptr_t)rel == config.function_start;
        /* Elsewhere the call went through a stub or a slot: read with
         * checks, where nothing is sure to be mapped. */
        if (!match)
            match = lb_through_plt(NULL, lb_call_dest(NULL, ra)) == config.function_start;
    }
    me.site_cache[slot].ra = ra;
    me.site_cache[slot].match = match;
    return match;
}

/* One run of the site's code: p times its length is every other thread's
 * delay and not this thread's, as a hold's that ends at the site. */
static void site_code_ran(uint64_t ns)
{
    acc_update(times_p(ns), 0, 0);
    me.local += times_p(ns);
    __atomic_fetch_add(&site_holds, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&site_hold_ns, ns, __ATOMIC_RELAXED);
}

/* A hold ends (at a release call returning to ra; 0: inside a wait). An
 * accruing hold settles its accrual whatever its end (the delay never
 * shrinks); one that did not accrue adds p times its length only if it
 * ends at the site. */
static void hold_ends(const void *lock, uintptr_t ra)
{
    bool accruing;
    uint64_t since = take_hold(lock, &accruing);
    if (!since)
        return;
    uint64_t now = lb_now_ns();
    uint64_t held = now > since ? now - since : 0;
    bool at_site = ra && !config.signal_site && is_site(ra);
    if (accruing) {
        acc_update(times_p(held), -1, since);
        me.local += times_p(held);
        if (at_site) {
            __atomic_fetch_add(&site_holds, 1, __ATOMIC_RELAXED);
            __atomic_fetch_add(&site_hold_ns, held, __ATOMIC_RELAXED);
        }
    } else if (at_site) {
        site_code_ran(held);
    }
}

void lb_whatif_releasing(const void *lock, uintptr_t ra)
{
    enter();
    pay_owed();
    hold_ends(lock, ra);
    leave();
}

void lb_whatif_signalling(uintptr_t ra)
{
    enter();
    pay_owed();
    uint64_t now = lb_now_ns();
    if (config.signal_site && is_site(ra)) {
        uint64_t ran = now - me.segment_since;
        site_code_ran(ran > me.segment_slept ? ran - me.segment_slept : 0);
    }
    begin_segment(now);
    leave();
}

void lb_whatif_dropped(const void *lock)
{
    enter();
    hold_ends(lock, 0);
    leave();
}

uint64_t lb_whatif_local(void)
{
    ensure_known();
    return me.local;
}

void lb_whatif_thread_begin(uint64_t creator_local)
{
    me.local = creator_local;
    me.known = true;
    begin_segment(lb_now_ns());
}

void lb_whatif_finish(void)
{
    lb_whatif_pay();
    uint64_t elapsed = lb_monotonic_ns() - config.started_ns;
    char line[320], progress[96] = "";
    errno = 0;
    long long calls = lb_progress_calls();
    if (config.progress && calls >= 0)
        snprintf(progress, sizeof progress, " calls=%lld progress_hit_ns=%llu", calls,
                 (unsigned long long)lb_progress_hit_ns());
    else if (config.progress)
        snprintf(progress, sizeof progress, " progress_errno=%d",
                 config.progress_errno ? config.progress_errno
                 : errno               ? errno
                                       : ENOENT);
    int n = snprintf(line, sizeof line,
                     "pid=%d elapsed_ns=%llu delay_ns=%llu slept_ns=%llu holds=%llu hold_ns=%llu "
                     "speedup_ppm=%u%s\n",
                     (int)getpid(), (unsigned long long)elapsed,
                     (unsigned long long)global_at(lb_now_ns()),
                     (unsigned long long)__atomic_load_n(&slept_total, __ATOMIC_RELAXED),
                     (unsigned long long)__atomic_load_n(&site_holds, __ATOMIC_RELAXED),
                     (unsigned long long)__atomic_load_n(&site_hold_ns, __ATOMIC_RELAXED),
                     config.speedup_ppm, progress);
    int fd = open(config.out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, line, (size_t)n) != n)
        lb_warn("whatif: cannot write %s", config.out);
    if (fd >= 0)
        close(fd);
}

/* Module lookup for the site: the load address of the module at path. */
typedef struct {
    const char *path;
    uintptr_t base;
    bool found;
} module_query_t;

static bool same_file(const char *a, const char *b)
{
    char ra[PATH_MAX], rb[PATH_MAX];
    return realpath(a, ra) && realpath(b, rb) && strcmp(ra, rb) == 0;
}

static int find_module(struct dl_phdr_info *info, size_t size, void *p)
{
    module_query_t *q = p;
    const char *name = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "/proc/self/exe";
    if (!same_file(name, q->path))
        return 0;
    q->base = info->dlpi_addr;
    q->found = true;
    return 1;
}

/* A comma-separated list of hex offsets up to the next ':'; NULL if bad. */
static const char *parse_offsets(const char *s, uintptr_t *out, uint32_t *n)
{
    char *end;
    *n = 0;
    while (*s && *s != ':') {
        uintptr_t off = strtoull(s, &end, 16);
        if (end == s || *n == WHATIF_CALLS)
            return NULL;
        out[(*n)++] = off;
        s = *end == ',' ? end + 1 : end;
    }
    return *s == ':' ? s + 1 : NULL;
}

/* LOCKBLAME_WHATIF_SITE = "[signal:]FSTART:REL,REL,...:ACQ,ACQ,...:PATH",
 * numbers in hex: the site function's start (0: unknown), the offsets of
 * its release calls (with "signal:", its signal or post calls) and of its
 * lock and wait calls (call instruction: return address - 1) in the
 * module at PATH. */
static bool parse_site(const char *spec)
{
    char *end;
    if (strncmp(spec, "signal:", 7) == 0) {
        config.signal_site = true;
        spec += 7;
    }
    uintptr_t fstart = strtoull(spec, &end, 16);
    uintptr_t rel[WHATIF_CALLS], acq[WHATIF_CALLS];
    uint32_t nrel, nacq;
    const char *s = *end == ':' ? parse_offsets(end + 1, rel, &nrel) : NULL;
    s = s ? parse_offsets(s, acq, &nacq) : NULL;
    if (!s || !*s)
        return false;
    module_query_t q = { .path = s };
    dl_iterate_phdr(find_module, &q);
    if (!q.found)
        return true; /* another program of the tree (exec): no site here */
    config.function_start = fstart ? q.base + fstart : 0;
    for (uint32_t i = 0; i < nrel; i++)
        config.calls[i] = q.base + rel[i] + 1;
    config.ncalls = nrel;
    for (uint32_t i = 0; i < nacq; i++)
        config.acquires[i] = q.base + acq[i] + 1;
    config.nacquires = nacq;
    return true;
}

/* LOCKBLAME_WHATIF_PROGRESS = "OFFSET:PATH": count the calls of the
 * function at that hex offset in the module at PATH (whatif_progress.h). */
static void setup_progress(const char *spec)
{
    char *end;
    uintptr_t offset = strtoull(spec, &end, 16);
    config.progress = true;
    if (end == spec || *end != ':') {
        config.progress_errno = EINVAL;
        return;
    }
    module_query_t q = { .path = end + 1 };
    dl_iterate_phdr(find_module, &q);
    if (!q.found)
        config.progress_errno = ENOENT;
    else if (!lb_progress_setup(q.base + offset))
        config.progress_errno = errno;
}

void lb_whatif_setup(void)
{
    const char *site = lb_getenv("LOCKBLAME_WHATIF_SITE");
    const char *speedup = lb_getenv("LOCKBLAME_WHATIF_SPEEDUP");
    const char *out = lb_getenv("LOCKBLAME_WHATIF_OUT");
    if (!site || !*site)
        return;
    double p = speedup ? strtod(speedup, NULL) : 0;
    if (!out || !*out || strlen(out) >= sizeof config.out || !(p >= 0 && p <= 1) ||
        !parse_site(site)) {
        lb_warn("whatif: bad LOCKBLAME_WHATIF_SITE, _SPEEDUP or _OUT; no experiment");
        return;
    }
    if (config.ncalls == 0 && config.function_start == 0)
        return;
    strcpy(config.out, out);
    config.speedup_ppm = (uint32_t)(p * PPM + 0.5);
    const char *progress = lb_getenv("LOCKBLAME_WHATIF_PROGRESS");
    if (progress && *progress)
        setup_progress(progress);
    config.started_ns = lb_monotonic_ns();
    ensure_known();
    lb_whatif_on = true;
}
