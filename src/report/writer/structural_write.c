/* Open waits and structural waits at the final write (contract in
 * structural_write.h).
 *
 * Runs once, on the finishing thread, after lb_sampler_quiesce(). Other
 * threads may still run: a waiter that wakes while this runs may have its
 * wait counted twice in wait_s (once here, once by itself); the window is
 * the write itself and the count is at most one wait per thread. */
#include "report/writer/structural_write.h"

#include <stdbool.h>
#include <stdlib.h>

#include "blame/blame_clock.h"
#include "common/scratch.h"
#include "blame/object_blame.h"
#include "blame/object_stats.h"
#include "blame/wait_note.h"
#include "core/phase.h"
#include "core/thread.h"
#include "locks/monitored.h"
#include "sampler/cct.h"
#include "util/common.h"
#include "report/writer/writer_int.h"

/* Where t's time in the profile ends (lb_tables_span): a live thread's
 * where sampling stopped, so that its open wait ends with its row. */
static uint64_t thread_end_ns(const lb_thread_t *t, uint64_t now)
{
    uint64_t end, cpu;
    lb_tables_span(t, now, &end, &cpu);
    return end;
}

uint32_t lb_close_open_waits(uint64_t now)
{
    uint32_t closed = 0;
    for (lb_thread_t *t = lb_thread_registry(); t; t = t->next) {
        lb_wait_note_t *n = t->wait_note;
        if (!n)
            continue;
        uint64_t start = __atomic_load_n(&n->open_start_ns, __ATOMIC_ACQUIRE);
        lb_mon_t *mon = n->open_mon;
        if (!start || !mon)
            continue;
        uint64_t end = thread_end_ns(t, now);
        if (start >= end)
            continue;
        uint64_t waited = end - start;
        lb_meta_lock(&mon->meta);
        lb_object_stats_t *stats = lb_object_stats_at(mon->stats);
        if (stats)
            stats->wait_ns += waited;
        if (n->open_node) /* a wait that never ended may be the object's only one */
            lb_object_stats_first_waiter(stats, t->id, n->open_node);
        lb_meta_unlock(&mon->meta);
        /* its time goes where it waits (the root if its context is unknown) */
        lb_cct_node_t *node = t->cct ? lb_cct_node(t->cct, n->open_node) : NULL;
        if (node)
            node->m.wait_ns += waited;
        closed++;
    }
    return closed;
}

typedef struct parked {
    lb_thread_t *t;
    uint32_t stats;
    uint64_t start, end;
    bool open;
    const lb_collect_note_t *collect; /* the signal that ended it (not open) */
} parked_t;

/* The object's collect that came during [start, end] and holds the most
 * of that wait's idleness: the one that collected the most, else its
 * last; NULL if neither came then. A signal at shutdown collects the
 * parked waits' idleness; a later one (on the way out, or before a woken
 * waiter that a busy machine keeps off its CPU returns) collects little,
 * and may come during the wait too. */
static const lb_collect_note_t *collect_during(const lb_object_stats_t *s, uint64_t start,
                                               uint64_t end)
{
    const lb_collect_note_t *c[2] = { &s->most_collect, &s->last_collect };
    for (int i = 0; i < 2; i++)
        if (c[i]->at_ns != 0 && c[i]->at_ns >= start && c[i]->at_ns <= end)
            return c[i];
    return NULL;
}

/* Was t's completed wait on record `stats` of `kind`, [start, end), parked
 * until shutdown, since parked_from (<= start: the start of the run of
 * waits it ends, wait_note.h)? The object's largest collect, or its last,
 * came during it (collect_during), and the thread ended (or the profile
 * is taken) soon after: within a quarter of the time it was parked, not
 * counting the time it was runnable but waiting for a CPU (its schedstat
 * run delay, read at its exit: on a busy machine a woken thread can wait
 * for a CPU longer than the rest of its way out takes). */
static bool parked_until_shutdown(lb_thread_t *t, uint64_t now, uint32_t stats, uint32_t kind,
                                  uint64_t parked_from, uint64_t start, uint64_t end, parked_t *out)
{
    const lb_object_stats_t *s = lb_object_stats_at(stats);
    if (!s || !lb_obj_kind_is_signalled((lb_obj_kind)kind) || end <= start)
        return false;
    if (!parked_from || parked_from > start)
        parked_from = start;
    bool exited = __atomic_load_n(&t->exited, __ATOMIC_ACQUIRE);
    uint64_t thread_end = thread_end_ns(t, now);
    const lb_collect_note_t *collect = collect_during(s, start, end);
    if (!collect || thread_end < end)
        return false;
    uint64_t way_out = thread_end - end;
    if (exited && t->run_delay_ns != UINT64_MAX)
        way_out -= way_out < t->run_delay_ns ? way_out : t->run_delay_ns;
    if (way_out > (end - parked_from) / 4)
        return false;
    *out = (parked_t){ t, stats, parked_from, end, false, collect };
    return true;
}

/* The thread's parked waits (see the header): its open wait or its last
 * completed one, and its longest completed one if that is another; up to
 * two in out[]. The initial thread's waits are a coordinator's (xz's and
 * git's main threads wait, with timed waits, for their workers' output
 * until they are done): only its last wait may be parked, from its own
 * start; runs and the longest wait are for helper threads. */
static uint32_t parked_waits(lb_thread_t *t, uint64_t now, parked_t out[2])
{
    const lb_wait_note_t *n = t->wait_note;
    if (!n)
        return 0;
    bool helper = t->id != 0;
    uint32_t k = 0;
    uint64_t open = __atomic_load_n(&n->open_start_ns, __ATOMIC_ACQUIRE);
    uint64_t end = thread_end_ns(t, now);
    if (open && n->open_mon && lb_obj_kind_is_signalled(n->open_kind) && open < end) {
        out[k] = (parked_t){ t, n->open_mon->stats, open, end, true, NULL };
        k += out[k].stats != 0;
    } else if (parked_until_shutdown(t, now, n->last_stats, n->last_kind,
                                     helper ? n->run_start_ns : 0, n->last_start_ns, n->last_end_ns,
                                     &out[k])) {
        k++;
    }
    if (helper && n->longest_start_ns != n->last_start_ns &&
        parked_until_shutdown(t, now, n->longest_stats, n->longest_kind, 0, n->longest_start_ns,
                              n->longest_end_ns, &out[k]))
        k++;
    return k;
}

/* An idle helper's waiting on its home object (docs/DESIGN.md rule 6). */
typedef struct idle_helper {
    lb_thread_t *t;
    uint32_t stats;
    uint64_t start, end;
    double share; /* of the object's waiting: its blame's part that is the helper's */
} idle_helper_t;

/* The most blame an idle helper's own releases, signals and posts may
 * collect, and the most CPU time it may use, as shares of its waiting on
 * its home object; the least share of the object's waiting that is its. */
#define IDLE_HELPER_COLLECTED 0.05
#define IDLE_HELPER_BUSY      0.10
#define IDLE_HELPER_OWN       0.90

/* The blame t's releases, signals, posts and thread end collected, joins
 * aside (all join blame is structural). */
static double collected_ns(const lb_thread_t *t)
{
    const lb_object_blame_table_t *table = t->object_blame;
    double sum = 0;
    for (uint32_t i = 0; table && i < table->capacity; i++) {
        const lb_object_blame_t *e = &table->slot[i];
        const lb_object_stats_t *s = e->object ? lb_object_stats_at(e->object) : NULL;
        if (s && s->kind != LB_OBJ_JOIN)
            sum += e->blame_ns;
    }
    return sum;
}

/* Is t an idle helper: a helper thread (not the initial one) that waits
 * on one cond/sem, its home, with deadlines (timed waits: it wakes on
 * its own schedule, and the signals that end its waits only make it
 * early), whose waiting there is the object's (nearly all of it), that
 * is busy under a tenth of that time, and whose own work kept nobody
 * waiting (the blame it collected, joins aside, is a small share of its
 * waiting)? Its home object's blame, its part of it, is structural. */
static bool idle_helper(lb_thread_t *t, uint64_t now, idle_helper_t *out)
{
    const lb_wait_note_t *n = t->wait_note;
    if (!n || t->id == 0 || !n->home[0].deadlines)
        return false;
    const lb_wait_home_t *h = &n->home[0];
    const lb_object_stats_t *s = lb_object_stats_at(h->stats);
    if (!s || !lb_obj_kind_is_signalled((lb_obj_kind)s->kind) || !s->wait_ns)
        return false;
    uint64_t waited = h->wait_ns, end = h->last_ns;
    uint64_t open = __atomic_load_n(&n->open_start_ns, __ATOMIC_ACQUIRE);
    uint64_t open_end = thread_end_ns(t, now); /* as lb_close_open_waits closed it */
    if (open && open < open_end && n->open_mon && n->open_mon->stats == h->stats) {
        waited += open_end - open;
        end = open_end;
    }
    double share = (double)waited / (double)s->wait_ns;
    if (share < IDLE_HELPER_OWN ||
        (double)lb_tables_cpu_ns(t) > IDLE_HELPER_BUSY * (double)waited ||
        collected_ns(t) > IDLE_HELPER_COLLECTED * (double)waited)
        return false;
    *out = (idle_helper_t){ t, h->stats, h->first_ns, end, share < 1 ? share : 1 };
    return true;
}

static double seconds_since_start(uint64_t ns)
{
    uint64_t start = lb_runtime_start_ns();
    return ns > start ? (double)(ns - start) / 1e9 : 0;
}

/* Bind and insert one structural_wait row; node 0: none. */
static void insert_row(lb_wstmt_t *st, uint32_t thread, uint32_t stats, uint64_t start,
                       uint64_t end, bool open, int64_t node, int64_t node_thread, double blame_s)
{
    const lb_object_stats_t *s = lb_object_stats_at(stats);
    lb_wbind_int(st, 1, thread);
    lb_wbind_int(st, 2, stats);
    lb_wbind_text(st, 3, lb_obj_kind_name((lb_obj_kind)s->kind));
    lb_wbind_double(st, 4, seconds_since_start(start));
    lb_wbind_double(st, 5, seconds_since_start(end));
    lb_wbind_int(st, 6, open);
    if (node) {
        lb_wbind_int(st, 7, node);
        lb_wbind_int(st, 8, node_thread);
    }
    lb_wbind_double(st, 9, blame_s);
    lb_wstep(st);
}

/* An idle helper's rows: one per context whose signals/posts took its
 * home object's blame (object_blame, logged before), its share of it;
 * made from those rows when the log is replayed. */
static void insert_idle_helper(lb_wstmt_t *st, const idle_helper_t *h)
{
    const lb_object_stats_t *s = lb_object_stats_at(h->stats);
    lb_wbind_int(st, 1, h->t->id);
    lb_wbind_int(st, 2, h->stats);
    lb_wbind_text(st, 3, lb_obj_kind_name((lb_obj_kind)s->kind));
    lb_wbind_double(st, 4, seconds_since_start(h->start));
    lb_wbind_double(st, 5, seconds_since_start(h->end));
    lb_wbind_double(st, 6, h->share);
    lb_wstep(st);
}

static bool idle_home(const idle_helper_t *idle, uint32_t nidle, uint32_t stats)
{
    for (uint32_t i = 0; i < nidle; i++)
        if (idle[i].stats == stats)
            return true;
    return false;
}

void lb_write_structural(writer_t *w, uint64_t now, lb_node_map_fn map, void *ctx)
{
    uint32_t threads = lb_thread_count(), n = 2 * threads, k = 0, nidle = 0;
    parked_t *p = lb_scratch_calloc(n ? n : 1, sizeof *p);
    idle_helper_t *idle = lb_scratch_calloc(threads ? threads : 1, sizeof *idle);
    lb_wstmt_t *st = lb_wprepare(w, LB_ROW_STRUCTURAL);
    if (!p || !idle) {
        lb_scratch_free(p);
        lb_scratch_free(idle);
        return;
    }
    for (lb_thread_t *t = lb_thread_registry(); t && nidle < threads; t = t->next)
        nidle += idle_helper(t, now, &idle[nidle]);
    /* an idle helper's home object's blame is all in its rows: the parked
     * waits that its signals ended are not counted again (open ones, with
     * no blame, are) */
    for (lb_thread_t *t = lb_thread_registry(); t && k + 2 <= n; t = t->next) {
        parked_t found[2];
        uint32_t m = parked_waits(t, now, found);
        for (uint32_t i = 0; i < m; i++)
            if (found[i].open || !idle_home(idle, nidle, found[i].stats))
                p[k++] = found[i];
    }
    for (uint32_t i = 0; i < k; i++) {
        double blame = 0;
        uint32_t node = 0;
        const lb_collect_note_t *c = p[i].collect;
        if (!p[i].open && c && c->node) {
            /* The waits this one signal ended share what it collected. */
            double together = 0;
            for (uint32_t j = 0; j < k; j++)
                if (!p[j].open && p[j].collect && p[j].collect->at_ns == c->at_ns &&
                    p[j].stats == p[i].stats)
                    together += (double)(p[j].end - p[j].start);
            double moved = c->blame_ns < together ? c->blame_ns : together;
            blame = together > 0 ? moved * (double)(p[i].end - p[i].start) / together : 0;
            node = map(ctx, c->thread, c->node);
        }
        insert_row(st, p[i].t->id, p[i].stats, p[i].start, p[i].end, p[i].open, node,
                   node ? c->thread : 0, blame / 1e9);
    }
    for (uint32_t i = 0; i < nidle; i++)
        insert_idle_helper(lb_wprepare(w, LB_ROW_IDLE_HELPER), &idle[i]);
    lb_scratch_free(p);
    lb_scratch_free(idle);
}
