/* The final write: merge every thread's CCT into one tree keyed by frame,
 * symbolize each distinct code address once, and store everything in one
 * SQLite transaction in a temporary file that is renamed into place.
 *
 * Runs once, on the finishing thread, after lb_sampler_quiesce(); other
 * threads may still run but no longer write CCTs. Uses malloc freely. */
#include "report/writer/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blame/blame_clock.h"
#include "blame/object_blame.h"
#include "blame/object_stats.h"
#include "blame/sites.h"
#include "common/u64map.h"
#include "common/version.h"
#include "core/phase.h"
#include "core/thread.h"
#include "locks/lifecycle.h"
#include "locks/mon_gc.h"
#include "report/writer/schema.h"
#include "report/writer/structural_write.h"
#include "report/writer/symbolize.h"
#include "report/writer/tailcall.h"
#include "report/writer/top_site.h"
#include "sampler/cct.h"
#include "sampler/sampler.h"
#include "sampler/unwind.h"
#include "util/clock.h"
#include "util/log.h"

typedef struct writer {
    sqlite3 *db;
    lb_symbolizer_t *sym;
    lb_u64map_t frame_of_pc;
    lb_u64map_t module_of_base;
    lb_u64map_t node_of_edge;       /* (parent node << 32 | frame) -> node */
    lb_u64map_t jump_of_pc;         /* call pc -> tail jump, see site_pc */
    uint32_t frames, modules, nodes;
    uint32_t **node_maps;           /* per thread id: local CCT node -> global node */
    uint32_t **leaf_maps;           /* per thread id: local node -> global node of its
                                     * own metrics when a tail call moved them (else 0) */
    uint32_t thread_slots;
    double ns_per_sample;
    uint64_t now;                   /* when the profile is taken: open waits close here */
    sqlite3_stmt *ins_frame, *ins_module, *ins_node, *ins_metric, *ins_site, *ins_blame;
} writer_t;

static int exec_sql(writer_t *w, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(w->db, sql, NULL, NULL, &err) != SQLITE_OK) {
        lb_warn("cannot write profile: %s", err ? err : "sqlite error");
        sqlite3_free(err);
        return -1;
    }
    return 0;
}

static sqlite3_stmt *prepare(writer_t *w, const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(w->db, sql, -1, &st, NULL) != SQLITE_OK)
        return NULL;
    return st;
}

static int step(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

static uint32_t module_id(writer_t *w, const char *path, uintptr_t base)
{
    uint32_t id;
    if (lb_u64map_get(&w->module_of_base, base + 1, &id))
        return id;
    id = ++w->modules;
    lb_u64map_put(&w->module_of_base, base + 1, id);
    sqlite3_bind_int64(w->ins_module, 1, id);
    sqlite3_bind_text(w->ins_module, 2, path, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(w->ins_module, 3, (sqlite3_int64)base);
    step(w->ins_module);
    return id;
}

static uint32_t insert_frame(writer_t *w, const lb_symbol_t *sym, uintptr_t pc,
                             const char *function, const char *file, int line)
{
    uint32_t id = ++w->frames;
    sqlite3_bind_int64(w->ins_frame, 1, id);
    if (sym->module) {
        sqlite3_bind_int64(w->ins_frame, 2, module_id(w, sym->module, sym->base));
        sqlite3_bind_int64(w->ins_frame, 3, (sqlite3_int64)(pc - sym->base));
    } else {
        sqlite3_bind_null(w->ins_frame, 2);
        sqlite3_bind_int64(w->ins_frame, 3, (sqlite3_int64)pc);
    }
    if (function)
        sqlite3_bind_text(w->ins_frame, 4, function, -1, SQLITE_TRANSIENT);
    if (file)
        sqlite3_bind_text(w->ins_frame, 5, file, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(w->ins_frame, 6, line);
    step(w->ins_frame);
    return id;
}

/* Frame map keys: (pc << 4 | i) holds the id of source frame i at pc,
 * outermost first; (pc << 4 | 15) holds how many there are. */
#define LB_FRAME_COUNT_SLOT 15

/* The source frames at a code address, outermost first (the real function,
 * then each inlined call); symbolized once. Returns how many (>= 1), or 0
 * for pc 0. */
static int frame_chain(writer_t *w, uintptr_t pc, uint32_t ids[LB_MAX_INLINE + 1])
{
    uint32_t n;
    if (pc == 0)
        return 0;
    uint64_t key = (uint64_t)pc << 4;
    if (lb_u64map_get(&w->frame_of_pc, key | LB_FRAME_COUNT_SLOT, &n)) {
        for (uint32_t i = 0; i < n; i++)
            lb_u64map_get(&w->frame_of_pc, key | i, &ids[i]);
        return (int)n;
    }
    lb_symbol_t sym;
    lb_symbolize(w->sym, pc, &sym);
    n = 0;
    ids[n++] = insert_frame(w, &sym, pc, sym.function, sym.file, sym.line);
    for (int i = sym.n_inline - 1; i >= 0; i--) {
        const lb_source_frame_t *f = &sym.inline_frames[i];
        ids[n++] = insert_frame(w, &sym, pc, f->function, f->file, f->line);
    }
    for (uint32_t i = 0; i < n; i++)
        lb_u64map_put(&w->frame_of_pc, key | i, ids[i]);
    lb_u64map_put(&w->frame_of_pc, key | LB_FRAME_COUNT_SLOT, n);
    return (int)n;
}

/* The innermost source frame at pc: the program frame that makes a call. */
static uint32_t frame_id(writer_t *w, uintptr_t pc)
{
    uint32_t ids[LB_MAX_INLINE + 1];
    int n = frame_chain(w, pc, ids);
    return n ? ids[n - 1] : 0;
}

/* Where a path that ended in one of our wrappers was really released
 * from: the tail jump of the function that call_pc called, if that
 * function left no frame (tailcall.h), else call_pc itself. Cached. */
static uintptr_t site_pc(writer_t *w, uintptr_t call_pc)
{
    uint32_t v;
    if (!lb_u64map_get(&w->jump_of_pc, call_pc, &v)) {
        uintptr_t jump = lb_tailcall_jump(w->sym, call_pc, lb_pc_in_self);
        int64_t delta = jump ? (int64_t)(jump - call_pc) : 0;
        v = jump && delta > -0x7fffffff && delta < 0x7fffffff ? (uint32_t)(delta + 0x80000000)
                                                                : 0;
        lb_u64map_put(&w->jump_of_pc, call_pc, v);
    }
    return v ? (uintptr_t)((int64_t)call_pc + (int64_t)v - 0x80000000) : call_pc;
}

/* Metrics that only a path ending in our wrappers carries. Join blame
 * sits on the joined thread's start routine (an entry address, not a
 * call), so it does not count. */
static bool is_wrapper_leaf(const lb_metrics_t *m)
{
    if (m->wait_ns)
        return true;
    for (int k = 0; k < LB_OBJ_KINDS; k++)
        if (k != LB_OBJ_JOIN && m->idle_ns[k] != 0)
            return true;
    return false;
}

static uint32_t global_node(writer_t *w, uint32_t parent, uint32_t frame, uint32_t depth)
{
    uint64_t key = (uint64_t)parent << 32 | frame;
    uint32_t id;
    if (lb_u64map_get(&w->node_of_edge, key, &id))
        return id;
    id = ++w->nodes;
    lb_u64map_put(&w->node_of_edge, key, id);
    sqlite3_bind_int64(w->ins_node, 1, id);
    sqlite3_bind_int64(w->ins_node, 2, parent);
    sqlite3_bind_int64(w->ins_node, 3, frame);
    sqlite3_bind_int(w->ins_node, 4, (int)depth);
    step(w->ins_node);
    return id;
}

static bool metrics_empty(const lb_metrics_t *m)
{
    if (m->work_samples || m->overhead_samples || m->wait_ns || m->blamed_count ||
        m->undirected_samples != 0)
        return false;
    for (int k = 0; k < LB_OBJ_KINDS; k++) {
        if (m->idle_ns[k] != 0)
            return false;
    }
    return true;
}

static void put_metric(writer_t *w, uint32_t node, uint32_t thread, const lb_metrics_t *m)
{
    sqlite3_stmt *st = w->ins_metric;
    sqlite3_bind_int64(st, 1, node);
    sqlite3_bind_int64(st, 2, thread);
    sqlite3_bind_double(st, 3, (double)m->work_samples * w->ns_per_sample / 1e9);
    sqlite3_bind_double(st, 4, (double)m->overhead_samples * w->ns_per_sample / 1e9);
    sqlite3_bind_double(st, 5, (double)m->wait_ns / 1e9);
    for (int k = 0; k < LB_OBJ_KINDS; k++)
        sqlite3_bind_double(st, 6 + k, m->idle_ns[k] / 1e9);
    sqlite3_bind_int64(st, 6 + LB_OBJ_KINDS, m->blamed_count);
    sqlite3_bind_double(st, 7 + LB_OBJ_KINDS, m->undirected_samples * w->ns_per_sample / 1e9);
    step(st);
}

/* Merge one thread's CCT; fills w->node_maps[t->id] (local node -> its
 * innermost global node; inlined calls add global nodes in between). */
static int write_thread_tree(writer_t *w, lb_thread_t *t)
{
    if (!t->cct || t->id >= w->thread_slots)
        return 0;
    uint32_t n = t->cct->nodes;
    uint32_t *map = calloc(n ? n : 1, sizeof *map);
    uint32_t *depth = calloc(n ? n : 1, sizeof *depth); /* global depth of map[id] */
    if (!map || !depth) {
        free(map);
        free(depth);
        return -1;
    }
    w->node_maps[t->id] = map;
    for (uint32_t id = 1; id < n; id++) {
        lb_cct_node_t *node = lb_cct_node(t->cct, id);
        if (!node)
            break;
        uint32_t frames[LB_MAX_INLINE + 1];
        int nf = frame_chain(w, node->pc, frames);
        uint32_t g = map[node->parent], d = depth[node->parent];
        for (int i = 0; i < nf; i++)
            g = global_node(w, g, frames[i], ++d);
        map[id] = g;
        depth[id] = d;
    }
    uint32_t *leaf = calloc(n ? n : 1, sizeof *leaf);
    w->leaf_maps[t->id] = leaf;
    for (uint32_t id = 0; id < n; id++) {
        lb_cct_node_t *node = lb_cct_node(t->cct, id);
        if (!node)
            break;
        lb_metrics_t m = node->m;
        if (id == 0)
            m.overhead_samples += t->sampler->busy_samples; /* lockblame's own cost */
        if (metrics_empty(&m))
            continue;
        uint32_t g = map[id];
        uintptr_t pc = id && leaf && is_wrapper_leaf(&m) ? site_pc(w, node->pc) : 0;
        if (pc && pc != node->pc) { /* the tail-called function, below the caller */
            uint32_t frames[LB_MAX_INLINE + 1];
            int nf = frame_chain(w, pc, frames);
            for (int i = 0; i < nf; i++)
                g = global_node(w, g, frames[i], depth[id] + 1 + (uint32_t)i);
            leaf[id] = g;
        }
        put_metric(w, g, t->id, &m);
    }
    free(depth);
    return 0;
}

static uint32_t mapped_node(const writer_t *w, uint32_t thread, uint32_t local)
{
    if (thread >= w->thread_slots || !w->node_maps[thread])
        return 0;
    return w->node_maps[thread][local];
}

/* The node that holds local node's own metrics (mapped_node, or the
 * tail-called function below it). */
static uint32_t leaf_node(const writer_t *w, uint32_t thread, uint32_t local)
{
    if (thread < w->thread_slots && w->leaf_maps[thread] && w->leaf_maps[thread][local])
        return w->leaf_maps[thread][local];
    return mapped_node(w, thread, local);
}

static uint64_t cpu_ns_of(const lb_thread_t *t)
{
    if (__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE))
        return t->cpu_ns;
    if (t->sampler->cpu_at_stop_ns) /* before this write's own cost */
        return t->sampler->cpu_at_stop_ns;
    /* Linux per-thread CPU clock id for a tid (CPUCLOCK_SCHED). */
    clockid_t clock = (clockid_t)((~(unsigned)t->tid << 3) | 6);
    struct timespec ts;
    if (clock_gettime(clock, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void write_threads(writer_t *w)
{
    sqlite3_stmt *st = prepare(w, "INSERT INTO thread VALUES(?,?,?,?,?,?,?,?,?)");
    if (!st)
        return;
    uint64_t start = lb_runtime_start_ns(), now = lb_now_ns();
    for (lb_thread_t *t = lb_thread_registry(); t; t = t->next) {
        sqlite3_bind_int64(st, 1, t->id);
        sqlite3_bind_int64(st, 2, t->tid);
        if (t->start_routine) {
            sqlite3_bind_int64(st, 3, frame_id(w, t->start_routine));
            sqlite3_bind_int64(st, 4, mapped_node(w, t->creator_id, t->creator_node));
        }
        sqlite3_bind_double(st, 5, t->start_ns > start ? (t->start_ns - start) / 1e9 : 0);
        uint64_t end = t->exited ? t->end_ns : now;
        sqlite3_bind_double(st, 6, end > start ? (end - start) / 1e9 : 0);
        sqlite3_bind_double(st, 7, cpu_ns_of(t) / 1e9);
        sqlite3_bind_int64(st, 8, (sqlite3_int64)t->sampler->samples);
        sqlite3_bind_int64(st, 9, (sqlite3_int64)t->sampler->dropped);
        step(st);
    }
    sqlite3_finalize(st);
}

static void write_sites(writer_t *w, lb_thread_t *t)
{
    const lb_site_t *slots = t->sites ? t->sites->slot : t->kept_sites;
    uint32_t n = t->sites ? LB_SITE_SLOTS : t->n_kept_sites;
    for (uint32_t i = 0; i < n; i++) {
        const lb_site_t *s = &slots[i];
        if (!s->key)
            continue;
        sqlite3_stmt *st = w->ins_site;
        sqlite3_bind_int64(st, 1, frame_id(w, site_pc(w, lb_site_ra(s->key) - 1)));
        sqlite3_bind_int64(st, 2, t->id);
        sqlite3_bind_text(st, 3, lb_obj_kind_name(lb_site_kind(s->key)), -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 4, (sqlite3_int64)s->acquisitions); /* at lock sites */
        sqlite3_bind_int64(st, 5, s->contended);
        sqlite3_bind_int64(st, 6, (sqlite3_int64)s->releases);
        step(st);
    }
}

static void write_object_blame(writer_t *w, lb_thread_t *t)
{
    const lb_object_blame_table_t *table = t->object_blame;
    for (uint32_t i = 0; i < table->capacity; i++) {
        const lb_object_blame_t *e = &table->slot[i];
        if (!e->object)
            continue;
        sqlite3_stmt *st = w->ins_blame;
        sqlite3_bind_int64(st, 1, e->object);
        sqlite3_bind_int64(st, 2, leaf_node(w, t->id, e->node));
        sqlite3_bind_int64(st, 3, t->id);
        sqlite3_bind_double(st, 4, e->blame_ns / 1e9);
        sqlite3_bind_int64(st, 5, (sqlite3_int64)e->count);
        step(st);
    }
}

/* Bring every live contended object's accrual up to now, so idleness that
 * is still accruing at exit shows up (as unattributed). */
static void settle_live(lb_mon_t *mon, void *now)
{
    lb_mon_fold_live(mon, NULL);
    lb_object_stats_t *stats = lb_object_stats_at(mon->stats);
    if (!stats)
        return;
    lb_meta_lock(&mon->meta);
    lb_clock_advance(mon, stats, *(uint64_t *)now);
    lb_meta_unlock(&mon->meta);
}

static uint32_t leaf_node_cb(void *ctx, uint32_t thread, uint32_t local)
{
    return leaf_node(ctx, thread, local);
}

static void write_objects(writer_t *w)
{
    uint64_t now = w->now;
    lb_mon_for_each(settle_live, &now);
    sqlite3_stmt *st = prepare(w, "INSERT INTO sync_object VALUES(?,?,?,?,?,?,?,?,?,?)");
    if (!st)
        return;
    uint32_t count = lb_object_stats_count();
    for (uint32_t i = 1; i < count; i++) {
        lb_object_stats_t *s = lb_object_stats_at(i);
        if (!s || !s->addr)
            continue;
        double unattributed = s->accrued_held_ns - s->blamed_ns;
        sqlite3_bind_int64(st, 1, i);
        sqlite3_bind_text(st, 2, lb_obj_kind_name((lb_obj_kind)s->kind), -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, (sqlite3_int64)s->addr);
        if (s->first_node)
            sqlite3_bind_int64(st, 4, mapped_node(w, s->first_thread, s->first_node));
        sqlite3_bind_int64(st, 5, (sqlite3_int64)s->acquisitions);
        sqlite3_bind_int64(st, 6, (sqlite3_int64)s->contended);
        sqlite3_bind_double(st, 7, s->wait_ns / 1e9);
        sqlite3_bind_double(st, 8, s->blamed_ns / 1e9);
        sqlite3_bind_double(st, 9, s->handoff_ns / 1e9);
        sqlite3_bind_double(st, 10, (unattributed > 0 ? unattributed : 0) / 1e9);
        step(st);
    }
    for (int k = 0; k < LB_OBJ_KINDS; k++) {
        uint64_t acquisitions = lb_object_totals_unbound((lb_obj_kind)k);
        for (lb_thread_t *t = lb_thread_registry(); t; t = t->next)
            acquisitions += t->retired_acquisitions[k];
        if (!acquisitions)
            continue;
        sqlite3_bind_int64(st, 1, count + (uint32_t)k);
        sqlite3_bind_text(st, 2, lb_obj_kind_name((lb_obj_kind)k), -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 5, (sqlite3_int64)acquisitions);
        for (int c = 6; c <= 10; c++)
            sqlite3_bind_int(st, c, 0);
        step(st);
    }
    sqlite3_finalize(st);
}

static char *read_command_line(void)
{
    static char buf[4096];
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return strcpy(buf, "?");
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return strcpy(buf, "?");
    for (ssize_t i = 0; i < n - 1; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
    buf[n] = '\0';
    return buf;
}

static void write_run(writer_t *w, const char *reason, uint64_t samples, uint64_t dropped)
{
    sqlite3_stmt *st =
        prepare(w, "INSERT INTO run VALUES(1,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!st)
        return;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    sqlite3_bind_text(st, 1, read_command_line(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, exe, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 3, getpid());
    sqlite3_bind_text(st, 4, lb_sampler_event_name(), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, lb_sampler_event_requested(), -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 6, (sqlite3_int64)lb_sampler_period());
    sqlite3_bind_text(st, 7, lb_sampler_period_unit(), -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 8, w->ns_per_sample);
    sqlite3_bind_double(st, 9, lb_runtime_start_unix());
    sqlite3_bind_double(st, 10, (lb_now_ns() - lb_runtime_start_ns()) / 1e9);
    sqlite3_bind_int64(st, 11, lb_thread_count());
    sqlite3_bind_int64(st, 12, (sqlite3_int64)samples);
    sqlite3_bind_int64(st, 13, (sqlite3_int64)dropped);
    sqlite3_bind_text(st, 14, reason, -1, SQLITE_TRANSIENT);
    step(st);
    sqlite3_finalize(st);
}

/* CPU nanoseconds per sample: the period for clock events; measured CPU
 * time over samples taken for counter events (cycles). */
static double ns_per_sample(uint64_t *samples_out, uint64_t *dropped_out)
{
    uint64_t samples = 0, dropped = 0, cpu = 0;
    for (lb_thread_t *t = lb_thread_registry(); t; t = t->next) {
        samples += t->sampler->samples;
        dropped += t->sampler->dropped;
        cpu += cpu_ns_of(t);
    }
    *samples_out = samples;
    *dropped_out = dropped;
    if (lb_sampler_period_is_time())
        return (double)lb_sampler_period();
    return samples + dropped ? (double)cpu / (double)(samples + dropped) : 0;
}

static void fill_summary(writer_t *w, lb_summary_t *out)
{
    sqlite3_stmt *st = prepare(
        w, "SELECT (SELECT TOTAL(work_s) FROM metric),"
           " (SELECT TOTAL(idle_mutex_s + idle_spin_s + idle_rwlock_s + idle_cond_s"
           "  + idle_barrier_s + idle_sem_s + idle_join_s) FROM metric),"
           " (SELECT TOTAL(wait_s) FROM sync_object)");
    if (st && sqlite3_step(st) == SQLITE_ROW) {
        out->work_s = sqlite3_column_double(st, 0);
        out->idleness_s = sqlite3_column_double(st, 1);
        out->effort_s = out->work_s + out->idleness_s;
        out->wait_s = sqlite3_column_double(st, 2);
    }
    sqlite3_finalize(st);
    static char kind[16];
    lb_top_site(w->db, out->top_site, sizeof out->top_site, kind, sizeof kind, &out->top_site_s);
    out->top_object = kind;
}

static int write_all(writer_t *w, const char *reason, lb_summary_t *summary)
{
    uint64_t samples, dropped;
    w->now = lb_now_ns();
    lb_close_open_waits(w->now);
    w->ns_per_sample = ns_per_sample(&samples, &dropped);
    w->thread_slots = lb_thread_count();
    w->node_maps = calloc(w->thread_slots ? w->thread_slots : 1, sizeof *w->node_maps);
    w->leaf_maps = calloc(w->thread_slots ? w->thread_slots : 1, sizeof *w->leaf_maps);
    if (!w->node_maps || !w->leaf_maps || lb_u64map_init(&w->jump_of_pc, 256) ||
        lb_u64map_init(&w->frame_of_pc, 4096) ||
        lb_u64map_init(&w->module_of_base, 64) || lb_u64map_init(&w->node_of_edge, 4096))
        return -1;
    if (exec_sql(w, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;") ||
        exec_sql(w, lb_schema_sql) || exec_sql(w, "BEGIN"))
        return -1;
    w->ins_frame = prepare(w, "INSERT INTO frame VALUES(?,?,?,?,?,?)");
    w->ins_module = prepare(w, "INSERT INTO module VALUES(?,?,?)");
    w->ins_node = prepare(w, "INSERT INTO node VALUES(?,?,?,?)");
    w->ins_metric = prepare(w, "INSERT INTO metric VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    w->ins_site = prepare(w, "INSERT INTO site VALUES(?,?,?,?,?,?) ON CONFLICT DO UPDATE SET"
                             " acquisitions = acquisitions + excluded.acquisitions,"
                             " contended = contended + excluded.contended,"
                             " releases = releases + excluded.releases");
    w->ins_blame = prepare(w, "INSERT INTO object_blame VALUES(?,?,?,?,?) ON CONFLICT DO"
                              " UPDATE SET blame_s = blame_s + excluded.blame_s,"
                              " count = count + excluded.count");
    if (!w->ins_frame || !w->ins_module || !w->ins_node || !w->ins_metric || !w->ins_site ||
        !w->ins_blame)
        return -1;
    if (exec_sql(w, "INSERT INTO node VALUES(0, NULL, NULL, 0)"))
        return -1;
    w->sym = lb_symbolizer_open();
    for (lb_thread_t *t = lb_thread_registry(); t; t = t->next) {
        if (write_thread_tree(w, t) != 0)
            return -1;
        write_sites(w, t);
        write_object_blame(w, t);
    }
    write_threads(w);
    lb_write_structural(w->db, w->now, leaf_node_cb, w);
    write_objects(w);
    write_run(w, reason, samples, dropped);
    char meta[1536], sampling[1024];
    lb_sampler_meta_rows(sampling, sizeof sampling);
    snprintf(meta, sizeof meta,
             "INSERT INTO meta VALUES('schema_version','%d'),('lockblame_version','%s'),"
             "('writer','liblockblame'),('orphans_reclaimed','%llu'),"
             "('monitored_slots_used','%u')%s",
             LB_SCHEMA_VERSION, LB_VERSION, (unsigned long long)lb_mon_gc_reclaimed(),
             lb_mon_slots_used(), sampling);
    if (exec_sql(w, meta) || exec_sql(w, "COMMIT"))
        return -1;
    fill_summary(w, summary);
    return 0;
}

static void writer_close(writer_t *w)
{
    sqlite3_stmt *stmts[] = { w->ins_frame, w->ins_module, w->ins_node,
                              w->ins_metric, w->ins_site, w->ins_blame };
    for (size_t i = 0; i < sizeof stmts / sizeof stmts[0]; i++)
        sqlite3_finalize(stmts[i]);
    if (w->db)
        sqlite3_close(w->db);
    lb_symbolizer_close(w->sym);
    for (uint32_t i = 0; w->node_maps && i < w->thread_slots; i++)
        free(w->node_maps[i]);
    for (uint32_t i = 0; w->leaf_maps && i < w->thread_slots; i++)
        free(w->leaf_maps[i]);
    free(w->node_maps);
    free(w->leaf_maps);
    lb_u64map_free(&w->jump_of_pc);
    lb_u64map_free(&w->frame_of_pc);
    lb_u64map_free(&w->module_of_base);
    lb_u64map_free(&w->node_of_edge);
}

/* Was the database at path written by a process of this same run: one
 * that started after us (a child or an exec'd image that finished first)
 * or an earlier image of this very process (same pid, before exec)? */
static bool written_during_our_run(const char *path)
{
    sqlite3 *db = NULL;
    bool ours = false;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(db, "SELECT pid, start_unix FROM run", -1, &st, NULL) ==
                SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            ours = sqlite3_column_int(st, 0) == getpid() ||
                   sqlite3_column_double(st, 1) >= lb_runtime_start_unix();
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return ours;
}

/* Where to write: path itself, unless a database of this same run is
 * already there (a wrapper shell exits after the program it ran; an
 * exec'd image after the one it replaced). Then path with ".<pid>" (and a
 * counter) before ".db", so no process's profile replaces another's. */
static void choose_final_path(const char *path, char *out, size_t size)
{
    snprintf(out, size, "%s", path);
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || !written_during_our_run(path))
        return;
    size_t len = strlen(path);
    int stem = len > 3 && strcmp(path + len - 3, ".db") == 0 ? (int)(len - 3) : (int)len;
    for (int n = 0; n < 1000; n++) {
        if (n == 0)
            snprintf(out, size, "%.*s.%d.db", stem, path, (int)getpid());
        else
            snprintf(out, size, "%.*s.%d.%d.db", stem, path, (int)getpid(), n);
        if (lstat(out, &st) != 0)
            return;
    }
}

int lb_write_profile(const char *requested_path, const char *reason, lb_summary_t *summary)
{
    char path[PATH_MAX + 32];
    choose_final_path(requested_path, path, sizeof path);
    summary->path = strdup(path);
    char tmp[PATH_MAX + 64];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    /* O_EXCL|O_NOFOLLOW: never write through a link planted at tmp. */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        lb_warn("cannot write profile %s: %s", path, strerror(errno));
        return -1;
    }
    close(fd);
    writer_t w = { 0 };
    int rc = -1;
    if (sqlite3_open_v2(tmp, &w.db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK)
        rc = write_all(&w, reason, summary);
    if (rc != 0 && w.db && sqlite3_errcode(w.db) != SQLITE_OK)
        lb_warn("cannot write profile %s: %s", path, sqlite3_errmsg(w.db));
    else if (rc != 0)
        lb_warn("cannot write profile %s: out of memory", path);
    writer_close(&w);
    if (rc == 0 && rename(tmp, path) != 0) {
        lb_warn("cannot write profile %s: %s", path, strerror(errno));
        rc = -1;
    }
    if (rc != 0)
        unlink(tmp);
    return rc;
}
