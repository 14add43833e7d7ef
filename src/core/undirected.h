/* Undirected idleness (thesis ch. 5): for idleness that does not come
 * through one sync object, each work sample also charges I/W samples of
 * idleness to its calling context, where I is the number of threads
 * waiting (in any wrapped wait) and W the number working at that moment.
 *
 * Cost: two process-wide counters, changed only where a thread attaches,
 * detaches, starts or stops waiting (all slow paths: a wait has already
 * failed to acquire); the uncontended lock paths never touch them. The
 * sampling handler reads both with plain loads: the ratio is a sample, so
 * a momentarily stale pair is fine. */
#ifndef LB_UNDIRECTED_H
#define LB_UNDIRECTED_H
#include <stdint.h>

#include "common/kinds.h"

struct lb_thread;

/* An attached thread starts / stops counting as live. */
void lb_undirected_thread_live(int delta);
/* The calling thread starts waiting on an object of this kind / stops.
 * Also sets lb_thread.waiting, which classifies its samples as overhead. */
void lb_waiting_begin(struct lb_thread *self, lb_obj_kind kind);
void lb_waiting_end(struct lb_thread *self);
/* Fork child: only the calling thread exists, and it is not waiting. */
void lb_undirected_after_fork(void);
/* I / W now (0 when nobody waits). Async-signal-safe. */
double lb_undirected_ratio(void);
#endif
