/* Acquisitions counted by each thread: see acq_counts.h for why, and the
 * invariants. */
#include "locks/acq_counts.h"

#include <sched.h>

#include "util/fork_pages.h"
#include "util/pages.h"

int lb_acq_counts_init(lb_thread_t *t)
{
    lb_acq_counts_t *table = lb_arena_alloc_lines(sizeof *table);
    if (!table)
        return -1;
    t->acq_counts = table;
    t->acq_count_last = &table->slot[0];
    return 0;
}

/* One acquisition of mon's object counted in its lb_mon, atomically: a
 * spin lock's holder serializes its own counts, but another thread's
 * table may be emptied into the same word meanwhile (empty_slot). */
static int count_in_mon(lb_mon_t *mon)
{
    __atomic_fetch_add(&mon->acquisitions, 1, __ATOMIC_RELAXED);
    return 0;
}

int lb_acq_count_in_table(lb_thread_t *self, lb_mon_t *mon)
{
    lb_acq_counts_t *table = self->acq_counts;
    lb_acq_count_t *free_slot = NULL;
    if (lb_unlikely(__atomic_load_n(&table->closed, __ATOMIC_RELAXED)))
        return count_in_mon(mon);
    for (int i = 0; i < LB_ACQ_COUNT_SLOTS; i++) {
        lb_acq_count_t *c = &table->slot[i];
        lb_mon_t *m = __atomic_load_n(&c->mon, __ATOMIC_ACQUIRE);
        if (m == mon) {
            c->count++;
            self->acq_count_last = c;
            return 0;
        }
        if (!m && !free_slot)
            free_slot = c;
    }
    if (!free_slot) /* every slot taken */
        return count_in_mon(mon);
    if (mon->kind == LB_OBJ_SEM && !__atomic_load_n(&mon->sem_counted, __ATOMIC_RELAXED))
        __atomic_store_n(&mon->sem_counted, 1, __ATOMIC_RELAXED);
    free_slot->count = 1;
    __atomic_store_n(&free_slot->mon, mon, __ATOMIC_RELEASE);
    self->acq_count_last = free_slot;
    return 0;
}

/* A slot whose count is being moved into its lb_mon (empty_slot). */
#define SLOT_MOVING ((lb_mon_t *)(uintptr_t)1)

/* Slot c's count into mon, and the slot freed, if c still names mon. Its
 * thread's close and another thread's take may both empty it: the one
 * that swaps the name for SLOT_MOVING moves the count, and the other
 * waits until the count is in mon (its caller may fold mon's count, or
 * free mon, next), for a bounded time (the mover runs a few
 * instructions; one kept off its CPU that long loses its count, as an
 * increment racing a take does). */
static void empty_slot(lb_acq_count_t *c, lb_mon_t *mon)
{
    lb_mon_t *named = mon;
    if (__atomic_compare_exchange_n(&c->mon, &named, SLOT_MOVING, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        uint64_t count = __atomic_exchange_n(&c->count, 0, __ATOMIC_ACQ_REL);
        __atomic_fetch_add(&mon->acquisitions, count, __ATOMIC_RELAXED);
        __atomic_store_n(&c->mon, NULL, __ATOMIC_RELEASE);
        return;
    }
    for (int i = 0; i < 1000 && named == SLOT_MOVING; i++) {
        sched_yield();
        named = __atomic_load_n(&c->mon, __ATOMIC_ACQUIRE);
    }
}

void lb_acq_counts_take(lb_mon_t *mon)
{
    for (lb_thread_t *t = lb_thread_registry(); t; t = t->next) {
        lb_acq_counts_t *table = t->acq_counts;
        if (!table || __atomic_load_n(&table->closed, __ATOMIC_ACQUIRE))
            continue;
        for (int i = 0; i < LB_ACQ_COUNT_SLOTS; i++) {
            if (__atomic_load_n(&table->slot[i].mon, __ATOMIC_ACQUIRE) == mon)
                empty_slot(&table->slot[i], mon);
        }
    }
}

void lb_acq_counts_close(lb_thread_t *self)
{
    lb_acq_counts_t *table = self->acq_counts;
    if (!table)
        return;
    for (int i = 0; i < LB_ACQ_COUNT_SLOTS; i++) {
        lb_mon_t *mon = __atomic_load_n(&table->slot[i].mon, __ATOMIC_ACQUIRE);
        if (mon && mon != SLOT_MOVING)
            empty_slot(&table->slot[i], mon);
    }
    __atomic_store_n(&table->closed, 1, __ATOMIC_RELEASE); /* after: a take meanwhile finds them */
}

void lb_acq_counts_fork_child(lb_thread_t *self)
{
    lb_acq_counts_t *table = self->acq_counts;
    for (int i = 0; table && i < LB_ACQ_COUNT_SLOTS; i++) { /* the parent's */
        LB_STORE_CHANGED(&table->slot[i].mon, NULL);
        LB_STORE_CHANGED(&table->slot[i].count, 0u);
    }
}
