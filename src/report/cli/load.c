/*
 * load.c - read every table of a validated lockblame database into the
 * arrays of struct lb_profile with one SELECT per table, then resolve the
 * database ids to array indices. The per-node aggregation lives in tree.c.
 *
 * Failure contract: an SQLite error while reading means a corrupt file and
 * exits 2 (lb_db_fail); dangling references (a parent or frame id that has
 * no row) are tolerated and become -1, so views never index out of range.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/module_name.h"
#include "report/cli/db.h"
#include "report/cli/debug_names.h"
#include "report/cli/profile.h"
#include "report/cli/windows.h"
#include "report/cli/views.h"

/* id -> index: a direct table when the ids are dense (the usual case, and
 * the fast one for 1M nodes), otherwise a hash map. */
struct idindex {
    int64_t min, max;
    int32_t *direct; /* max - min + 1 entries, or NULL */
    struct lb_map map;
};

/* Where an array of records with an `id` member starts its first id
 * (NULL for no array). */
#define ID_BASE(array) ((array) ? (const void *)&(array)[0].id : NULL)

static void idindex_build(struct idindex *ix, size_t n, const void *base, size_t stride)
{
    memset(ix, 0, sizeof *ix);
    if (!n)
        return;
    const char *b = base;

    ix->min = ix->max = *(const int64_t *)b;
    for (size_t i = 1; i < n; i++) {
        int64_t id = *(const int64_t *)(b + i * stride);

        if (id < ix->min)
            ix->min = id;
        if (id > ix->max)
            ix->max = id;
    }
    uint64_t span = (uint64_t)(ix->max - ix->min) + 1;

    if (span <= 2 * (uint64_t)n + 1024) {
        ix->direct = lb_xmalloc(span * sizeof *ix->direct);
        memset(ix->direct, 0xff, span * sizeof *ix->direct);
        for (size_t i = 0; i < n; i++)
            ix->direct[*(const int64_t *)(b + i * stride) - ix->min] = (int32_t)i;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        bool is_new;
        int32_t *slot =
            lb_map_slot(&ix->map, (uint64_t) * (const int64_t *)(b + i * stride), &is_new);

        *slot = (int32_t)i;
    }
}

static int32_t idindex_get(const struct idindex *ix, sqlite3_stmt *st, int col)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        return -1;
    int64_t id = sqlite3_column_int64(st, col);

    if (ix->direct)
        return id < ix->min || id > ix->max ? -1 : ix->direct[id - ix->min];
    return lb_map_get(&ix->map, (uint64_t)id);
}

static void idindex_free(struct idindex *ix)
{
    free(ix->direct);
    lb_map_free(&ix->map);
}

struct query {
    sqlite3 *db;
    const char *path;
    const char *what; /* table name, for messages */
    sqlite3_stmt *st;
};

static void q_prepare(struct query *q, sqlite3 *db, const char *path, const char *what,
                      const char *sql)
{
    q->db = db;
    q->path = path;
    q->what = what;
    if (sqlite3_prepare_v2(db, sql, -1, &q->st, NULL) != SQLITE_OK)
        lb_db_fail(db, path, what);
}

/* q_prepare of a statement built from fmt: one column list per table,
 * with the parts that differ between schema versions passed as %s. */
__attribute__((format(printf, 5, 6))) static void
q_preparef(struct query *q, sqlite3 *db, const char *path, const char *what, const char *fmt, ...)
{
    char sql[512];
    va_list ap;

    va_start(ap, fmt);
    int n = vsnprintf(sql, sizeof sql, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof sql)
        cli_die(LB_EXIT_FAIL, "%s: query on '%s' too long", path, what);
    q_prepare(q, db, path, what, sql);
}

/* true while there is a row; errors exit. */
static bool q_step(struct query *q)
{
    int rc = sqlite3_step(q->st);

    if (rc == SQLITE_ROW)
        return true;
    if (rc != SQLITE_DONE)
        lb_db_fail(q->db, q->path, q->what);
    sqlite3_finalize(q->st);
    q->st = NULL;
    return false;
}

static char *col_str(sqlite3_stmt *st, int col)
{
    const unsigned char *s = sqlite3_column_text(st, col);

    return s ? lb_xstrdup((const char *)s) : NULL;
}

/* Row count of a table, to size an array once (SQLite counts b-tree cells
 * without decoding rows). 0 on error: the SELECT that follows reports it. */
static size_t table_rows(sqlite3 *db, const char *table)
{
    char sql[64];
    sqlite3_stmt *st;
    size_t n = 0;

    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return 0;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0)
        n = (size_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

#define PRESIZE(arr, cap, db, table) \
    lb_grow((void **)&(arr), &(cap), table_rows((db), (table)) + 1, sizeof *(arr))

#define PUSH(arr, n, cap) \
    (lb_grow((void **)&(arr), &(cap), (size_t)(n) + 1, sizeof *(arr)), &(arr)[(n)++])

/* Does table have column? (Columns added by later schema versions.) */
static bool has_column(sqlite3 *db, const char *table, const char *column)
{
    sqlite3_stmt *st = NULL;
    bool found = false;
    char sql[128];

    snprintf(sql, sizeof sql, "SELECT 1 FROM pragma_table_info('%s') WHERE name = ?", table);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, column, -1, SQLITE_STATIC);
        found = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    return found;
}

static char *col_str_or_empty(sqlite3_stmt *st, int col)
{
    char *v = col_str(st, col);

    return v ? v : lb_xstrdup("");
}

/* The command name of a process: argv[0]'s base name. */
static bool comm_matches(const struct lb_run *r, const char *comm)
{
    size_t n = strcspn(r->command, " ");
    const char *arg0 = r->command;

    for (size_t i = 0; i < n; i++)
        if (r->command[i] == '/')
            arg0 = r->command + i + 1;
    return (strlen(comm) == (size_t)(r->command + n - arg0) &&
            strncmp(arg0, comm, (size_t)(r->command + n - arg0)) == 0) ||
           (*r->executable && strcmp(lb_basename(r->executable), comm) == 0);
}

static void die_no_match(const struct lb_profile *p, const struct lb_select *sel)
{
    struct lb_buf b = { 0 };

    for (int32_t i = 0; i < p->nprocs && i < 8; i++)
        lb_buf_printf(&b, "%s%" PRId64, i ? ", " : "", p->procs[i].pid);
    if (p->nprocs > 8)
        lb_buf_puts(&b, ", ...");
    if (sel->comm)
        cli_die(LB_EXIT_USAGE, "%s: no process matches --comm %s%s (pids: %s)", p->path, sel->comm,
                sel->pid ? " and --pid" : "", lb_buf_str(&b));
    cli_die(LB_EXIT_USAGE, "%s: no process with pid %" PRId64 " (pids: %s)", p->path, sel->pid,
            lb_buf_str(&b));
}

/* p->run: the selected processes together. */
static void sum_selected(struct lb_profile *p)
{
    struct lb_run *sum = &p->run;
    double end = 0;
    bool first = true;

    memset(sum, 0, sizeof *sum);
    for (int32_t i = 0; i < p->nprocs; i++) {
        const struct lb_run *r = &p->procs[i];

        if (!r->selected)
            continue;
        if (first) {
            *sum = *r;
            sum->command = lb_xstrdup(r->command);
            sum->event = lb_xstrdup(r->event);
            sum->event_requested = lb_xstrdup(r->event_requested);
            sum->period_unit = lb_xstrdup(r->period_unit);
            sum->exit_reason = lb_xstrdup(r->exit_reason);
            sum->executable = lb_xstrdup(r->executable);
            end = r->start_unix + r->duration_s;
            first = false;
            continue;
        }
        sum->threads += r->threads;
        sum->samples += r->samples;
        sum->samples_dropped += r->samples_dropped;
        if (r->start_unix && r->start_unix < sum->start_unix)
            sum->start_unix = r->start_unix;
        if (r->start_unix + r->duration_s > end)
            end = r->start_unix + r->duration_s;
    }
    if (first) {
        const char **fields[] = {
            (const char **)&sum->command,         (const char **)&sum->event,
            (const char **)&sum->event_requested, (const char **)&sum->period_unit,
            (const char **)&sum->exit_reason,     (const char **)&sum->executable
        };

        for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
            *fields[i] = lb_xstrdup("");
        return;
    }
    if (end > sum->start_unix)
        sum->duration_s = end - sum->start_unix;
}

/* Where every process is selected, the command is the tree's root, the
 * program the user ran, as the root noted it (meta root_command), not the
 * first process that wrote (a helper that ran first, or a child of a root
 * that recorded nothing). */
static void root_command(struct lb_profile *p, sqlite3 *db)
{
    sqlite3_stmt *st = NULL;

    if (p->nselected != p->nprocs ||
        sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'root_command'", -1, &st,
                           NULL) != SQLITE_OK)
        return;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) &&
        sqlite3_column_text(st, 0)[0]) {
        free(p->run.command);
        p->run.command = lb_trim_end(lb_xstrdup((const char *)sqlite3_column_text(st, 0)));
        p->command_is_root = true;
    }
    sqlite3_finalize(st);
}

static void load_run(struct lb_profile *p, sqlite3 *db, const struct lb_select *sel,
                     struct idindex *ix)
{
    struct query q;
    size_t cap = 0;
    bool v3 = has_column(db, "run", "exec_gen");

    q_preparef(&q, db, p->path, "run",
               "SELECT command, event, event_requested, period_unit, exit_reason, pid, period,"
               " threads, samples, samples_dropped, ns_per_sample, start_unix, duration_s,"
               " id, executable, %s FROM run ORDER BY %s",
               v3 ? "ppid, exec_gen" : "0, 0", v3 ? "start_unix, id" : "id LIMIT 1");
    while (q_step(&q)) {
        struct lb_run *r = PUSH(p->procs, p->nprocs, cap);

        r->command = lb_trim_end(col_str_or_empty(q.st, 0)); /* a process title may pad argv */
        r->event = col_str_or_empty(q.st, 1);
        r->event_requested = col_str_or_empty(q.st, 2);
        r->period_unit = col_str_or_empty(q.st, 3);
        r->exit_reason = col_str_or_empty(q.st, 4);
        r->pid = sqlite3_column_int64(q.st, 5);
        r->period = sqlite3_column_int64(q.st, 6);
        r->threads = sqlite3_column_int64(q.st, 7);
        r->samples = sqlite3_column_int64(q.st, 8);
        r->samples_dropped = sqlite3_column_int64(q.st, 9);
        r->ns_per_sample = sqlite3_column_double(q.st, 10);
        r->start_unix = sqlite3_column_double(q.st, 11);
        r->duration_s = sqlite3_column_double(q.st, 12);
        r->id = sqlite3_column_int64(q.st, 13);
        r->executable = col_str_or_empty(q.st, 14);
        r->ppid = sqlite3_column_int64(q.st, 15);
        r->exec_gen = sqlite3_column_int64(q.st, 16);
        r->selected = (!sel || !sel->pid || sel->pid == r->pid) &&
                      (!sel || !sel->comm || comm_matches(r, sel->comm));
        p->nselected += r->selected;
    }
    if (p->nprocs && !p->nselected)
        die_no_match(p, sel);
    if (p->nprocs)
        idindex_build(ix, (size_t)p->nprocs, ID_BASE(p->procs), sizeof *p->procs);
    else
        memset(ix, 0, sizeof *ix);
    sum_selected(p);
    root_command(p, db);
}

static void load_modules(struct lb_profile *p, sqlite3 *db, struct idindex *ix)
{
    struct query q;
    size_t cap = 0;

    q_preparef(&q, db, p->path, "module", "SELECT id, path, %s FROM module",
               has_column(db, "module", "build_id") ? "build_id" : "NULL");
    while (q_step(&q)) {
        struct lb_module *m = PUSH(p->modules, p->nmodules, cap);

        m->id = sqlite3_column_int64(q.st, 0);
        m->path = col_str(q.st, 1);
        m->build_id = col_str(q.st, 2);
        if (!m->path) {
            m->path = lb_xstrdup("");
        } else if (lb_module_name(m->path) != m->path) {
            /* an older database's "[vdso: PID]": one module in
			 * every process and run (common/module_name.h) */
            free(m->path);
            m->path = lb_xstrdup(LB_VDSO_MODULE);
        }
        m->base_name = lb_basename(m->path);
    }
    idindex_build(ix, (size_t)p->nmodules, ID_BASE(p->modules), sizeof *p->modules);
}

static void load_frames(struct lb_profile *p, sqlite3 *db, const struct idindex *mods,
                        struct idindex *ix)
{
    struct query q;
    size_t cap = 0;

    PRESIZE(p->frames, cap, db, "frame");
    q_prepare(&q, db, p->path, "frame",
              "SELECT id, module_id, offset, function, file, line FROM frame");
    while (q_step(&q)) {
        struct lb_frame *f = PUSH(p->frames, p->nframes, cap);

        memset(f, 0, sizeof *f);
        f->id = sqlite3_column_int64(q.st, 0);
        f->module = idindex_get(mods, q.st, 1);
        f->offset = (uint64_t)sqlite3_column_int64(q.st, 2);
        f->function = col_str(q.st, 3);
        if (f->function && !*f->function) {
            free(f->function);
            f->function = NULL;
        }
        f->file = col_str(q.st, 4);
        if (f->file && !*f->file) {
            free(f->file);
            f->file = NULL;
        }
        f->line = sqlite3_column_int64(q.st, 5);
    }
    idindex_build(ix, (size_t)p->nframes, ID_BASE(p->frames), sizeof *p->frames);
}

/* Nodes need two passes: parent ids can only be resolved once every node is
 * known, so the raw parent ids are kept aside meanwhile. */
static void load_nodes(struct lb_profile *p, sqlite3 *db, const struct idindex *frames,
                       struct idindex *ix)
{
    struct query q;
    size_t cap = 0, pcap = 0;
    int64_t *parent_ids = NULL;
    int32_t np = 0;

    PRESIZE(p->nodes, cap, db, "node");
    PRESIZE(parent_ids, pcap, db, "node");

    q_prepare(&q, db, p->path, "node", "SELECT id, parent_id, frame_id FROM node");
    while (q_step(&q)) {
        struct lb_node *n = PUSH(p->nodes, p->nnodes, cap);
        int64_t *pid = PUSH(parent_ids, np, pcap);

        n->id = sqlite3_column_int64(q.st, 0);
        *pid =
            sqlite3_column_type(q.st, 1) == SQLITE_NULL ? INT64_MIN : sqlite3_column_int64(q.st, 1);
        n->frame = idindex_get(frames, q.st, 2);
        n->depth = 0;
    }
    idindex_build(ix, (size_t)p->nnodes, ID_BASE(p->nodes), sizeof *p->nodes);
    p->root = -1;
    for (int32_t i = 0; i < p->nnodes; i++) {
        int64_t pid = parent_ids[i];
        int32_t par = -1;

        if (pid != INT64_MIN) {
            if (ix->direct)
                par = pid < ix->min || pid > ix->max ? -1 : ix->direct[pid - ix->min];
            else
                par = lb_map_get(&ix->map, (uint64_t)pid);
        }
        p->nodes[i].parent = par == i ? -1 : par;
        if (pid == INT64_MIN && (p->root < 0 || p->nodes[i].id == 0))
            p->root = i;
    }
    free(parent_ids);
    /* No root row: add a synthetic one so every tree walk has a start. */
    if (p->root < 0) {
        struct lb_node *n = PUSH(p->nodes, p->nnodes, cap);

        n->id = INT64_MIN;
        n->parent = -1;
        n->frame = -1;
        n->depth = 0;
        p->root = p->nnodes - 1;
    }
    /* Orphans (a parent id with no row) hang below the root. */
    for (int32_t i = 0; i < p->nnodes; i++)
        if (i != p->root && p->nodes[i].parent < 0)
            p->nodes[i].parent = p->root;
}

/* Threads of the selected processes only; p->thread_index lets the
 * per-thread rows that follow skip the others. */
/* A start routine is a whole function: of the source frames the writer
 * stores for its address (consecutive ids, outermost first), the
 * outermost, not code inlined at its entry (a std::thread's _M_run,
 * whose first instruction is std::__invoke_impl's). */
static int32_t outermost_of_address(const struct lb_profile *p, int32_t f)
{
    while (f > 0 && p->frames[f - 1].id == p->frames[f].id - 1 &&
           p->frames[f - 1].module == p->frames[f].module &&
           p->frames[f - 1].offset == p->frames[f].offset)
        f--;
    return f;
}

static void load_threads(struct lb_profile *p, sqlite3 *db, const struct idindex *frames,
                         const struct idindex *procs)
{
    struct query q;
    size_t cap = 0;
    bool v3 = has_column(db, "thread", "run_id");
    bool v5 = has_column(db, "thread", "unseen_s");

    q_preparef(&q, db, p->path, "thread",
               "SELECT id, tid, start_frame_id, start_s, end_s, cpu_s, samples,"
               " samples_dropped, %s, %s FROM thread ORDER BY id",
               v3 ? "run_id" : "NULL", v5 ? "unseen_s" : "NULL");
    while (q_step(&q)) {
        int32_t proc = v3 ? idindex_get(procs, q.st, 8) : (p->nprocs ? 0 : -1);

        if (proc >= 0 && !p->procs[proc].selected)
            continue;
        struct lb_thread *t = PUSH(p->threads, p->nthreads, cap);
        bool is_new;

        t->id = sqlite3_column_int64(q.st, 0);
        t->tid = sqlite3_column_int64(q.st, 1);
        t->process = proc;
        t->start_frame = outermost_of_address(p, idindex_get(frames, q.st, 2));
        t->start_s = sqlite3_column_double(q.st, 3);
        t->end_s = sqlite3_column_double(q.st, 4);
        t->cpu_s = sqlite3_column_double(q.st, 5);
        t->samples = sqlite3_column_int64(q.st, 6);
        t->samples_dropped = sqlite3_column_int64(q.st, 7);
        t->unseen_s =
            sqlite3_column_type(q.st, 9) == SQLITE_NULL ? -1 : sqlite3_column_double(q.st, 9);
        *lb_map_slot(&p->thread_index, (uint64_t)t->id, &is_new) = p->nthreads - 1;
    }
}

int32_t lb_thread_process(const struct lb_profile *p, int64_t thread_id)
{
    int32_t t = lb_map_get(&p->thread_index, (uint64_t)thread_id);

    return t >= 0 ? p->threads[t].process : -1;
}

/* Is a per-thread row of a selected process? Rows of a thread with no
 * thread row count only when every process is selected. */
static bool thread_selected(const struct lb_profile *p, int64_t thread_id)
{
    if (p->nselected == p->nprocs)
        return true;
    return lb_map_get(&p->thread_index, (uint64_t)thread_id) >= 0;
}

static void load_metrics(struct lb_profile *p, sqlite3 *db, const struct idindex *nodes)
{
    struct query q;
    size_t cap = 0;
    bool undirected = has_column(db, "metric", "idle_undirected_s");
    bool futex = has_column(db, "metric", "idle_futex_s");

    PRESIZE(p->mrows, cap, db, "metric");
    q_preparef(&q, db, p->path, "metric",
               "SELECT node_id, thread_id, work_s, overhead_s, wait_s, idle_mutex_s,"
               " idle_spin_s, idle_rwlock_s, idle_cond_s, idle_barrier_s, idle_sem_s,"
               " idle_join_s, blamed_count, %s, %s FROM metric",
               undirected ? "idle_undirected_s" : "0", futex ? "idle_futex_s" : "0");
    while (q_step(&q)) {
        int32_t node = idindex_get(nodes, q.st, 0);

        if (!thread_selected(p, sqlite3_column_int64(q.st, 1)))
            continue;
        if (node < 0)
            node = p->root; /* dangling: keep the value, at the root */
        struct lb_mrow *r = PUSH(p->mrows, p->nmrows, cap);

        r->node = node;
        r->thread_id = sqlite3_column_int64(q.st, 1);
        r->work = sqlite3_column_double(q.st, 2);
        r->overhead = sqlite3_column_double(q.st, 3);
        r->wait = sqlite3_column_double(q.st, 4);
        for (int k = 0; k <= LB_OBJ_JOIN; k++)
            r->idle[k] = sqlite3_column_double(q.st, 5 + k);
        r->blamed_count = sqlite3_column_int64(q.st, 12);
        r->undirected = sqlite3_column_double(q.st, 13);
        r->idle[LB_OBJ_FUTEX] = sqlite3_column_double(q.st, 14);
    }
}

static void load_sites(struct lb_profile *p, sqlite3 *db, const struct idindex *frames)
{
    struct query q;
    size_t cap = 0;

    q_prepare(&q, db, p->path, "site",
              "SELECT frame_id, thread_id, object, acquisitions, contended, releases FROM site");
    while (q_step(&q)) {
        int32_t frame = idindex_get(frames, q.st, 0);
        int kind = lb_obj_kind_parse((const char *)sqlite3_column_text(q.st, 2));

        if (frame < 0 || kind < 0 || !thread_selected(p, sqlite3_column_int64(q.st, 1)))
            continue;
        struct lb_site *s = PUSH(p->sites, p->nsites, cap);

        s->frame = frame;
        s->thread_id = sqlite3_column_int64(q.st, 1);
        s->kind = kind;
        s->acquisitions = sqlite3_column_int64(q.st, 3);
        s->contended = sqlite3_column_int64(q.st, 4);
        s->releases = sqlite3_column_int64(q.st, 5);
    }
}

static void load_objects(struct lb_profile *p, sqlite3 *db, const struct idindex *nodes,
                         const struct idindex *procs, struct idindex *ix)
{
    struct query q;
    size_t cap = 0;
    bool v3 = has_column(db, "sync_object", "run_id");
    bool v4 = has_column(db, "sync_object", "sampled_waits");

    q_preparef(&q, db, p->path, "sync_object",
               "SELECT id, object, address, first_node_id, acquisitions, contended, wait_s,"
               " blame_s, handoff_s, unattributed_s, %s, %s FROM sync_object",
               v3 ? "run_id" : "NULL", v4 ? "sampled_waits" : "0");
    while (q_step(&q)) {
        int32_t proc = v3 ? idindex_get(procs, q.st, 10) : -1;

        if (proc >= 0 && !p->procs[proc].selected)
            continue;
        struct lb_syncobj *o = PUSH(p->objs, p->nobjs, cap);

        o->id = sqlite3_column_int64(q.st, 0);
        o->kind = lb_obj_kind_parse((const char *)sqlite3_column_text(q.st, 1));
        o->has_address = sqlite3_column_type(q.st, 2) != SQLITE_NULL;
        o->address = (uint64_t)sqlite3_column_int64(q.st, 2);
        o->first_node = idindex_get(nodes, q.st, 3);
        /* NULL: unknown (a mutex whose memory was reused before the
		 * final write read its count) */
        o->acquisitions =
            sqlite3_column_type(q.st, 4) == SQLITE_NULL ? -1 : sqlite3_column_int64(q.st, 4);
        o->contended = sqlite3_column_int64(q.st, 5);
        o->wait_s = sqlite3_column_double(q.st, 6);
        o->blame_s = sqlite3_column_double(q.st, 7);
        o->handoff_s = sqlite3_column_double(q.st, 8);
        o->unattributed_s = sqlite3_column_double(q.st, 9);
        o->sampled_waits = sqlite3_column_int64(q.st, 11);
        o->proc = proc;
    }
    idindex_build(ix, (size_t)p->nobjs, ID_BASE(p->objs), sizeof *p->objs);
}

static void load_object_blame(struct lb_profile *p, sqlite3 *db, const struct idindex *objs,
                              const struct idindex *nodes)
{
    struct query q;
    size_t cap = 0;

    q_prepare(&q, db, p->path, "object_blame",
              "SELECT object_id, node_id, thread_id, blame_s, count FROM object_blame");
    while (q_step(&q)) {
        int32_t obj = idindex_get(objs, q.st, 0);
        int32_t node = idindex_get(nodes, q.st, 1);

        if (obj < 0 || node < 0 || !thread_selected(p, sqlite3_column_int64(q.st, 2)))
            continue;
        struct lb_objblame *b = PUSH(p->oblame, p->noblame, cap);

        b->object = obj;
        b->node = node;
        b->thread_id = sqlite3_column_int64(q.st, 2);
        b->blame_s = sqlite3_column_double(q.st, 3);
        b->count = sqlite3_column_int64(q.st, 4);
    }
}

/* Structural waits: a table newer databases have (docs/SCHEMA.md). */
static void load_structural(struct lb_profile *p, sqlite3 *db, const struct idindex *objs,
                            const struct idindex *nodes)
{
    struct query q;
    size_t cap = 0;

    if (sqlite3_table_column_metadata(db, NULL, "structural_wait", "blame_s", NULL, NULL, NULL,
                                      NULL, NULL) != SQLITE_OK)
        return;
    /* an idle helper's rows are marked from schema version 10 on */
    bool helper = sqlite3_table_column_metadata(db, NULL, "structural_wait", "helper", NULL, NULL,
                                                NULL, NULL, NULL) == SQLITE_OK;
    q_prepare(&q, db, p->path, "structural_wait",
              helper
                  ? "SELECT thread_id, object_id, object, start_s, end_s, open, node_id, blame_s,"
                    " helper FROM structural_wait"
                  : "SELECT thread_id, object_id, object, start_s, end_s, open, node_id, blame_s,"
                    " 0 FROM structural_wait");
    while (q_step(&q)) {
        int kind = lb_obj_kind_parse((const char *)sqlite3_column_text(q.st, 2));

        if (kind < 0 || !thread_selected(p, sqlite3_column_int64(q.st, 0)))
            continue;
        struct lb_structural *s = PUSH(p->structural, p->nstructural, cap);

        s->thread_id = sqlite3_column_int64(q.st, 0);
        s->object = idindex_get(objs, q.st, 1);
        s->kind = kind;
        s->start_s = sqlite3_column_double(q.st, 3);
        s->end_s = sqlite3_column_double(q.st, 4);
        s->open = sqlite3_column_int(q.st, 5) != 0;
        s->node = sqlite3_column_type(q.st, 6) == SQLITE_NULL ? -1 : idindex_get(nodes, q.st, 6);
        s->blame_s = sqlite3_column_double(q.st, 7);
        s->helper = sqlite3_column_int(q.st, 8) != 0;
    }
}

void lb_profile_index(struct lb_profile *p); /* tree.c */

struct lb_profile *lb_profile_load(const char *path)
{
    return lb_profile_load_select(path, NULL);
}

struct lb_profile *lb_profile_load_select(const char *path, const struct lb_select *sel)
{
    struct lb_profile *p = lb_xcalloc(1, sizeof *p);
    sqlite3 *db = lb_db_open(path);
    struct idindex procs, mods, frames, nodes, objs;

    p->path = lb_xstrdup(path);
    lb_windows_apply(db, path, sel);
    /* One read transaction: a consistent snapshot, and one lock. */
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        lb_db_fail(db, path, "starting a read");
    load_run(p, db, sel, &procs);
    load_modules(p, db, &mods);
    load_frames(p, db, &mods, &frames);
    load_nodes(p, db, &frames, &nodes);
    load_threads(p, db, &frames, &procs);
    load_metrics(p, db, &nodes);
    load_sites(p, db, &frames);
    load_objects(p, db, &nodes, &procs, &objs);
    load_object_blame(p, db, &objs, &nodes);
    load_structural(p, db, &objs, &nodes);
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(db);
    idindex_free(&procs);
    idindex_free(&mods);
    idindex_free(&frames);
    idindex_free(&nodes);
    idindex_free(&objs);
    lb_profile_debug_names(p);
    lb_profile_runtime_frames(p);
    lb_profile_join_entries(p);
    lb_profile_index(p);
    return p;
}
