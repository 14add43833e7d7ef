/* Per-thread hooks of the upper layers, so that core can run a thread's
 * lifecycle without calling upward.
 *
 * A layer declares one static lb_thread_hooks_t with LB_THREAD_HOOKS; the
 * linker gathers them in section lb_thread_hooks, and core runs them in
 * rank order (LB_RANK_*: lower layers first) at attach and start, and in
 * reverse rank order at stop and compact.
 *
 * Invariants: hooks run on the thread itself with errno saved by core.
 * `init` runs before the record is published (not yet lb_self, not in the
 * registry): it allocates the layer's part and returns -1 if it cannot,
 * and then the thread runs unmonitored (the record is simply not used).
 * `start` runs once the record is lb_self; `stop` while it still is;
 * `compact` after lb_self is NULL, only while the final write has not
 * begun (see lb_thread_freeze). Any hook may be NULL. */
#ifndef LB_CORE_THREAD_HOOKS_H
#define LB_CORE_THREAD_HOOKS_H
#include "core/thread.h"

enum lb_rank { LB_RANK_CORE, LB_RANK_SAMPLER, LB_RANK_BLAME, LB_RANK_LOCKS, LB_RANKS };

typedef struct lb_thread_hooks {
    enum lb_rank rank;
    int (*init)(lb_thread_t *t);
    void (*start)(lb_thread_t *t);
    void (*stop)(lb_thread_t *t);
    void (*compact)(lb_thread_t *t);
} lb_thread_hooks_t;

#define LB_THREAD_HOOKS(name)                                                        \
    static const lb_thread_hooks_t name                                              \
        __attribute__((used, section("lb_thread_hooks"), aligned(sizeof(void *))))
#endif
