/* The wait notes of wait_note.h: written by the blame verbs (blame.c),
 * read by the final write (report/writer/structural_write.c).
 *
 * Invariants: as in wait_note.h. lb_note_collect runs under the object's
 * meta lock; lb_note_wait_end writes only the thread's own note (a hot
 * object's waits end without meta), and the final write compares the
 * object's last collect with the wait's times. */
#include "blame/wait_note_ops.h"

#include "blame/object_stats.h"
#include "blame/sites.h"
#include "core/thread.h"
#include "blame/mon.h"

void lb_note_wait_begin(lb_thread_t *self, lb_mon_t *mon, lb_obj_kind kind, uint64_t start_ns,
                        uint32_t node)
{
    lb_wait_note_t *n = self->wait_note;
    n->open_mon = mon;
    n->open_kind = (uint32_t)kind;
    n->open_node = node;
    __atomic_store_n(&n->open_start_ns, start_ns, __ATOMIC_RELEASE);
}

/* Add the completed wait to the thread's home (wait_note.h). */
static void note_home(lb_wait_note_t *n, uint32_t stats_index, uint64_t start_ns, uint64_t end_ns,
                      bool had_deadline)
{
    lb_wait_home_t *h = n->home[0].stats == stats_index ? &n->home[0] : &n->home[1];
    if (h->stats != stats_index)
        *h = (lb_wait_home_t){ .stats = stats_index, .first_ns = start_ns };
    h->deadlines += had_deadline;
    h->last_ns = end_ns;
    h->wait_ns += end_ns - start_ns;
    if (h == &n->home[1] && h->wait_ns > n->home[0].wait_ns) {
        lb_wait_home_t first = n->home[0];
        n->home[0] = n->home[1];
        n->home[1] = first;
    }
}

void lb_note_wait_end(lb_thread_t *self, lb_obj_kind kind, uint32_t stats_index, uint64_t start_ns,
                      uint64_t end_ns, bool timed_out, bool had_deadline)
{
    lb_wait_note_t *n = self->wait_note;
    __atomic_store_n(&n->open_start_ns, 0, __ATOMIC_RELEASE);
    if (!lb_obj_kind_is_signalled(kind) || !stats_index)
        return;
    /* the run goes on: the previous wait ran out of time (no signal ended
     * it: a thread waiting for its work, not one taking part in it), on
     * the same object, and this one began within 1 ms or an eighth of the
     * previous wait of its end */
    if (!n->last_timed_out || n->last_stats != stats_index ||
        !lb_note_run_goes_on(n->last_start_ns, n->last_end_ns, start_ns))
        n->run_start_ns = start_ns;
    if (end_ns > start_ns)
        note_home(n, stats_index, start_ns, end_ns, had_deadline);
    n->last_timed_out = timed_out;
    n->last_stats = stats_index;
    n->last_kind = (uint32_t)kind;
    n->last_start_ns = start_ns;
    n->last_end_ns = end_ns;
    if (end_ns - start_ns > n->longest_end_ns - n->longest_start_ns) {
        n->longest_stats = stats_index;
        n->longest_kind = (uint32_t)kind;
        n->longest_start_ns = start_ns;
        n->longest_end_ns = end_ns;
    }
}

void lb_note_collect(lb_thread_t *self, lb_object_stats_t *stats, uint64_t now, double blame_ns)
{
    if (!stats || !lb_obj_kind_is_signalled(stats->kind))
        return;
    stats->last_collect =
        (lb_collect_note_t){ .at_ns = now, .blame_ns = blame_ns, .thread = self->id, .node = 0 };
    if (blame_ns > stats->most_collect.blame_ns)
        stats->most_collect = stats->last_collect;
}

void lb_note_deposit(lb_thread_t *self, lb_object_stats_t *stats, uint32_t node)
{
    if (!stats || !lb_obj_kind_is_signalled(stats->kind) ||
        stats->last_collect.thread != self->id || stats->last_collect.node != 0)
        return;
    stats->last_collect.node = node;
    if (stats->most_collect.at_ns == stats->last_collect.at_ns &&
        stats->most_collect.thread == self->id)
        stats->most_collect.node = node;
}

void lb_note_lock_site(lb_thread_t *self, uintptr_t call_pc, lb_obj_kind kind)
{
    if (!self->sites || !call_pc)
        return;
    lb_site_t *s = lb_site_lookup(self, lb_site_key(call_pc + 1, kind));
    if (s) {
        s->acquisitions++;
        s->contended++;
    }
}
