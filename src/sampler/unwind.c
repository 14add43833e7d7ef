/* Call paths with lockblame's own CFI unwinder (contract in unwind.h).
 *
 * One walk serves every caller: from a set of registers (captured with
 * LB_REGS_HERE, or the signal context's), each step looks up the frame rule
 * of the pc (unwind_cfi.c: a cached word, or a parse of .eh_frame on a
 * miss), computes the CFA, reads the return address at CFA-8 and, where
 * the rule says so, the caller's rbp. The filter runs during the walk, so
 * program frames go straight into the caller's array and no raw copy of
 * the stack is kept.
 *
 * Why not libunwind (which lockblame used before): unw_backtrace's per-thread trace
 * cache takes a pthread key through pthread_once (the program's 1024th key
 * then fails), libunwind opens a pipe at start-up to validate addresses and
 * read()s it (a cancellation point inside pthread_mutex_lock), and a
 * release-site walk used 8,128 bytes of stack, more than a 16 KiB thread
 * stack can spare next to a signal frame. Its per-frame cost outside the
 * trace cache was ~450 ns (a global cache lock with two sigprocmask calls).
 *
 * Invariants:
 *  - self_lo/hi and stop_lo/hi are written once at setup, before any
 *    thread samples, and only read afterwards.
 *  - A walk reads only stack slots at or above the starting sp that the
 *    CFI names, after checking each CFA moves up the stack; frames whose
 *    CFA is rbp-based are also bounded by LB_RBP_FRAME_MAX; a realigned
 *    frame's CFA is read from a slot between sp and rbp. Through a signal
 *    frame (the sigreturn trampoline's FDE) the walk reads the kernel's
 *    ucontext at the handler's CFA and goes on from the interrupted
 *    registers, on whichever stack they name (sigaltstack), leaving a
 *    "[signal N]" marker frame (common/marker_frames.h). Out of code
 *    without CFI it takes one frame-pointer step where the chain is
 *    plausible (frame_pointer_step), else it ends with a cut marker. It
 *    allocates nothing and may run in a signal handler on top of another
 *    walk. */
#include "sampler/unwind.h"

#include <link.h>
#include <string.h>
#include <ucontext.h>

#include "common/marker_frames.h"
#include "sampler/cct.h"
#include "sampler/rule_share.h"
#include "sampler/unwind_cfi.h"
#include "util/common.h"
#include "util/stack_bounds.h"

/* Raw frames from the leaf in which one of our frames marks the sample as
 * taken in synchronisation code (the program called a wrapper, which may be
 * inside the real libc function). */
#define LB_SYNC_WINDOW   8
/* The largest frame trusted when the CFA comes from rbp (a wrong rbp
 * would otherwise send the walk anywhere); rsp-based CFAs come from the
 * CFI's own constants and need no bound. */
#define LB_RBP_FRAME_MAX ((uintptr_t)16 << 20)
/* Frames walked at most, ours and the program's. */
#define LB_WALK_MAX      (LB_MAX_DEPTH + 16)

static uintptr_t self_lo, self_hi; /* our PT_LOAD executable segment */
static uintptr_t stop_lo, stop_hi; /* lockblame's thread trampoline */
static uintptr_t pass_lo, pass_hi; /* lockblame's frames walked through (OpenMP shares) */
static uint64_t truncated_walks;   /* walks that ended at unknown code */

uint64_t lb_unwind_slow_walks(void)
{
    return __atomic_load_n(&truncated_walks, __ATOMIC_RELAXED);
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

static inline bool lb_pc_is_pass(uintptr_t pc)
{
    return pc - pass_lo < pass_hi - pass_lo;
}

void lb_unwind_set_pass_range(uintptr_t lo, uintptr_t hi)
{
    pass_lo = lo;
    pass_hi = hi > lo ? hi : lo;
}

struct lb_self_search {
    uintptr_t addr; /* an address inside our text */
    int index;      /* objects visited so far */
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

/* Our own text range. Not async-signal-safe (dl_iterate_phdr takes the
 * loader lock); call once, early. Leaves the self range empty if it cannot
 * be found (then wrapper frames show up in paths). Idempotent. */
void lb_unwind_setup(void)
{
    lb_rule_share_setup();
    if (self_hi)
        return;
    struct lb_self_search s = { .addr = (uintptr_t)&lb_unwind_setup };
    dl_iterate_phdr(lb_find_self, &s);
}

/* The kernel's signal frame (x86-64 rt_sigframe) as a handler returning
 * into the sigreturn trampoline leaves it: the trampoline's frame starts
 * at the handler's CFA, which is the frame's ucontext (uc_flags, uc_link,
 * uc_stack, the sigcontext, whose registers glibc's mcontext gregs name,
 * then the 64-bit signal mask the handler's return restores). */
#define LB_KERNEL_UC_SIGMASK 296

/* The registers the signal interrupted, from the frame whose ucontext is
 * at uc_addr; false if they are not usable. The signal: the one bit that
 * the mask in force in the handler (*mask, 0 if not known) adds to the
 * mask the frame restores (a handler blocks its own signal, unless
 * SA_NODEFER; sa_mask may add more, and then the signal is not known: 0).
 * (The frame's siginfo is written only for SA_SIGINFO handlers, so it is
 * not read.) *mask becomes the restored mask, in force below the frame. */
static bool signal_frame_regs(uintptr_t uc_addr, uint64_t *mask, lb_regs_t *out, int *signo)
{
    if (!uc_addr || (uc_addr & 7))
        return false;
    const ucontext_t *uc = (const ucontext_t *)uc_addr;
    uint64_t restored = *(const uint64_t *)(uc_addr + LB_KERNEL_UC_SIGMASK);
    uint64_t added = *mask & ~restored;
    *signo = added && !(added & (added - 1)) ? __builtin_ctzll(added) + 1 : 0;
    *mask = restored;
    out->pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    out->sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
    out->bp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
    return out->pc && out->sp && !(out->sp & 7);
}

/* ret follows a direct call (e8 rel32) whose target lies at most 64 KiB
 * below callee_pc: the call that entered the function holding callee_pc.
 * ret's bytes are read only within ret's own page, which is mapped: its
 * pc - 1 has unwind information. */
static bool returns_from_call_to(uintptr_t ret, uintptr_t callee_pc)
{
    if ((ret & 4095) < 5)
        return false;
    const uint8_t *code = (const uint8_t *)ret;
    if (code[-5] != 0xe8)
        return false;
    int32_t rel;
    memcpy(&rel, code - 4, sizeof rel);
    uintptr_t target = ret + (uintptr_t)(intptr_t)rel;
    return target <= callee_pc && callee_pc - target < ((uintptr_t)64 << 10);
}

/* A frame-pointer step out of code without unwind information at pc
 * (stack sp, rbp bp): plausible when rbp points into the thread's stack
 * above sp,
 * the return address saved beside it lies in code with unwind
 * information, and the call there entered the function holding pc. A
 * function without CFI that keeps no frame pointer leaves its caller's
 * rbp, whose return address is not such a call: the walk then stops
 * rather than skip a frame. *caller: the return address at bp + 8. */
static bool frame_pointer_step(uintptr_t pc, uintptr_t sp, uintptr_t bp, uintptr_t *caller)
{
    /* No CFI vouches for rbp here: it is read only inside the thread's
     * own stack, whose bounds are known (not on a signal stack or a
     * coroutine's). */
    lb_stack_bounds_t stack = lb_stack_bounds;
    if (!stack.lo || sp < stack.lo || bp < sp || (bp & 7) || bp + 16 > stack.hi)
        return false;
    uintptr_t ret = ((const uintptr_t *)bp)[1];
    if (!ret || lb_pc_in_self(ret - 1) || lb_frame_rule(ret - 1).kind == LB_RULE_UNKNOWN)
        return false;
    if (!returns_from_call_to(ret, pc))
        return false;
    *caller = ret;
    return true;
}

/* How a walk filters frames. */
typedef struct walk_filter {
    int window;    /* ours among the first `window` frames: the program called into us */
    bool *in_sync; /* set then, when non-NULL */
} walk_filter_t;

/* Walk from r, keeping program frames in pcs (at most max). first_exact:
 * r->pc is the exact pc of an interrupted or current instruction (kept as
 * is, and its rule looked up at pc); every later pc is a return address,
 * kept as ra - 1. Filter: a frame of ours among the first f->window frames
 * discards the frames kept so far and sets *f->in_sync; outside it, our
 * frames before any program frame are skipped, and one after a program
 * frame ends the walk (a thread root the stop range missed). The stop
 * range ends it too; frames in the pass range are walked through and not
 * kept. mask: the thread's signal mask at r (signals 1-64,
 * bit N-1 for signal N; 0 if not known), which names the signals of the
 * signal frames walked. trace, if non-NULL, records every slot read.
 * Returns the number of frames kept. */
static int walk(const lb_regs_t *r, bool first_exact, uint64_t mask, uintptr_t *pcs, int max,
                const walk_filter_t *f, lb_walk_trace_t *trace)
{
    uintptr_t pc = r->pc, sp = r->sp, bp = r->bp, start = r->sp;
    bool exact = first_exact;
    int kept = 0;
    /* Where bp came from, for the trace: the start registers, or a slot
     * not yet recorded (bp_pending, at bp_off). A bp nobody uses as a CFA
     * (rbp as a general register at -O2) is not part of the path. */
    bool bp_from_start = true, bp_pending = false;
    uint32_t bp_off = 0;
    for (int i = 0; i < LB_WALK_MAX && kept < max; i++) {
        uintptr_t at = exact ? pc : pc - 1;
        if (lb_pc_is_stop(at))
            return kept;
        if (lb_pc_is_pass(at)) {
            /* ours, but it runs the program's code above: neither kept nor
             * a sign of synchronization code */
        } else if (lb_pc_in_self(at)) {
            if (i < f->window) {
                kept = 0;
                if (f->in_sync)
                    *f->in_sync = true;
            } else if (kept) {
                return kept;
            }
        } else {
            pcs[kept++] = at;
        }
        lb_frame_rule_t rule = lb_frame_rule(at);
        if (rule.kind == LB_RULE_SIGNAL) {
            /* The sigreturn trampoline's frame becomes the signal's marker
             * and the walk goes on in the interrupted code. */
            lb_regs_t interrupted;
            int signo;
            if (!signal_frame_regs(sp, &mask, &interrupted, &signo))
                return kept;
            if (kept && pcs[kept - 1] == at)
                pcs[kept - 1] = LB_SIGNAL_FRAME_PC(signo);
            else if (kept < max)
                pcs[kept++] = LB_SIGNAL_FRAME_PC(signo);
            pc = interrupted.pc;
            sp = interrupted.sp;
            bp = interrupted.bp;
            exact = true;
            if (trace) { /* the path depends on the kernel's frame: no form for it */
                trace->overflow = true;
                trace = NULL;
            }
            continue;
        }
        if (rule.kind == LB_RULE_UNKNOWN) {
            /* Code without unwind information: one frame-pointer step if
             * the chain is plausible, else the path is cut here, and says
             * so in a marker frame. */
            uintptr_t caller_pc;
            if (frame_pointer_step(at, sp, bp, &caller_pc)) {
                pc = caller_pc;
                sp = bp + 16;
                bp = *(const uintptr_t *)bp;
                exact = false;
                if (trace) { /* no CFI row describes these slots */
                    trace->overflow = true;
                    trace = NULL;
                }
                continue;
            }
            __atomic_add_fetch(&truncated_walks, 1, __ATOMIC_RELAXED);
            if (kept && pcs[kept - 1] == at && kept < max)
                pcs[kept++] = LB_CUT_FRAME_PC(at);
            return kept;
        }
        if (rule.kind != LB_RULE_STEP && rule.kind != LB_RULE_DEREF)
            return kept;
        uintptr_t cfa;
        const uintptr_t *bp_slot;
        if (rule.kind == LB_RULE_DEREF) {
            /* A realigned frame: the CFA is in a slot below rbp, rbp saved
             * at rbp; both inside this frame, between sp and the CFA. */
            uintptr_t cfa_slot = bp + (uintptr_t)(intptr_t)rule.cfa_off;
            if (bp < sp || (bp & 7) || bp - sp > LB_RBP_FRAME_MAX || cfa_slot < sp || cfa_slot > bp)
                return kept;
            cfa = *(const uintptr_t *)cfa_slot;
            if (cfa <= bp || (cfa & 7) || cfa - sp > LB_RBP_FRAME_MAX)
                return kept;
            bp_slot = (const uintptr_t *)bp;
            if (trace) { /* the path depends on a slot the trace has no form for */
                trace->overflow = true;
                trace = NULL;
            }
        } else {
            cfa = (rule.cfa_rbp ? bp : sp) + (uintptr_t)(intptr_t)rule.cfa_off;
            if (cfa <= sp || (cfa & 7) || (rule.cfa_rbp && cfa - sp > LB_RBP_FRAME_MAX))
                return kept;
            bp_slot =
                rule.rbp_off ? (const uintptr_t *)(cfa + (uintptr_t)(intptr_t)rule.rbp_off) : NULL;
            if (bp_slot && (uintptr_t)bp_slot < sp)
                return kept;
        }
        const uintptr_t *ra_slot = (const uintptr_t *)(cfa - 8);
        if (trace) {
            if (trace->n + 2 > trace->max || cfa - start > UINT32_MAX) {
                trace->overflow = true;
                trace = NULL;
            } else {
                if (rule.cfa_rbp && bp_from_start)
                    trace->uses_bp = true;
                if (rule.cfa_rbp && bp_pending) {
                    trace->off[trace->n++] = bp_off;
                    bp_pending = false;
                }
                trace->off[trace->n++] = (uint32_t)((uintptr_t)ra_slot - start);
                if (bp_slot) {
                    bp_from_start = false;
                    bp_pending = true;
                    bp_off = (uint32_t)((uintptr_t)bp_slot - start);
                }
            }
        }
        pc = *ra_slot;
        if (bp_slot)
            bp = *bp_slot;
        sp = cfa;
        exact = false;
        if (pc == 0)
            return kept;
    }
    return kept;
}

static const walk_filter_t here_filter = { .window = 0, .in_sync = NULL };

int lb_unwind_from(const lb_regs_t *regs, uintptr_t *pcs, int max, lb_walk_trace_t *trace)
{
    if (max <= 0)
        return 0;
    return walk(regs, true, 0, pcs, max, &here_filter, trace);
}

/* The caller's path. Our own frames at the leaf (this function, the
 * wrapper) are dropped. Returns 0 if nothing could be walked. */
LB_NOINLINE int lb_unwind_here(uintptr_t *pcs, int max)
{
    lb_regs_t r;
    LB_REGS_HERE(r);
    return lb_unwind_from(&r, pcs, max, NULL);
}

/* The path interrupted by a signal, from the context's registers: the
 * handler and the kernel's signal frame are never walked. */
int lb_unwind_signal(void *ucontext, uintptr_t *pcs, int max, bool *in_sync_code)
{
    *in_sync_code = false;
    if (max <= 0)
        return 0;
    const ucontext_t *uc = ucontext;
    uint64_t sigmask;
    memcpy(&sigmask, &uc->uc_sigmask, sizeof sigmask); /* its first 64 signals */
    lb_regs_t r = { .pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP],
                    .sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP],
                    .bp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP] };
    walk_filter_t f = { .window = LB_SYNC_WINDOW, .in_sync = in_sync_code };
    return walk(&r, true, sigmask, pcs, max, &f, NULL);
}
