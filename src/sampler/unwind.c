/* Call paths with libunwind (contract in unwind.h).
 *
 * Both walks share lb_unwind_walk: step outwards from a cursor, turn return
 * addresses into call addresses (ra - 1) except for the interrupted pc of a
 * signal frame, skip lockblame's own frames, stop at the trampoline range.
 *
 * Invariants:
 *  - self_lo/hi and stop_lo/hi are written once at setup, before any
 *    thread samples, and only read afterwards.
 *  - Callers hold lb_thread.busy, so this thread never runs two walks at
 *    once (libunwind's per-thread cache is not re-entrant).
 *  - In the signal handler only the local-only libunwind entry points are
 *    used, with the per-thread cache: a warm walk does no malloc, no lock and
 *    no dl_iterate_phdr. A cold walk (first time through some code) calls
 *    dl_iterate_phdr, which takes glibc's loader lock; lb_unwind_setup warms
 *    libunwind's global init so that is the only lock a handler can meet. */
#define UNW_LOCAL_ONLY
#include "sampler/unwind.h"

#include <link.h>
#include <libunwind.h>

#include "sampler/cct.h"
#include "util/common.h"

/* Raw frames from the leaf in which one of our frames marks the sample as
 * taken in synchronisation code (the program called a wrapper, which may be
 * inside the real libc function). */
#define LB_SYNC_WINDOW 8

static uintptr_t self_lo, self_hi;   /* our PT_LOAD executable segment */
static uintptr_t stop_lo, stop_hi;   /* lockblame's thread trampoline */

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

/* Per-thread caching (no lock on the cache), our own text range, and one
 * warm-up walk so libunwind's lazy global init (which takes a lock) never
 * runs first inside a signal handler. Not async-signal-safe; call once,
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

/* Walk outwards from cursor, filling pcs innermost-first.
 * first_exact: the cursor's first frame is an interrupted pc (keep it).
 * window: a frame of ours among the first `window` raw frames discards the
 *   frames collected so far and sets *in_sync (when non-NULL).
 * Returns the number of program frames stored (at most max). */
static int lb_unwind_walk(unw_cursor_t *cursor, uintptr_t *pcs, int max,
                          bool first_exact, int window, bool *in_sync)
{
    int kept = 0;
    int raw = 0;
    bool exact = first_exact;
    int limit = 2 * max + 64;   /* guards against a walk that never ends */
    while (kept < max && raw < limit) {
        unw_word_t ip;
        if (unw_get_reg(cursor, UNW_REG_IP, &ip) < 0 || ip == 0)
            break;
        uintptr_t pc = exact ? (uintptr_t)ip : (uintptr_t)ip - 1;
        if (lb_pc_is_stop(pc))
            break;
        if (lb_pc_in_self(pc)) {
            if (raw < window) {
                kept = 0;
                if (in_sync)
                    *in_sync = true;
            }
        } else {
            pcs[kept++] = pc;
        }
        raw++;
        /* The frame above a signal trampoline was interrupted, not called. */
        exact = unw_is_signal_frame(cursor) > 0;
        if (unw_step(cursor) <= 0)
            break;
    }
    return kept;
}

/* The caller's path. Our own frames at the leaf (this function, the
 * wrapper) are dropped. Uses unw_backtrace, whose per-thread trace cache
 * avoids the full DWARF step (and libunwind's sigprocmask pair around
 * dl_iterate_phdr) for frames it has seen before: contended releases
 * unwind on every call, so this is their main cost. Returns 0 if
 * libunwind cannot start. */
int lb_unwind_here(uintptr_t *pcs, int max)
{
    void *raw[LB_MAX_DEPTH + 16];
    int want = max + 16 < (int)(sizeof raw / sizeof raw[0]) ? max + 16
                                                             : (int)(sizeof raw / sizeof raw[0]);
    int n = max > 0 ? unw_backtrace(raw, want) : 0;
    int kept = 0;
    for (int i = 0; i < n && kept < max; i++) {
        uintptr_t pc = (uintptr_t)raw[i] - 1; /* return address -> call */
        if (lb_pc_is_stop(pc))
            break;
        if (lb_pc_in_self(pc)) {
            if (kept)
                break; /* an outer frame of ours: a thread root we did not mark */
            continue;
        }
        pcs[kept++] = pc;
    }
    return kept;
}

/* The path interrupted by a signal, from the kernel's ucontext.
 * Async-signal-safe as described at the top of this file. Returns 0 and
 * leaves *in_sync_code false if libunwind cannot start. */
int lb_unwind_signal(void *ucontext, uintptr_t *pcs, int max, bool *in_sync_code)
{
    unw_cursor_t cursor;
    *in_sync_code = false;
    if (max <= 0 || unw_init_local2(&cursor, (unw_context_t *)ucontext,
                                    UNW_INIT_SIGNAL_FRAME) < 0)
        return 0;
    return lb_unwind_walk(&cursor, pcs, max, true, LB_SYNC_WINDOW, in_sync_code);
}
