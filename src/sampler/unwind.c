/* Call paths with libunwind (contract in unwind.h).
 *
 * Both walks take the raw trace with unw_backtrace, which uses libunwind's
 * per-thread *trace* cache (a frame descriptor per pc: CFA rule and where
 * the return address is), so a warm walk costs tens of ns a frame. Inside
 * the handler the trace starts in the handler and crosses the kernel's
 * signal frame; the entry equal to the context's RIP is the interrupted pc,
 * and the entries before it are dropped. lb_unwind_filter then turns return
 * addresses into call addresses (ra - 1), skips lockblame's own frames and
 * stops at the trampoline range.
 *
 * Why not unw_init_local2 + unw_step per frame (kept as the fallback)?
 * Debian's libunwind 1.6 is built without the per-thread register-state
 * cache, so UNW_CACHE_PER_THREAD silently becomes the global cache, whose
 * lock costs two sigprocmask calls a frame: ~450 ns a frame against ~15 ns
 * (bench/sample_cost.c).
 *
 * Invariants:
 *  - self_lo/hi and stop_lo/hi are written once at setup, before any
 *    thread samples, and only read afterwards.
 *  - Callers hold lb_thread.busy, so this thread never runs two walks at
 *    once, and the pthread calls libunwind makes go straight to libc.
 *  - A warm walk does no malloc, takes no lock and makes no system call.
 *    A walk through code not yet in the trace cache parses DWARF: it calls
 *    dl_iterate_phdr (glibc's loader lock) and takes libunwind's own cache
 *    lock with all signals blocked (so its holder is never interrupted by
 *    us). The first walk on a thread creates its ~256 KB trace cache
 *    (pthread_once, pthread_setspecific, mmap); that walk may be in the
 *    handler: created lazily, threads that never run lockblame code or get
 *    sampled never pay for one. */
#define UNW_LOCAL_ONLY
#include "sampler/unwind.h"

#include <link.h>
#include <libunwind.h>
#include <ucontext.h>

#include "sampler/cct.h"
#include "util/common.h"

/* Raw frames from the leaf in which one of our frames marks the sample as
 * taken in synchronisation code (the program called a wrapper, which may be
 * inside the real libc function). */
#define LB_SYNC_WINDOW 8

static uintptr_t self_lo, self_hi;   /* our PT_LOAD executable segment */
static uintptr_t stop_lo, stop_hi;   /* lockblame's thread trampoline */
static uint64_t slow_walks;          /* signal walks that took the fallback */

uint64_t lb_unwind_slow_walks(void)
{
    return __atomic_load_n(&slow_walks, __ATOMIC_RELAXED);
}

bool lb_pc_in_self(uintptr_t pc)
{
    return pc - self_lo < self_hi - self_lo;
}

static inline bool lb_pc_is_stop(uintptr_t pc)
{
    return pc - stop_lo < stop_hi - stop_lo;
}

void lb_unwind_set_stop_range(uintptr_t lo, uintptr_t hi)
{
    stop_lo = lo;
    stop_hi = hi > lo ? hi : lo;
}

struct lb_self_search {
    uintptr_t addr;     /* an address inside our text */
    int index;          /* objects visited so far */
    bool found;
};

/* dl_iterate_phdr callback: find the executable PT_LOAD holding addr.
 * The first object visited is the main program; if addr lies there we are
 * linked statically into it and keep the self range empty. */
static int lb_find_self(struct dl_phdr_info *info, size_t size, void *data)
{
    struct lb_self_search *s = data;
    int index = s->index++;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        uintptr_t hi = lo + ph->p_memsz;
        if (s->addr >= lo && s->addr < hi) {
            s->found = true;
            if (index > 0) {
                self_lo = lo;
                self_hi = hi;
            }
            return 1;
        }
    }
    return 0;
}

/* Per-thread register-state caching where libunwind was built with it
 * (else it keeps its global cache), our own text range, and one warm-up
 * walk so libunwind's lazy global init and pthread_once (which take locks)
 * never run first inside a signal handler. Not async-signal-safe; call once,
 * early, with lb_thread.busy held. Leaves the self range empty if it
 * cannot be found (then wrapper frames show up in paths). */
void lb_unwind_setup(void)
{
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    struct lb_self_search s = { .addr = (uintptr_t)&lb_unwind_setup };
    dl_iterate_phdr(lb_find_self, &s);
    uintptr_t warm[4];
    (void)lb_unwind_here(warm, 4);
}

/* Keep the program frames of raw[0..n), innermost first, in pcs (which may
 * be raw itself: the output never overtakes the input).
 * first_exact: raw[0] is an interrupted pc (kept as is); all other entries
 *   are return addresses, turned into call addresses (ra - 1).
 * window: a frame of ours among the first `window` raw frames discards the
 *   frames collected so far and sets *in_sync (when non-NULL). Outside the
 *   window, our frames before any program frame are skipped, and one after
 *   a program frame ends the walk (a thread root, should the stop range
 *   not be set; with a shallow thread inside the window it would instead
 *   look like sync code, so lockblame must set the stop range).
 * Stops at the trampoline range. Returns the number kept (at most max). */
static int lb_unwind_filter(const uintptr_t *raw, int n, uintptr_t *pcs, int max,
                            bool first_exact, int window, bool *in_sync)
{
    int kept = 0;
    for (int i = 0; i < n && kept < max; i++) {
        uintptr_t pc = raw[i];
        if (pc == 0)
            break;
        if (i > 0 || !first_exact)
            pc -= 1;
        if (lb_pc_is_stop(pc))
            break;
        if (lb_pc_in_self(pc)) {
            if (i < window) {          /* the program called into us */
                kept = 0;
                if (in_sync)
                    *in_sync = true;
                continue;
            }
            if (kept)
                break;   /* an outer frame of ours: a thread root the stop range missed */
            continue;    /* our frames at the leaf of a release-site walk */
        }
        pcs[kept++] = pc;
    }
    return kept;
}

/* The slow walk, one unw_step per frame, for when the fast trace cannot be
 * lined up with the signal context. Fills raw with interrupted pc then
 * return addresses; returns the count. The per-frame cost is dominated by
 * libunwind's cache lock (two sigprocmask calls a frame). */
static int lb_unwind_steps(unw_cursor_t *cursor, uintptr_t *raw, int max)
{
    int n = 0;
    while (n < max) {
        unw_word_t ip;
        if (unw_get_reg(cursor, UNW_REG_IP, &ip) < 0 || ip == 0)
            break;
        raw[n++] = (uintptr_t)ip;
        if (unw_step(cursor) <= 0)
            break;
    }
    return n;
}

/* The caller's path. Our own frames at the leaf (this function, the
 * wrapper) are dropped. unw_backtrace uses libunwind's per-thread trace
 * cache (frame descriptors keyed by pc), so a warm walk costs tens of ns a
 * frame; its raw[0] is the return address into this function. Returns 0
 * if nothing could be walked. */
int lb_unwind_here(uintptr_t *pcs, int max)
{
    /* Room for our own leaf frames on top of max program frames. */
    uintptr_t raw[LB_MAX_DEPTH + 16];
    int cap = (int)(sizeof raw / sizeof raw[0]);
    if (max <= 0)
        return 0;
    int n = unw_backtrace((void **)raw, max + 16 < cap ? max + 16 : cap);
    return lb_unwind_filter(raw, n, pcs, max, false, 0, NULL);
}

/* Frames of the handler and the sigreturn trampoline that precede the
 * interrupted pc in a trace taken inside the handler. */
#define LB_HANDLER_FRAMES_MAX 16

/* The path interrupted by a signal. Fast path: unw_backtrace from inside
 * the handler walks through the kernel's signal frame (libunwind knows the
 * sigreturn trampoline), and the interrupted pc is the entry equal to the
 * context's RIP; everything before it (handler, trampoline) is dropped.
 * Slow path, if that entry is not found: unw_init_local2 on the context and
 * unw_step. Async-signal-safe as described at the top of this file.
 * Returns the number of frames (0 if nothing could be walked). */
int lb_unwind_signal(void *ucontext, uintptr_t *pcs, int max, bool *in_sync_code)
{
    *in_sync_code = false;
    if (max <= 0)
        return 0;
    const ucontext_t *uc = ucontext;
    uintptr_t rip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    int n = unw_backtrace((void **)pcs, max);
    for (int k = 1; k < n && k < LB_HANDLER_FRAMES_MAX; k++)
        if (pcs[k] == rip)
            return lb_unwind_filter(pcs + k, n - k, pcs, max, true, LB_SYNC_WINDOW,
                                    in_sync_code);

    __atomic_add_fetch(&slow_walks, 1, __ATOMIC_RELAXED);
    unw_cursor_t cursor;
    if (unw_init_local2(&cursor, (unw_context_t *)ucontext, UNW_INIT_SIGNAL_FRAME) < 0)
        return 0;
    n = lb_unwind_steps(&cursor, pcs, max);
    return lb_unwind_filter(pcs, n, pcs, max, true, LB_SYNC_WINDOW, in_sync_code);
}
