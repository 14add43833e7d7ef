/* Virtual speedup of one release site: the accounting (whatif.h).
 *
 * Concurrency: `global`, the run's figures and the configuration are
 * process-wide; the configuration is written once at start, before any
 * thread but the first exists, and read-only after. The counts are
 * updated with atomic adds. Everything else is the calling thread's own
 * (TLS); the sampler's handler uses it only while `inside` is clear, and
 * the code below sets `inside` around every change. */
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

#include "util/clock.h"
#include "util/common.h"
#include "util/log.h"
#include "util/raw_syscall.h"

#define WHATIF_CALLS 64 /* call sites of the selected function, at most */
#define WHATIF_HOLDS 16 /* mutexes one thread holds at once that are timed */
#define PPM          1000000u

bool lb_whatif_on;

static struct {
    uint32_t speedup_ppm;          /* p, in millionths */
    uintptr_t function_start;      /* the site's function, for tail-called releases */
    uintptr_t calls[WHATIF_CALLS]; /* return addresses of its release calls */
    uint32_t ncalls;
    char out[PATH_MAX];  /* results file (appended to) */
    uint64_t started_ns; /* at setup */
} config;

static uint64_t global_delay; /* ns: the delay every thread owes */
static uint64_t slept_total;  /* ns: time threads really slept */
static uint64_t site_holds, site_hold_ns;

typedef struct {
    uint64_t local;      /* the part of global_delay this thread has paid or been excused */
    uint64_t excess;     /* slept beyond what was owed: pays the next debts */
    uint64_t blocked_at; /* global_delay when a blocking call began */
    uintptr_t last_ra;   /* one-entry cache of the site test */
    bool last_match;
    bool known;      /* local is set (inherited, or taken from global) */
    uint32_t inside; /* whatif code runs on this thread: the handler stays out */
    uint32_t nholds;
    struct {
        const void *lock;
        uint64_t since;
    } holds[WHATIF_HOLDS];
} whatif_thread_t;

static LB_TLS whatif_thread_t me;

static uint64_t load_global(void)
{
    return __atomic_load_n(&global_delay, __ATOMIC_ACQUIRE);
}

static void ensure_known(void)
{
    if (lb_unlikely(!me.known)) {
        me.local = load_global();
        me.known = true;
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

static void pay_owed(void)
{
    ensure_known();
    uint64_t g = load_global();
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
    __atomic_fetch_add(&slept_total, slept, __ATOMIC_RELAXED);
}

void lb_whatif_pay(void)
{
    me.inside++;
    pay_owed();
    me.inside--;
}

void lb_whatif_tick(void)
{
    if (me.inside == 0)
        lb_whatif_pay();
}

void lb_whatif_block_begin(void)
{
    me.inside++;
    pay_owed();
    me.blocked_at = load_global();
    me.inside--;
}

void lb_whatif_block_end(bool woken)
{
    if (!woken)
        return;
    me.inside++;
    uint64_t g = load_global();
    if (g > me.blocked_at)
        me.local += g - me.blocked_at;
    me.inside--;
}

void lb_whatif_acquired(const void *lock)
{
    me.inside++;
    if (me.nholds < WHATIF_HOLDS) {
        me.holds[me.nholds].lock = lock;
        me.holds[me.nholds].since = lb_now_ns();
        me.nholds++;
    }
    me.inside--;
}

/* When lock's newest timed hold began (removing it); 0 if none is timed. */
static uint64_t take_hold(const void *lock)
{
    for (uint32_t i = me.nholds; i-- > 0;) {
        if (me.holds[i].lock != lock)
            continue;
        uint64_t since = me.holds[i].since;
        me.holds[i] = me.holds[--me.nholds];
        return since;
    }
    return 0;
}

/* A release whose call returns to ra is the selected site: one of its
 * recorded call sites, or a tail call (`call F` just before ra, F the
 * site's function, whose release is a jump). */
static bool is_site(uintptr_t ra)
{
    if (ra == me.last_ra)
        return me.last_match;
    bool match = false;
    for (uint32_t i = 0; i < config.ncalls && !match; i++)
        match = config.calls[i] == ra;
    if (!match && config.function_start) {
        const unsigned char *call = (const unsigned char *)ra - 5;
        int32_t rel;
        memcpy(&rel, call + 1, sizeof rel);
        match = call[0] == 0xe8 && ra + (uintptr_t)(intptr_t)rel == config.function_start;
    }
    me.last_ra = ra;
    me.last_match = match;
    return match;
}

void lb_whatif_releasing(const void *lock, uintptr_t ra)
{
    me.inside++;
    pay_owed();
    uint64_t since = take_hold(lock);
    if (since && is_site(ra)) {
        uint64_t now = lb_now_ns();
        uint64_t held = now > since ? now - since : 0;
        uint64_t delay = (uint64_t)((unsigned __int128)held * config.speedup_ppm / PPM);
        __atomic_fetch_add(&global_delay, delay, __ATOMIC_ACQ_REL);
        me.local += delay;
        __atomic_fetch_add(&site_holds, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&site_hold_ns, held, __ATOMIC_RELAXED);
    }
    me.inside--;
}

void lb_whatif_dropped(const void *lock)
{
    me.inside++;
    take_hold(lock);
    me.inside--;
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
}

void lb_whatif_finish(void)
{
    lb_whatif_pay();
    uint64_t elapsed = lb_monotonic_ns() - config.started_ns;
    char line[256];
    int n = snprintf(line, sizeof line,
                     "pid=%d elapsed_ns=%llu delay_ns=%llu slept_ns=%llu holds=%llu hold_ns=%llu "
                     "speedup_ppm=%u\n",
                     (int)getpid(), (unsigned long long)elapsed, (unsigned long long)load_global(),
                     (unsigned long long)__atomic_load_n(&slept_total, __ATOMIC_RELAXED),
                     (unsigned long long)__atomic_load_n(&site_holds, __ATOMIC_RELAXED),
                     (unsigned long long)__atomic_load_n(&site_hold_ns, __ATOMIC_RELAXED),
                     config.speedup_ppm);
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

/* LOCKBLAME_WHATIF_SITE = "FSTART:OFF,OFF,...:PATH", numbers in hex:
 * the site function's start (0: unknown) and the offsets of its release
 * calls (call instruction, return address - 1) in the module at PATH. */
static bool parse_site(const char *spec)
{
    char *end;
    uintptr_t fstart = strtoull(spec, &end, 16);
    if (*end != ':')
        return false;
    uintptr_t offsets[WHATIF_CALLS];
    uint32_t n = 0;
    const char *s = end + 1;
    while (*s && *s != ':') {
        uintptr_t off = strtoull(s, &end, 16);
        if (end == s || n == WHATIF_CALLS)
            return false;
        offsets[n++] = off;
        s = *end == ',' ? end + 1 : end;
    }
    if (*s != ':' || !s[1])
        return false;
    module_query_t q = { .path = s + 1 };
    dl_iterate_phdr(find_module, &q);
    if (!q.found) {
        config.ncalls = 0; /* another program of the tree (exec): no site here */
        return true;
    }
    config.function_start = fstart ? q.base + fstart : 0;
    for (uint32_t i = 0; i < n; i++)
        config.calls[i] = q.base + offsets[i] + 1;
    config.ncalls = n;
    return true;
}

void lb_whatif_setup(void)
{
    const char *site = getenv("LOCKBLAME_WHATIF_SITE");
    const char *speedup = getenv("LOCKBLAME_WHATIF_SPEEDUP");
    const char *out = getenv("LOCKBLAME_WHATIF_OUT");
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
    config.started_ns = lb_monotonic_ns();
    ensure_known();
    lb_whatif_on = true;
}
