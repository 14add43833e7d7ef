/* End of a monitored object's life (destroy, re-init, reuse detected,
 * or found orphaned by the sweep): fold its counts into its permanent
 * record or the per-kind totals (a mutex's acquisitions are in the totals
 * already, one by one: what goes into its record is taken back out of
 * them), then return its lb_mon to the pool. The
 * caller has already unpublished the reference, so no new operation can
 * find this lb_mon. Safe against a concurrent retire of the same lb_mon:
 * only the caller that clears lb_mon.addr proceeds. */
#ifndef LB_LIFECYCLE_H
#define LB_LIFECYCLE_H
#include "locks/monitored.h"

void lb_mon_retire(lb_mon_t *mon);
/* The same in two steps, for a caller that must act between the claim and
 * the retirement: lb_mon_claim returns true if the caller cleared
 * lb_mon.addr from addr (and must then call lb_mon_retire_claimed). */
bool lb_mon_claim(lb_mon_t *mon, const void *addr);
void lb_mon_retire_claimed(lb_mon_t *mon);
/* At the final write, and for an rwlock's lb_mon kept at its destroy
 * (objmap.c): fold a still-live lb_mon's counts (it stays live). */
void lb_mon_fold_live(lb_mon_t *mon, void *unused);
/* At the final write: fold its counts (as above) and bring a live
 * object's blame clock up to *now (uint64_t ns), under its meta lock, so
 * idleness still accruing at exit shows up (as unattributed). For
 * lb_mon_for_each. */
void lb_mon_settle_live(lb_mon_t *mon, void *now);
/* Only the clock part: accrual brought up to *now, under the meta lock,
 * as any event on the object would (a time window's end, while the
 * program runs; report/writer/window_write.c). For lb_mon_for_each. */
void lb_mon_accrue_live(lb_mon_t *mon, void *now);
#endif
