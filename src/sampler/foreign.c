/* Records of threads started by a raw clone (foreign.h). */
#include "sampler/foreign.h"

#include <sys/syscall.h>

#include "common/hash.h"
#include "core/phase.h"
#include "sampler/cct.h"
#include "sampler/unsampled.h"
#include "sampler/unwind.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/raw_syscall.h"

#define LB_FOREIGN_BITS  6
#define LB_FOREIGN_SLOTS (1u << LB_FOREIGN_BITS)

typedef struct {
    pid_t os_tid;   /* claimed by that thread; 0: free */
    lb_thread_t *t; /* its record once attached; NULL meanwhile or on failure */
} foreign_slot_t;

static foreign_slot_t slots[LB_FOREIGN_SLOTS];
static uint64_t unrecorded;
static uint32_t attached;
static int full_once;

uint64_t lb_foreign_unrecorded(void)
{
    return __atomic_load_n(&unrecorded, __ATOMIC_RELAXED);
}

uint32_t lb_foreign_threads(void)
{
    return __atomic_load_n(&attached, __ATOMIC_RELAXED);
}

void lb_foreign_sampled(lb_thread_t *t)
{
    t->cpu_ns = lb_thread_cpu_ns();
    t->end_ns = lb_now_ns();
}

bool lb_foreign_ended(lb_thread_t *t)
{
    if (!t->foreign || __atomic_load_n(&t->exited, __ATOMIC_ACQUIRE) ||
        lb_unsampled_cpu_of(t->os_tid) != 0) /* 0: its CPU clock cannot be read */
        return false;
    if (t->end_ns < t->start_ns)
        t->end_ns = t->start_ns; /* never sampled */
    t->run_delay_ns = UINT64_MAX;
    __atomic_store_n(&t->exited, true, __ATOMIC_RELEASE);
    return true;
}

static lb_thread_t *none(void)
{
    __atomic_add_fetch(&unrecorded, 1, __ATOMIC_RELAXED);
    return NULL;
}

/* The function the raw clone runs: the frame just inside the clone's
 * own (glibc's clone starts the child in clone itself, the outermost
 * frame); 0 when the walk does not reach that far. */
static uintptr_t start_routine_here(void)
{
    uintptr_t pcs[LB_MAX_DEPTH];
    int n = lb_unwind_here(pcs, LB_MAX_DEPTH);
    return n >= 2 ? pcs[n - 2] : 0;
}

static lb_thread_t *attach(foreign_slot_t *slot, const lb_thread_t *creator, pid_t tid)
{
    uintptr_t here = (uintptr_t)__builtin_frame_address(0), lo = 0, hi = 0;
    lb_stack_mapping_of(here, &lo, &hi);
    lb_thread_t *t = lb_thread_attach_foreign(creator, tid, start_routine_here(), lo, hi);
    __atomic_store_n(&slot->t, t, __ATOMIC_RELEASE);
    if (!t)
        return none();
    __atomic_add_fetch(&attached, 1, __ATOMIC_RELAXED);
    return t;
}

lb_thread_t *lb_thread_foreign(lb_thread_t *self, bool may_attach)
{
    pid_t tid = (pid_t)lb_raw_syscall(SYS_gettid, 0, 0, 0, 0, 0, 0);
    if (tid == lb_thread_os_tid(self))
        return self; /* its own thread, on a stack of its own making */
    uint32_t i = lb_hash_index((uintptr_t)tid, LB_FOREIGN_BITS);
    for (uint32_t probe = 0; probe < LB_FOREIGN_SLOTS;
         probe++, i = (i + 1) & (LB_FOREIGN_SLOTS - 1)) {
        foreign_slot_t *slot = &slots[i];
        pid_t seen = __atomic_load_n(&slot->os_tid, __ATOMIC_ACQUIRE);
        if (seen == tid) {
            lb_thread_t *t = __atomic_load_n(&slot->t, __ATOMIC_ACQUIRE);
            return t ? t : none(); /* NULL: attaching below us (a sample), or failed */
        }
        if (seen != 0)
            continue;
        if (!may_attach || !lb_runtime_monitoring())
            return none();
        if (__atomic_compare_exchange_n(&slot->os_tid, &seen, tid, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
            return attach(slot, self, tid);
        if (seen == tid) /* cannot be: only this thread claims its id */
            return none();
    }
    if (may_attach)
        lb_warn_once(&full_once,
                     "more than %u threads started by a raw clone; the others are not profiled",
                     LB_FOREIGN_SLOTS);
    return none();
}
