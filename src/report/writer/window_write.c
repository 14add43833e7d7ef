/* One time window of this process: the difference between the counters
 * now and when the last window was written, added to the run's database
 * as rows of the window tables (docs/SCHEMA.md, "Time windows").
 *
 * Invariants:
 *  - Called by one thread at a time (window_thread.c serialises its own
 *    thread, the finish and fork hooks with one lock); uses malloc freely.
 *  - The counters stay cumulative where they are kept; this file keeps a
 *    copy of the values it last wrote (per thread and CCT node, per object
 *    record), which grows with the distinct contexts and objects, never
 *    with time. A window is their difference, so the windows of a process
 *    add up to its whole-run profile, written at exit as before.
 *  - Other threads update the counters while a window is read (except at
 *    the final window, after the sampler quiesced): each value is read
 *    with one atomic load (relaxed), so no value is torn; values of one
 *    node may be a few nanoseconds apart, which the next window absorbs.
 *    A CCT node is linked before its pc and parent are stored (cct.c): a
 *    node read with pc 0 ends what this window reads of that tree, and
 *    the next window reads it. Trees are read under
 *    lb_thread_hold_tables, so no exiting thread unmaps them meanwhile.
 *  - A wait is counted where the waiter counts it, when it ends; a wait
 *    open at a window's end is split there (split_open_wait): the window
 *    gets the part since the wait began (or since the last window), the
 *    window in which it ends gets the rest. Its blame is the release's
 *    and goes to the window of the release; the object's accrual is
 *    brought up to the window's end (lb_mon_accrue_live, under the
 *    object's meta lock, as any event on it would). A window therefore
 *    conserves: its accrual (blame + hand-off + unattributed) is its
 *    waiting; idleness accrued in a hold that ends in the next window is
 *    unattributed in this one and that much less in the next (where the
 *    release takes it as blame). The wait notes are read before and after
 *    all the counters (trees and object records) are copied: a wait that
 *    ended or began in between gets no part now (its count may or may not
 *    be in the copy); a correction
 *    that would take a window's wait below 0 leaves the rest to the next
 *    window, so that the windows always add up to the whole run.
 *  - Ids are the process's own and stable across its windows: the node,
 *    frame and module maps of one persistent writer_t; in the database
 *    they are shifted by the process's number (time_window.process) << 32,
 *    and a window adds only the nodes, frames and modules that are new. */
#include "report/writer/window.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blame/mon.h"
#include "blame/object_stats.h"
#include "blame/wait_note.h"
#include "core/phase.h"
#include "locks/lifecycle.h"
#include "locks/monitored.h"
#include "report/writer/output.h"
#include "report/writer/profile_db.h"
#include "report/writer/writer_int.h"
#include "util/std_fds.h"
#include "sampler/cct.h"
#include "sampler/sampler.h"
#include "util/clock.h"
#include "util/lazy_deps.h"
#include "util/log.h"

typedef struct {
    uint32_t known; /* nodes mapped so far */
    uint32_t cap;
    uint32_t *map;      /* local node -> global node */
    uint32_t *depth;    /* global depth of map[id] */
    uintptr_t *pc;      /* the node's pc */
    lb_metrics_t *last; /* what the last window had reached */
    uint64_t last_busy, last_samples, last_dropped, last_cpu_ns;
    /* the wait open at the last window, and the part of it that windows
     * have counted so far (see split_open_wait) */
    uint64_t open_start_ns, open_counted_ns;
    uint32_t open_node, open_stats;
    /* this window's corrections: the end of one counted wait, the part of
     * one open wait, and what an earlier correction could not take yet
     * (a window never goes below 0: the rest is owed to the next one) */
    uint32_t adj_node[3], adj_stats[2];
    int64_t adj_ns[3];
    uint32_t owed_node;
    int64_t owed_ns;
    /* settled: the thread had ended before a window read all its tree;
     * from then on only the root's children (where a joiner adds its
     * blame, on the start routine) and nodes added since are read */
    bool settled;
    uint32_t *roots, n_roots;
    /* the open wait as read before the copy (see build) */
    uint64_t note_start;
    uint32_t note_node, note_stats;
} thread_seen_t;

/* What one window copied of a tree: the counters of nodes ids[0..count)
 * (ids NULL: nodes 0..count), and the nodes read so far (all below
 * `nodes` are known after this window). */
typedef struct {
    lb_metrics_t *now;
    uint32_t *ids;
    uint32_t count, nodes;
} tree_copy_t;

typedef struct {
    uint64_t contended, wait_ns;
    double held_ns, blamed_ns, handoff_ns;
    int64_t owed_ns; /* a correction of its wait still to take (<= 0) */
} object_seen_t;

static struct {
    bool open;
    writer_t w;
    thread_seen_t *threads;
    uint32_t n_threads;
    object_seen_t *objects;
    uint32_t n_objects;
    uint32_t seq;          /* windows written */
    uint64_t start_ns;     /* this window's start (monotonic) */
    sqlite3_int64 process; /* time_window.process, 0 until the first commit */
    uint32_t sent_modules, sent_frames, sent_nodes;
    const char *reason;
} ws;

static uint64_t load_u64(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static double load_double(const double *p)
{
    double v;
    __atomic_load(p, &v, __ATOMIC_RELAXED);
    return v;
}

static void load_metrics(const lb_metrics_t *src, lb_metrics_t *dst)
{
    dst->work_samples = load_u64(&src->work_samples);
    dst->overhead_samples = load_u64(&src->overhead_samples);
    dst->wait_ns = load_u64(&src->wait_ns);
    for (int k = 0; k < LB_OBJ_KINDS; k++)
        dst->idle_ns[k] = load_double(&src->idle_ns[k]);
    dst->undirected_samples = load_double(&src->undirected_samples);
    dst->blamed_count = __atomic_load_n(&src->blamed_count, __ATOMIC_RELAXED);
}

/* now - last, for a counter that only grows (a fork child's counters
 * restart from 0: the new value is the difference then). */
static uint64_t grown(uint64_t now, uint64_t last)
{
    return now >= last ? now - last : now;
}

static void metrics_diff(lb_metrics_t *now, const lb_metrics_t *last, lb_metrics_t *out)
{
    out->work_samples = grown(now->work_samples, last->work_samples);
    out->overhead_samples = grown(now->overhead_samples, last->overhead_samples);
    out->wait_ns = grown(now->wait_ns, last->wait_ns);
    for (int k = 0; k < LB_OBJ_KINDS; k++)
        out->idle_ns[k] = now->idle_ns[k] - last->idle_ns[k];
    out->undirected_samples = now->undirected_samples - last->undirected_samples;
    out->blamed_count = now->blamed_count >= last->blamed_count
                            ? now->blamed_count - last->blamed_count
                            : now->blamed_count;
}

static int grow(void **p, size_t elem, uint32_t *cap, uint32_t want)
{
    if (want <= *cap)
        return 0;
    uint32_t n = *cap ? *cap : 64;
    while (n < want)
        n *= 2;
    void *q = realloc(*p, (size_t)n * elem);
    if (!q)
        return -1;
    memset((char *)q + (size_t)*cap * elem, 0, (size_t)(n - *cap) * elem);
    *p = q;
    *cap = n;
    return 0;
}

static thread_seen_t *seen_of(uint32_t id)
{
    uint32_t cap = ws.n_threads;
    if (grow((void **)&ws.threads, sizeof *ws.threads, &cap, id + 1))
        return NULL;
    ws.n_threads = cap;
    return &ws.threads[id];
}

static int seen_reserve(thread_seen_t *s, uint32_t nodes)
{
    if (nodes <= s->cap)
        return 0;
    uint32_t cap = s->cap;
    if (grow((void **)&s->map, sizeof *s->map, &cap, nodes))
        return -1;
    cap = s->cap;
    if (grow((void **)&s->depth, sizeof *s->depth, &cap, nodes))
        return -1;
    cap = s->cap;
    if (grow((void **)&s->pc, sizeof *s->pc, &cap, nodes))
        return -1;
    cap = s->cap;
    if (grow((void **)&s->last, sizeof *s->last, &cap, nodes))
        return -1;
    s->cap = cap;
    return 0;
}

/* Read node id's counters into *m and, when it is new, its pc and
 * parent; false when it is being linked (the next window reads it). */
static bool read_node(const lb_cct_t *cct, thread_seen_t *s, uint32_t id, lb_metrics_t *m)
{
    lb_cct_node_t *node = lb_cct_node(cct, id);
    if (!node)
        return false;
    load_metrics(&node->m, m);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (id < s->known)
        return true;
    uintptr_t pc = __atomic_load_n(&node->pc, __ATOMIC_RELAXED);
    uint32_t parent = __atomic_load_n(&node->parent, __ATOMIC_RELAXED);
    if (id > 0 && (pc == 0 || parent >= id))
        return false;
    s->pc[id] = pc;
    s->map[id] = parent; /* local for now: mapped outside the hold */
    return true;
}

/* Copy a tree's counters now (under the hold: see above): all of it, or
 * a settled thread's roots and new nodes. When the thread had ended
 * before (exited), it is settled from now on. */
static void copy_tree(lb_thread_t *t, thread_seen_t *s, bool exited, tree_copy_t *c)
{
    const lb_cct_t *cct = t->cct;
    uint32_t n = cct ? __atomic_load_n(&cct->nodes, __ATOMIC_ACQUIRE) : 0;
    *c = (tree_copy_t){ 0 };
    if (!n || seen_reserve(s, n))
        return;
    uint32_t fresh = n > s->known ? n - s->known : 0;
    uint32_t room = s->settled ? s->n_roots + fresh : n;
    c->now = malloc((size_t)room * sizeof *c->now);
    c->ids = s->settled ? malloc((size_t)room * sizeof *c->ids) : NULL;
    if (!c->now || (s->settled && !c->ids)) {
        free(c->now);
        free(c->ids);
        *c = (tree_copy_t){ 0 };
        return;
    }
    if (s->settled) {
        for (uint32_t i = 0; i < s->n_roots; i++) {
            c->ids[c->count] = s->roots[i];
            load_metrics(&lb_cct_node(cct, s->roots[i])->m, &c->now[c->count++]);
        }
        for (c->nodes = s->known; c->nodes < n; c->nodes++) {
            if (!read_node(cct, s, c->nodes, &c->now[c->count]))
                break;
            c->ids[c->count++] = c->nodes;
        }
        return;
    }
    for (c->nodes = 0; c->nodes < n; c->nodes++) {
        if (!read_node(cct, s, c->nodes, &c->now[c->count]))
            break;
        c->count++;
    }
    if (!exited || c->nodes < n)
        return;
    /* all of an ended thread's tree: settle it, noting its roots */
    uint32_t roots = 0;
    for (uint32_t id = 1; id < n; id++)
        roots += lb_cct_node(cct, id)->parent == 0;
    s->roots = malloc((roots ? roots : 1) * sizeof *s->roots);
    if (!s->roots)
        return;
    for (uint32_t id = 1; id < n; id++) {
        if (lb_cct_node(cct, id)->parent == 0)
            s->roots[s->n_roots++] = id;
    }
    s->settled = true;
}

/* The wait t has open now: its start (0: none), context and object. */
static uint64_t open_wait(lb_thread_t *t, uint32_t *node, uint32_t *stats)
{
    lb_wait_note_t *n = t->wait_note;
    if (!n)
        return 0;
    uint64_t start = __atomic_load_n(&n->open_start_ns, __ATOMIC_ACQUIRE);
    *node = __atomic_load_n(&n->open_node, __ATOMIC_RELAXED);
    lb_mon_t *mon = __atomic_load_n(&n->open_mon, __ATOMIC_RELAXED);
    *stats = mon ? __atomic_load_n(&mon->stats, __ATOMIC_RELAXED) : 0;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return __atomic_load_n(&n->open_start_ns, __ATOMIC_RELAXED) == start ? start : 0;
}

/* The window's corrections for t (s->adj_*), given the wait it had open
 * from before its counters were copied until after (start; 0: none, or
 * one that ended or began meanwhile), against what the last window saw.
 * At the final window (closed: lb_close_open_waits counted the open
 * waits) no part is open. */
static void split_open_wait(thread_seen_t *s, uint64_t start, uint32_t node, uint32_t stats,
                            uint64_t end, bool closed)
{
    s->adj_ns[0] = s->adj_ns[1] = 0;
    s->adj_node[2] = s->owed_node;
    s->adj_ns[2] = s->owed_ns;
    s->owed_ns = 0;
    if (closed || start >= end)
        start = 0;
    if (s->open_start_ns && s->open_start_ns != start) {
        /* the wait counted in part has ended: its waiter counted all of it */
        s->adj_node[0] = s->open_node;
        s->adj_stats[0] = s->open_stats;
        s->adj_ns[0] = -(int64_t)s->open_counted_ns;
        s->open_counted_ns = 0;
    }
    s->open_start_ns = start;
    if (!start)
        return;
    s->adj_node[1] = s->open_node = node;
    s->adj_stats[1] = s->open_stats = stats;
    s->adj_ns[1] = (int64_t)(end - start - s->open_counted_ns);
    s->open_counted_ns = end - start;
}

/* ns + by, at least 0; what it could not take is left in *owed. */
static uint64_t adjusted(uint64_t ns, int64_t by, int64_t *owed)
{
    int64_t v = (int64_t)ns + by;
    *owed = v < 0 ? v : 0;
    return v < 0 ? 0 : (uint64_t)v;
}

/* One thread's metric rows: map its new nodes, write what changed.
 * Returns how many rows. */
static uint32_t thread_rows(writer_t *w, lb_thread_t *t, thread_seen_t *s, const tree_copy_t *c)
{
    uint32_t n = c->nodes;
    for (uint32_t id = s->known ? s->known : 1; id < n; id++) {
        uint32_t parent = s->map[id];
        s->depth[id] = s->depth[parent];
        s->map[id] = lb_merge_child(w, s->map[parent], &s->depth[id], s->pc[id]);
    }
    if (s->known == 0)
        s->map[0] = s->depth[0] = 0;
    if (n > s->known)
        s->known = n;
    if (!c->ids) /* lockblame's own cost, as at exit (settled: no more) */
        c->now[0].overhead_samples += load_u64(&t->sampler->busy_samples);
    uint32_t rows = 0;
    for (uint32_t i = 0; i < c->count; i++) {
        uint32_t id = c->ids ? c->ids[i] : i;
        lb_metrics_t d;
        metrics_diff(&c->now[i], &s->last[id], &d);
        s->last[id] = c->now[i];
        int64_t by = 0, owed;
        for (int a = 0; a < 3; a++) {
            if (s->adj_ns[a] && s->adj_node[a] == id)
                by += s->adj_ns[a];
        }
        d.wait_ns = adjusted(d.wait_ns, by, &owed);
        if (owed) {
            s->owed_node = id;
            s->owed_ns = owed;
        }
        if (lb_merge_metrics_empty(&d))
            continue;
        uint32_t g = id ? lb_merge_metric_node(w, s->map[id], s->depth[id], s->pc[id], &d) : 0;
        lb_merge_put_metric(w, g, t->id, &d);
        rows++;
    }
    return rows;
}

static void thread_row(writer_t *w, lb_wstmt_t *st, lb_thread_t *t, thread_seen_t *s, uint64_t end)
{
    uint64_t base = lb_runtime_start_ns();
    uint64_t born = t->start_ns > ws.start_ns ? t->start_ns : ws.start_ns;
    uint64_t died, cpu; /* the last window's live threads: where sampling stopped */
    lb_tables_span(t, end, &died, &cpu);
    if (died > end)
        died = end;
    uint64_t samples = load_u64(&t->sampler->samples);
    uint64_t dropped = load_u64(&t->sampler->dropped);
    lb_wbind_int(st, 1, t->id);
    lb_wbind_int(st, 2, lb_thread_os_tid(t));
    if (t->start_routine)
        lb_wbind_int(st, 3, lb_merge_frame(w, t->start_routine));
    lb_wbind_double(st, 4, (born - base) / 1e9);
    lb_wbind_double(st, 5, (died > born ? died - base : born - base) / 1e9);
    lb_wbind_double(st, 6, grown(cpu, s->last_cpu_ns) / 1e9);
    lb_wbind_int(st, 7, (sqlite3_int64)grown(samples, s->last_samples));
    lb_wbind_int(st, 8, (sqlite3_int64)grown(dropped, s->last_dropped));
    lb_wstep(st);
    s->last_cpu_ns = cpu;
    s->last_samples = samples;
    s->last_dropped = dropped;
}

/* The open waits' parts on object record i (split_open_wait). */
static int64_t object_adjustment(uint32_t i)
{
    int64_t ns = 0;
    for (uint32_t t = 0; t < ws.n_threads; t++) {
        for (int a = 0; a < 2; a++) {
            if (ws.threads[t].adj_ns[a] && ws.threads[t].adj_stats[a] == i)
                ns += ws.threads[t].adj_ns[a];
        }
    }
    return ns;
}

/* The object records' counters now, indexed by record (*n of them; owed_ns
 * is 1 for a record that was read, 0 for none), read with the trees (see
 * build). NULL: no memory. */
static object_seen_t *copy_objects(uint32_t *n)
{
    *n = lb_object_stats_count();
    object_seen_t *now = calloc(*n ? *n : 1, sizeof *now);
    for (uint32_t i = 1; now && i < *n; i++) {
        lb_object_stats_t *s = lb_object_stats_at(i);
        if (!s || !__atomic_load_n(&s->addr, __ATOMIC_RELAXED))
            continue;
        now[i] = (object_seen_t){
            .contended = load_u64(&s->contended),
            .wait_ns = load_u64(&s->wait_ns),
            .held_ns = load_double(&s->accrued_held_ns),
            .blamed_ns = load_double(&s->blamed_ns),
            .handoff_ns = load_double(&s->handoff_ns),
            .owed_ns = 1, /* (a mark: this record was read) */
        };
        if (__atomic_load_n(&s->shared, __ATOMIC_RELAXED))
            lb_tables_shared_accrual(s, &now[i].held_ns, &now[i].handoff_ns); /* as at exit */
    }
    return now;
}

static void object_rows(writer_t *w, object_seen_t *copied, uint32_t count)
{
    lb_wstmt_t *st = lb_wprepare(w, LB_ROW_WINDOW_OBJECT);
    uint32_t cap = ws.n_objects;
    if (!copied || grow((void **)&ws.objects, sizeof *ws.objects, &cap, count))
        return;
    ws.n_objects = cap;
    for (uint32_t i = 1; i < count; i++) {
        lb_object_stats_t *s = lb_object_stats_at(i);
        if (!s || !copied[i].owed_ns)
            continue;
        object_seen_t now = copied[i];
        now.owed_ns = 0;
        object_seen_t *last = &ws.objects[i];
        int64_t owed = last->owed_ns;
        object_seen_t d = {
            .contended = grown(now.contended, last->contended),
            .wait_ns =
                adjusted(grown(now.wait_ns, last->wait_ns), object_adjustment(i) + owed, &owed),
            .held_ns = now.held_ns - last->held_ns,
            .blamed_ns = now.blamed_ns - last->blamed_ns,
            .handoff_ns = now.handoff_ns - last->handoff_ns,
        };
        *last = now;
        last->owed_ns = owed;
        if (!d.contended && !d.wait_ns && d.held_ns == 0 && d.blamed_ns == 0 && d.handoff_ns == 0)
            continue;
        lb_wbind_int(st, 1, i);
        lb_wbind_text(st, 2, lb_obj_kind_name((lb_obj_kind)s->kind));
        lb_wbind_int(st, 3, (sqlite3_int64)s->addr);
        lb_wbind_int(st, 4, (sqlite3_int64)d.contended);
        lb_wbind_double(st, 5, d.wait_ns / 1e9);
        lb_wbind_double(st, 6, d.blamed_ns / 1e9);
        lb_wbind_double(st, 7, d.handoff_ns / 1e9);
        lb_wbind_double(st, 8, (d.held_ns - d.blamed_ns) / 1e9);
        lb_wstep(st);
    }
}

static int open_writer(void)
{
    char why[256];
    if (!lb_sqlite_open(why, sizeof why)) {
        lb_warn("cannot write time windows to %s: %s", lb_output_path(), why);
        return -1;
    }
    writer_t *w = &ws.w;
    w->flush_early = true; /* a window always commits */
    lb_wopen_log(w);
    if (lb_profile_db_create(&w->db) != SQLITE_OK || lb_merge_open(w) != 0) {
        lb_warn("cannot write time windows to %s: out of memory", lb_output_path());
        return -1;
    }
    ws.open = true;
    return 0;
}

/* The window's rows in the in-memory database's main tables. */
static int build(uint64_t end, bool closed)
{
    writer_t *w = &ws.w;
    uint64_t samples, dropped;
    w->error = 0; /* a window's rows go in whole or not at all */
    lb_merge_forget_unloaded(w);
    w->ns_per_sample = lb_tables_ns_per_sample(&samples, &dropped);
    if (lb_wsql(w, "DELETE FROM metric; DELETE FROM thread; DELETE FROM sync_object;"
                   " DELETE FROM run"))
        return -1;
    lb_u64map_free(&w->metric_keys); /* the window's metric rows start over */
    /* Copy every tree under one short hold, then map and write. */
    uint32_t count = lb_thread_count();
    tree_copy_t *copies = calloc(count ? count : 1, sizeof *copies);
    if (!copies)
        return -1;
    /* The objects' accrual up to the window's end, where open waits are
     * split, so that the window conserves (see above). */
    if (!closed)
        lb_mon_for_each(lb_mon_accrue_live, &end);
    for (uint32_t i = 0; i < ws.n_threads; i++) /* threads not read now correct nothing */
        ws.threads[i].adj_ns[0] = ws.threads[i].adj_ns[1] = ws.threads[i].adj_ns[2] = 0;
    /* The open waits, then every tree and object record, then the open
     * waits again: a wait open at both reads is in none of the counters
     * copied (see above). */
    for (lb_thread_t *t = lb_thread_registry(); t; t = t->next) {
        thread_seen_t *s = t->id < count ? seen_of(t->id) : NULL;
        if (s)
            s->note_start = open_wait(t, &s->note_node, &s->note_stats);
    }
    lb_thread_hold_tables();
    for (lb_thread_t *t = lb_thread_registry(); t; t = t->next) {
        if (t->id < count && t->id < ws.n_threads)
            copy_tree(t, &ws.threads[t->id], __atomic_load_n(&t->exited, __ATOMIC_ACQUIRE),
                      &copies[t->id]);
    }
    lb_thread_release_tables();
    uint32_t nobjects;
    object_seen_t *objects = copy_objects(&nobjects);
    for (lb_thread_t *t = lb_thread_registry(); t; t = t->next) {
        if (t->id >= count || t->id >= ws.n_threads)
            continue;
        thread_seen_t *s = &ws.threads[t->id];
        uint32_t node, stats;
        uint64_t start = open_wait(t, &node, &stats) == s->note_start ? s->note_start : 0;
        split_open_wait(s, start, s->note_node, s->note_stats, end, closed);
    }
    lb_wstmt_t *st = lb_wprepare(w, LB_ROW_WINDOW_THREAD);
    uint64_t all_samples = 0, all_dropped = 0;
    for (lb_thread_t *t = lb_thread_registry(); t && st; t = t->next) {
        if (t->id >= count || !ws.threads || t->id >= ws.n_threads)
            continue;
        thread_seen_t *s = &ws.threads[t->id];
        tree_copy_t *c = &copies[t->id];
        uint32_t rows = c->now ? thread_rows(w, t, s, c) : 0;
        free(c->now);
        free(c->ids);
        /* a thread that ended before the window has a row only when its
         * metrics moved (a joiner's blame on its start routine) */
        bool ended_before =
            __atomic_load_n(&t->exited, __ATOMIC_ACQUIRE) && t->end_ns < ws.start_ns;
        uint64_t before = s->last_samples, dropped_before = s->last_dropped;
        if (!ended_before || rows)
            thread_row(w, st, t, s, end);
        all_samples += s->last_samples - before;
        all_dropped += s->last_dropped - dropped_before;
    }
    free(copies);
    object_rows(w, objects, nobjects);
    free(objects);
    lb_tables_run(w, ws.reason, all_samples, all_dropped);
    char sql[160];
    snprintf(sql, sizeof sql, "UPDATE run SET duration_s = %.9f", (end - ws.start_ns) / 1e9);
    if (w->error) { /* rows replayed as it went were lost */
        lb_warn("cannot write a time window: %s", sqlite3_errstr(w->error));
        return -1;
    }
    return lb_wsql(w, sql);
}

/* In the commit's transaction: the window's rows into "out". */
static int add_window(sqlite3 *db, void *arg)
{
    const uint64_t *end = arg;
    if (ws.process == 0) {
        sqlite3_stmt *st = NULL;
        int rc = sqlite3_prepare_v2(db, "SELECT COALESCE(MAX(process), 0) + 1 FROM out.time_window",
                                    -1, &st, NULL);
        if (rc != SQLITE_OK)
            return rc;
        rc = sqlite3_step(st);
        ws.process = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
        sqlite3_finalize(st);
        if (!ws.process)
            return SQLITE_ERROR;
    }
    long long b = (long long)ws.process << 32;
    uint64_t base = lb_runtime_start_ns();
    double unix0 = lb_runtime_start_unix();
    char *q = sqlite3_mprintf(
        "INSERT INTO out.window_module SELECT id + %lld, path, base, build_id FROM main.module"
        " WHERE id > %u;"
        "INSERT INTO out.window_frame SELECT id + %lld, CASE WHEN module_id > 0 THEN module_id"
        " + %lld END, offset, function, file, line FROM main.frame WHERE id > %u;"
        "INSERT INTO out.window_node SELECT 0, NULL, NULL, 0"
        " WHERE NOT EXISTS (SELECT 1 FROM out.window_node WHERE id = 0);"
        "INSERT INTO out.window_node SELECT id + %lld, CASE WHEN parent_id > 0 THEN parent_id"
        " + %lld ELSE 0 END, frame_id + %lld, depth FROM main.node WHERE id > %u;"
        "INSERT INTO out.time_window(process, seq, run_key, pid, start_s, end_s, start_unix,"
        " end_unix, reason) VALUES(%lld, %u, %Q, %d, %.9f, %.9f, %.6f, %.6f, %Q);"
        "INSERT INTO out.window_run SELECT last_insert_rowid(), id + %lld, command, executable,"
        " pid, event, event_requested, period, period_unit, ns_per_sample, start_unix,"
        " duration_s, threads, samples, samples_dropped, exit_reason, ppid, exec_gen,"
        " proc_start, run_key FROM main.run;",
        b, ws.sent_modules, b, b, ws.sent_frames, b, b, b, ws.sent_nodes, (long long)ws.process,
        ws.seq, lb_output_run_key(), (int)getpid(), (ws.start_ns - base) / 1e9, (*end - base) / 1e9,
        unix0 + (ws.start_ns - base) / 1e9, unix0 + (*end - base) / 1e9, ws.reason, b);
    int rc = q ? sqlite3_exec(db, q, NULL, NULL, NULL) : SQLITE_NOMEM;
    sqlite3_free(q);
    if (rc != SQLITE_OK)
        return rc;
    q = sqlite3_mprintf(
        "INSERT INTO out.window_thread SELECT w.id, t.id + %lld, tid, start_frame_id + %lld,"
        " NULL, start_s, end_s, cpu_s, samples, samples_dropped, run_id + %lld, NULL, NULL"
        " FROM main.thread t, (SELECT MAX(id) AS id FROM out.time_window) w;"
        "INSERT INTO out.window_metric SELECT w.id, CASE WHEN node_id > 0 THEN node_id + %lld"
        " ELSE 0 END, thread_id + %lld, work_s, overhead_s, wait_s, idle_mutex_s, idle_spin_s,"
        " idle_rwlock_s, idle_cond_s, idle_barrier_s, idle_sem_s, idle_join_s, blamed_count,"
        " idle_undirected_s, idle_futex_s FROM main.metric,"
        " (SELECT MAX(id) AS id FROM out.time_window) w;"
        "INSERT INTO out.window_object SELECT w.id, o.id + %lld, object, address, NULL,"
        " acquisitions, contended, wait_s, blame_s, handoff_s, unattributed_s, run_id + %lld,"
        " sampled_waits FROM main.sync_object o, (SELECT MAX(id) AS id FROM out.time_window) w;",
        b, b, b, b, b, b, b);
    rc = q ? sqlite3_exec(db, q, NULL, NULL, NULL) : SQLITE_NOMEM;
    sqlite3_free(q);
    return rc;
}

/* One window, with the program's closed standard descriptors held while
 * SQLite runs (util/std_fds.h): its first use opens /dev/urandom, and a
 * window commits to the run's file. */
static int write_window(const char *reason);

int lb_window_write(const char *reason)
{
    unsigned held = lb_std_fds_hold();
    int rc = write_window(reason);
    lb_std_fds_release(held);
    return rc;
}

static int write_window(const char *reason)
{
    if (!ws.open && open_writer() != 0)
        return -1;
    if (!ws.start_ns)
        ws.start_ns = lb_runtime_start_ns();
    uint64_t end = lb_now_ns();
    ws.reason = reason;
    bool closed = strcmp(reason, "interval") != 0 && strcmp(reason, "snapshot") != 0;
    if (lb_wsql(&ws.w, "BEGIN") || build(end, closed) != 0) {
        lb_wrollback(&ws.w);
        return -1;
    }
    lb_wsql(&ws.w, "COMMIT");
    int rc = lb_output_commit_with(ws.w.db, add_window, &end);
    if (rc == 0) {
        ws.sent_modules = ws.w.modules;
        ws.sent_frames = ws.w.frames;
        ws.sent_nodes = ws.w.nodes;
        ws.seq++;
    }
    ws.start_ns = end; /* a failed window's counts are lost, not moved on */
    /* libdwfl's files closed until the next window needs a name: the
     * program's next open() gets the descriptor it gets natively */
    lb_merge_release_files(&ws.w);
    return rc;
}

bool lb_window_written(void)
{
    return ws.seq > 0;
}

void lb_window_forget(void)
{
    /* A fork child: its counters restarted, its ids are its own. The
     * parent's in-memory database is closed here, where only this thread
     * runs and the lock kept any window write out of the fork. */
    if (ws.open) {
        lb_merge_close(&ws.w);
        lb_wclose_log(&ws.w);
        sqlite3_close(ws.w.db);
    }
    for (uint32_t i = 0; i < ws.n_threads; i++) {
        free(ws.threads[i].map);
        free(ws.threads[i].depth);
        free(ws.threads[i].pc);
        free(ws.threads[i].last);
        free(ws.threads[i].roots);
    }
    free(ws.threads);
    free(ws.objects);
    memset(&ws, 0, sizeof ws);
    ws.start_ns = lb_now_ns();
}
