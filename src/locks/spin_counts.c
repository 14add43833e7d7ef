/* Per-thread counts of hot spin locks' acquisitions: see spin_counts.h
 * for why, and the invariants. */
#include "locks/spin_counts.h"

#include "util/fork_pages.h"
#include "util/pages.h"

int lb_spin_counts_init(lb_thread_t *t)
{
    lb_spin_counts_t *table = lb_arena_alloc_lines(sizeof *table);
    if (!table)
        return -1;
    t->spin_counts = table;
    t->spin_count_last = &table->slot[0];
    return 0;
}

int lb_spin_count_in_table(lb_thread_t *self, lb_mon_t *mon)
{
    lb_spin_counts_t *table = self->spin_counts;
    lb_spin_count_t *free_slot = NULL;
    for (int i = 0; i < LB_SPIN_COUNT_SLOTS; i++) {
        lb_spin_count_t *c = &table->slot[i];
        lb_mon_t *m = __atomic_load_n(&c->mon, __ATOMIC_ACQUIRE);
        if (m == mon) {
            c->count++;
            self->spin_count_last = c;
            return 0;
        }
        if (!m && !free_slot)
            free_slot = c;
    }
    if (!free_slot) {
        mon->acquisitions++; /* every slot taken: the lb_mon's own count */
        return 0;
    }
    free_slot->count = 1;
    __atomic_store_n(&free_slot->mon, mon, __ATOMIC_RELEASE);
    self->spin_count_last = free_slot;
    return 0;
}

void lb_spin_counts_take(lb_mon_t *mon)
{
    for (lb_thread_t *t = lb_thread_registry(); t; t = t->next) {
        lb_spin_counts_t *table = t->spin_counts;
        for (int i = 0; table && i < LB_SPIN_COUNT_SLOTS; i++) {
            lb_spin_count_t *c = &table->slot[i];
            if (__atomic_load_n(&c->mon, __ATOMIC_ACQUIRE) != mon)
                continue;
            mon->acquisitions += __atomic_exchange_n(&c->count, 0, __ATOMIC_ACQ_REL);
            __atomic_store_n(&c->mon, NULL, __ATOMIC_RELEASE);
        }
    }
}

void lb_spin_counts_fork_child(lb_thread_t *self)
{
    lb_spin_counts_t *table = self->spin_counts;
    for (int i = 0; table && i < LB_SPIN_COUNT_SLOTS; i++) { /* the parent's */
        LB_STORE_CHANGED(&table->slot[i].mon, NULL);
        LB_STORE_CHANGED(&table->slot[i].count, 0u);
    }
}
