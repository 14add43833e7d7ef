/* See spool_records.h. */
#include "common/spool_records.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/db_merge.h"
#include "common/ddl.h"
#include "common/frame_names.h"
#include "common/meta_known.h"
#include "common/room_for.h"
#include "common/rowlog.h"
#include "common/schema.h"

/* The statements of several rows a batch keeps: of LB_ROW_BATCH rows,
 * half as many... down to 2. */
#define BATCH_SIZES 3
_Static_assert(LB_ROW_BATCH >> (BATCH_SIZES - 1) == 2, "batches down to 2 rows");

/* A record's savepoint's statements, by their slot in mark[]. */
enum mark {
    MARK_SAVEPOINT,
    MARK_ROLLBACK,
    MARK_RELEASE,
    MARKS
};
static const char *const mark_sql[MARKS] = {
    [MARK_SAVEPOINT] = "SAVEPOINT record",
    [MARK_ROLLBACK] = "ROLLBACK TO record",
    [MARK_RELEASE] = "RELEASE record",
};

/* A module of a held record: its id there, its file and build id. */
typedef struct held_module {
    int64_t id;
    char *path, *build_id;
} held_module_t;

/* A record held: its bytes (in its file's, which the caller keeps), and
 * its modules. */
typedef struct held {
    const unsigned char *bytes;
    size_t size;
    unsigned file;
    held_module_t *modules;
    size_t n_modules;
} held_t;

struct lb_spool_records {
    sqlite3 *db;
    const char *dst;
    bool pending; /* the schema attached */
    held_t *held;
    size_t n, cap;
    lb_frame_names_address_t *at; /* the addresses left to name (their held modules' texts) */
    size_t n_at, cap_at;
    /* Statements prepared at first use, finalized by lb_spool_records_free. */
    sqlite3_stmt *shifted[LB_ROW_KINDS]; /* into dst, by `shifts` */
    lb_db_shifts_t shifts;               /* the record's, in dst */
    unsigned record;                     /* the record's number in the batch, from 1 */
    unsigned shifted_for[LB_ROW_KINDS];  /* the record whose shifts shifted[k] holds */
    /* shifted[k]'s for several rows: batch[b][k] for LB_ROW_BATCH >> b
     * of them; the record whose shifts each holds */
    sqlite3_stmt *batch[BATCH_SIZES][LB_ROW_KINDS];
    unsigned batch_for[BATCH_SIZES][LB_ROW_KINDS];
    bool batch_none[LB_ROW_KINDS]; /* kind k has no such statement */
    sqlite3_stmt *merged_before;   /* the record's process image in dst before it */
    sqlite3_stmt *mark[MARKS];     /* a record's savepoint: its start, its undo, its end */
    lb_db_merge_cache_t merge;     /* dst's next ids */
    lb_frame_names_cache_t names;  /* dst's frames named, from its cache */
    lb_meta_known_t meta;          /* dst's meta as the records added so far leave it */
    const held_t *adding;          /* the record being added */
};

static int sql(sqlite3 *db, const char *text)
{
    return sqlite3_exec(db, text, NULL, NULL, NULL);
}

lb_spool_records_t *lb_spool_records_new(sqlite3 *db, const char *dst)
{
    lb_spool_records_t *r = calloc(1, sizeof *r);
    if (r) {
        r->db = db;
        r->dst = dst;
    }
    return r;
}

bool lb_spool_record_at_fault(int rc)
{
    rc &= 0xff;
    return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB || rc == SQLITE_MISMATCH ||
           rc == SQLITE_ERROR || rc == SQLITE_FORMAT || rc == SQLITE_RANGE;
}

/* "pending": all tables, the version row and the root node, for the
 * records an earlier build wrote whole. */
static int attach_pending(lb_spool_records_t *r)
{
    if (r->pending)
        return SQLITE_OK;
    int rc = sql(r->db, "ATTACH ':memory:' AS pending");
    if (rc != SQLITE_OK)
        return rc;
    rc = lb_ddl_create(r->db, "pending");
    if (rc == SQLITE_OK)
        rc = sql(r->db, "INSERT INTO pending.node VALUES(0, NULL, NULL, 0)");
    if (rc == SQLITE_OK) {
        char *q = sqlite3_mprintf("INSERT INTO pending.meta VALUES('schema_version','%d')",
                                  LB_SCHEMA_VERSION);
        rc = q ? sql(r->db, q) : SQLITE_NOMEM;
        sqlite3_free(q);
    }
    if (rc != SQLITE_OK)
        sql(r->db, "DETACH pending");
    r->pending = rc == SQLITE_OK;
    return rc;
}

/* A record an earlier build wrote whole, an SQLite database of the
 * profile's tables (a run whose processes a library upgrade split):
 * attached as "whole" for its copy into "pending" (whole or not at all;
 * nothing if dst holds its process image already), and detached again. */
static int hold_sqlite_record(lb_spool_records_t *r, const unsigned char *bytes, size_t size)
{
    int rc = attach_pending(r);
    if (rc == SQLITE_OK)
        rc = sql(r->db, "ATTACH ':memory:' AS whole");
    if (rc != SQLITE_OK)
        return rc;
    unsigned char *copy = sqlite3_malloc64(size);
    rc = copy ? SQLITE_OK : SQLITE_NOMEM;
    if (copy) {
        memcpy(copy, bytes, size);
        rc = sqlite3_deserialize(r->db, "whole", copy, (sqlite3_int64)size, (sqlite3_int64)size,
                                 SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE);
    }
    sqlite3_stmt *seen =
        rc == SQLITE_OK
            ? lb_db_prepare_sql(
                  r->db, sqlite3_mprintf("SELECT 1 FROM whole.run r, \"%w\".run d WHERE d.run_key"
                                         " IS r.run_key AND d.pid = r.pid AND d.proc_start IS"
                                         " r.proc_start AND d.start_unix = r.start_unix LIMIT 1",
                                         r->dst))
            : NULL;
    bool before = seen && sqlite3_step(seen) == SQLITE_ROW;
    sqlite3_finalize(seen);
    if (rc == SQLITE_OK && !before && (rc = sql(r->db, "SAVEPOINT whole")) == SQLITE_OK) {
        rc = lb_db_merge(r->db, "whole", "pending", 0);
        if (rc != SQLITE_OK)
            sql(r->db, "ROLLBACK TO whole");
        sql(r->db, "RELEASE whole");
    }
    sql(r->db, "DETACH whole");
    return rc;
}

/* What a walk of a record notes: its modules and the offsets of its
 * frames left to the merge to name (their texts in the record). */
typedef struct module_row {
    int64_t id;
    lb_row_value_t path, build_id;
} module_row_t;
typedef struct unnamed_row {
    int64_t module, offset;
} unnamed_row_t;
typedef struct notes {
    module_row_t *modules;
    size_t n_modules, cap_modules;
    unnamed_row_t *unnamed;
    size_t n_unnamed, cap_unnamed;
} notes_t;

static int note_row(void *ctx, enum lb_row_kind kind, const lb_row_value_t *v)
{
    notes_t *n = ctx;
    if (kind == LB_ROW_MODULE) {
        if (!lb_room_for((void **)&n->modules, &n->cap_modules, n->n_modules, sizeof *n->modules,
                         16))
            return SQLITE_NOMEM;
        n->modules[n->n_modules++] = (module_row_t){ v[1].i, v[2], v[4] };
    } else if (kind == LB_ROW_FRAME && v[6].type == SQLITE_INTEGER &&
               v[6].i == LB_ROWLOG_UNNAMED_LINE) {
        if (!lb_room_for((void **)&n->unnamed, &n->cap_unnamed, n->n_unnamed, sizeof *n->unnamed,
                         16))
            return SQLITE_NOMEM;
        n->unnamed[n->n_unnamed++] = (unnamed_row_t){ v[2].i, v[3].i };
    }
    return SQLITE_OK;
}

/* A text value copied, NUL-terminated (NULL for none); false without
 * memory. */
static bool copy_text(char **to, const lb_row_value_t *v)
{
    *to = NULL;
    if (v->type != SQLITE_TEXT)
        return true;
    *to = malloc(v->n + 1);
    if (*to) {
        memcpy(*to, v->bytes, v->n);
        (*to)[v->n] = '\0';
    }
    return *to != NULL;
}

/* The record's modules, their texts copied, into *out (its count *n). */
static int copy_modules(const notes_t *notes, held_module_t **out, size_t *n)
{
    *n = 0;
    *out = calloc(notes->n_modules ? notes->n_modules : 1, sizeof **out);
    if (!*out)
        return SQLITE_NOMEM;
    for (size_t i = 0; i < notes->n_modules; i++) {
        held_module_t *m = &(*out)[i];
        m->id = notes->modules[i].id;
        if (!copy_text(&m->path, &notes->modules[i].path) ||
            !copy_text(&m->build_id, &notes->modules[i].build_id)) {
            free(m->path);
            return SQLITE_NOMEM;
        }
        (*n)++;
    }
    return SQLITE_OK;
}

static void free_modules(held_module_t *modules, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(modules[i].path);
        free(modules[i].build_id);
    }
    free(modules);
}

/* The record's unnamed frames' addresses added to r->at, their texts
 * h's modules' (held until lb_spool_records_free). */
static int note_addresses(lb_spool_records_t *r, const notes_t *n, const held_t *h)
{
    for (size_t i = 0; i < n->n_unnamed; i++) {
        const held_module_t *m = NULL;
        for (size_t j = 0; !m && j < h->n_modules; j++)
            if (h->modules[j].id == n->unnamed[i].module)
                m = &h->modules[j];
        if (!m) /* a frame of no module the record has: stays unnamed */
            continue;
        if (!lb_room_for((void **)&r->at, &r->cap_at, r->n_at, sizeof *r->at, 16))
            return SQLITE_NOMEM;
        r->at[r->n_at++] = (lb_frame_names_address_t){ m->path, m->build_id, n->unnamed[i].offset };
    }
    return SQLITE_OK;
}

int lb_spool_records_hold(lb_spool_records_t *r, const unsigned char *bytes, size_t size,
                          unsigned file)
{
    if (lb_db_sqlite_header(bytes, size))
        return hold_sqlite_record(r, bytes, size);
    notes_t notes = { 0 };
    int rc = lb_rowlog_each(bytes, size, note_row, &notes);
    if (rc == SQLITE_OK && !lb_room_for((void **)&r->held, &r->cap, r->n, sizeof *r->held, 16))
        rc = SQLITE_NOMEM;
    held_t h = { bytes, size, file, NULL, 0 };
    size_t addresses = r->n_at;
    if (rc == SQLITE_OK && notes.n_unnamed)
        rc = copy_modules(&notes, &h.modules, &h.n_modules);
    if (rc == SQLITE_OK)
        rc = note_addresses(r, &notes, &h);
    if (rc == SQLITE_OK) {
        r->held[r->n++] = h;
    } else {
        r->n_at = addresses; /* theirs are h's texts */
        free_modules(h.modules, h.n_modules);
    }
    free(notes.modules);
    free(notes.unnamed);
    return rc;
}

static int by_address(const void *a, const void *b)
{
    const lb_frame_names_address_t *x = a, *y = b;
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    int c = strcmp(x->path ? x->path : "", y->path ? y->path : "");
    return c ? c : strcmp(x->build_id ? x->build_id : "", y->build_id ? y->build_id : "");
}

static void free_addresses(lb_spool_records_t *r)
{
    free(r->at);
    r->at = NULL;
    r->n_at = r->cap_at = 0;
}

void lb_spool_records_read_names(lb_spool_records_t *r)
{
    /* each address once: a tree's records leave the same ones */
    if (r->n_at)
        qsort(r->at, r->n_at, sizeof *r->at, by_address);
    size_t n = 0;
    for (size_t i = 0; i < r->n_at; i++) {
        if (!n || by_address(&r->at[n - 1], &r->at[i]) != 0)
            r->at[n++] = r->at[i];
    }
    r->n_at = n;
    if (n)
        lb_frame_names_ahead(r->db, r->dst, r->at, n, &r->names);
    free_addresses(r);
}

bool lb_spool_records_any(const lb_spool_records_t *r)
{
    return r && (r->n || r->pending);
}

/* A row of a record into dst with the record's shifts. */
static sqlite3_stmt *shifted_statement(void *ctx, enum lb_row_kind kind)
{
    lb_spool_records_t *r = ctx;
    if (!r->shifted[kind])
        r->shifted[kind] = lb_db_prepare_sql(r->db, lb_row_sql_shifted(kind, r->dst));
    if (r->shifted[kind] && r->shifted_for[kind] != r->record) {
        lb_row_bind_shifts(r->shifted[kind], &r->shifts);
        r->shifted_for[kind] = r->record;
    }
    return r->shifted[kind];
}

/* shifted_statement's for `rows` rows (lb_rowlog_replay_rows), or NULL
 * where a kind's statement has no such form (or failed). */
static sqlite3_stmt *batch_statement(void *ctx, enum lb_row_kind kind, int rows)
{
    lb_spool_records_t *r = ctx;
    int b = 0;
    while (b < BATCH_SIZES && LB_ROW_BATCH >> b != rows)
        b++;
    if (r->batch_none[kind] || b == BATCH_SIZES)
        return NULL;
    sqlite3_stmt **st = &r->batch[b][kind];
    if (!*st) {
        char *one = lb_row_sql_shifted(kind, r->dst);
        *st = lb_db_prepare_sql(r->db, lb_row_sql_rows(one, rows));
        sqlite3_free(one);
        r->batch_none[kind] = !*st;
        if (!*st)
            return NULL;
    }
    if (r->batch_for[b][kind] != r->record) {
        lb_row_bind_shifts(*st, &r->shifts);
        r->batch_for[b][kind] = r->record;
    }
    return *st;
}

/* The record's savepoint's statement m run, kept for the next record. */
static int mark(lb_spool_records_t *r, enum mark m)
{
    return lb_db_run_kept(r->db, &r->mark[m], mark_sql[m]);
}

/* Whether dst held the record's process image before it (a merger that
 * ended after its commit, before removing its claims): its pid, start
 * and run key, and its image's start time, in a run row before the
 * record's. */
static bool merged_before(lb_spool_records_t *r)
{
    if (!r->merged_before)
        r->merged_before = lb_db_prepare_sql(
            r->db, sqlite3_mprintf("SELECT 1 FROM \"%w\".run r, \"%w\".run d WHERE r.id >= ?1"
                                   " AND d.id < ?1 AND d.run_key IS r.run_key AND d.pid = r.pid"
                                   " AND d.proc_start IS r.proc_start"
                                   " AND d.start_unix = r.start_unix LIMIT 1",
                                   r->dst, r->dst));
    if (!r->merged_before)
        return false;
    sqlite3_bind_int64(r->merged_before, 1, r->shifts.run);
    bool found = sqlite3_step(r->merged_before) == SQLITE_ROW;
    sqlite3_reset(r->merged_before);
    return found;
}

/* A frame row the record left to the merge to name, named as it is added
 * where its address's chain is one frame (lb_frame_names_single); one
 * with inlined calls, or not named ahead, stays for the fill. */
static void name_frame(void *ctx, enum lb_row_kind kind, lb_row_value_t *v)
{
    const lb_spool_records_t *r = ctx;
    if (kind != LB_ROW_FRAME || v[6].type != SQLITE_INTEGER || v[6].i != LB_ROWLOG_UNNAMED_LINE ||
        v[2].type != SQLITE_INTEGER || v[3].type != SQLITE_INTEGER)
        return;
    const held_module_t *m = NULL;
    for (size_t i = 0; !m && i < r->adding->n_modules; i++)
        if (r->adding->modules[i].id == v[2].i)
            m = &r->adding->modules[i];
    const char *function, *file;
    int line;
    if (!m || !lb_frame_names_single(m->path, m->build_id, v[3].i, &function, &file, &line))
        return;
    const char *texts[] = { function, file };
    for (int t = 0; t < 2; t++)
        v[4 + t] = texts[t] ? (lb_row_value_t){ .type = SQLITE_TEXT,
                                                .bytes = (const unsigned char *)texts[t],
                                                .n = (uint32_t)strlen(texts[t]) }
                            : (lb_row_value_t){ 0 };
    v[6].i = line;
}

/* A record's row added unless it is a meta row that would change
 * nothing in dst (common/meta_known.h). */
static bool keep_row(void *ctx, enum lb_row_kind kind, const lb_row_value_t *v)
{
    lb_spool_records_t *r = ctx;
    return kind != LB_ROW_META || lb_meta_known_changes(&r->meta, r->db, r->dst, &v[1], &v[2]);
}

/* Whether rc is SQLite refusing a held record's values (a fractional or
 * overflowing id, a value past its limits): the record's fault. A record's
 * bytes were read through when it was held, so anything else that fails
 * as it is added is this process's or the run's database's. */
static bool refused(int rc)
{
    rc &= 0xff;
    return rc == SQLITE_MISMATCH || rc == SQLITE_TOOBIG;
}

/* A held record into dst, whole or not at all: its rows shifted past
 * dst's (its meta rows and names added as a merge adds them), its names
 * filled in its own rows; nothing if dst held its process image before
 * it. */
static int add_record(lb_spool_records_t *r, const held_t *h)
{
    int rc = lb_db_merge_shifts(r->db, r->dst, &r->shifts, &r->merge);
    r->record++;
    if (rc == SQLITE_OK)
        rc = mark(r, MARK_SAVEPOINT);
    if (rc != SQLITE_OK)
        return rc;
    r->adding = h;
    rc = lb_rowlog_replay_rows(r->db, h->bytes, h->size, true, shifted_statement, batch_statement,
                               keep_row, h->n_modules ? name_frame : NULL, r);
    bool seen = rc == SQLITE_OK && merged_before(r);
    if (rc == SQLITE_OK && !seen)
        rc = lb_frame_names_fill_with(r->db, r->dst, r->dst, &r->names, &r->shifts);
    /* This process's failure (a full disk, memory: SQLite may have rolled
     * back the statement or the whole transaction) fails the batch as it
     * is, its error the connection's for the caller to say (a savepoint's
     * end would clear it); the caller rolls back. */
    if (rc != SQLITE_OK && !refused(rc)) {
        lb_meta_known_forget(&r->meta);
        return rc;
    }
    if (sqlite3_get_autocommit(r->db)) {
        lb_meta_known_forget(&r->meta);
        return SQLITE_ABORT;
    }
    if (rc != SQLITE_OK || seen) {
        mark(r, MARK_ROLLBACK);
        lb_meta_known_forget(&r->meta); /* its meta rows undone */
    }
    mark(r, MARK_RELEASE);
    return rc;
}

int lb_spool_records_add(lb_spool_records_t *r, bool *damaged, unsigned *records, unsigned *bad)
{
    if (!lb_spool_records_any(r))
        return SQLITE_OK;
    /* the chains read from files ahead, cached with the records that use
     * them */
    int rc = lb_frame_names_cache_ahead(r->db, r->dst);
    if (rc == SQLITE_OK && r->pending)
        rc = lb_db_merge(r->db, "pending", r->dst, 0);
    for (size_t i = 0; rc == SQLITE_OK && i < r->n; i++) {
        rc = add_record(r, &r->held[i]);
        if (refused(rc)) {
            damaged[r->held[i].file] = true;
            (*records)--;
            (*bad)++;
            rc = SQLITE_OK;
        }
    }
    return rc;
}

void lb_spool_records_free(lb_spool_records_t *r)
{
    if (!r)
        return;
    for (int k = 0; k < LB_ROW_KINDS; k++) {
        sqlite3_finalize(r->shifted[k]);
        for (int b = 0; b < BATCH_SIZES; b++)
            sqlite3_finalize(r->batch[b][k]);
    }
    sqlite3_finalize(r->merged_before);
    for (int m = 0; m < MARKS; m++)
        sqlite3_finalize(r->mark[m]);
    lb_db_merge_cache_free(&r->merge);
    lb_frame_names_cache_free(&r->names);
    lb_meta_known_forget(&r->meta);
    lb_frame_names_release();
    if (r->pending)
        sql(r->db, "DETACH pending");
    free_addresses(r);
    for (size_t i = 0; i < r->n; i++)
        free_modules(r->held[i].modules, r->held[i].n_modules);
    free(r->held);
    free(r);
}
