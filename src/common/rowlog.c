/* See rowlog.h. */
#include "common/rowlog.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/db_merge.h"
#include "common/schema.h"
#include "common/scratch.h"

/* Each kind's statement; "%w" is the schema (twice where the statement
 * reads a table too). */
static const char *const row_sql[LB_ROW_KINDS] = {
    [LB_ROW_FRAME] = "INSERT INTO \"%w\".frame VALUES(?,?,?,?,?,?)",
    [LB_ROW_MODULE] = "INSERT INTO \"%w\".module VALUES(?,?,?,?)",
    [LB_ROW_NODE] = "INSERT INTO \"%w\".node VALUES(?,?,?,?)",
    [LB_ROW_METRIC] = "INSERT INTO \"%w\".metric VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [LB_ROW_SITE] = "INSERT INTO \"%w\".site VALUES(?,?,?,?,?,?) ON CONFLICT DO UPDATE SET"
                    " acquisitions = acquisitions + excluded.acquisitions,"
                    " contended = contended + excluded.contended,"
                    " releases = releases + excluded.releases",
    [LB_ROW_BLAME] = "INSERT INTO \"%w\".object_blame VALUES(?,?,?,?,?) ON CONFLICT DO"
                     " UPDATE SET blame_s = blame_s + excluded.blame_s,"
                     " count = count + excluded.count",
    [LB_ROW_THREAD] = "INSERT INTO \"%w\".thread VALUES(?,?,?,?,?,?,?,?,?,1,?,?)",
    [LB_ROW_OBJECT] = "INSERT INTO \"%w\".sync_object VALUES(?,?,?,?,?,?,?,?,?,?,1,?)",
    [LB_ROW_RUN] = "INSERT INTO \"%w\".run VALUES(1,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,0,?,?)",
    [LB_ROW_STRUCTURAL] = "INSERT INTO \"%w\".structural_wait VALUES(?,?,?,?,?,?,?,?,?,0)",
    /* ?1 thread, ?2 object, ?3 kind, ?4 start, ?5 end, ?6 the helper's
     * share: one row per context whose releases took the object's blame */
    [LB_ROW_IDLE_HELPER] = "INSERT INTO \"%w\".structural_wait SELECT ?1, ?2, ?3, ?4, ?5, 0,"
                           " CASE WHEN node_id THEN node_id END,"
                           " CASE WHEN node_id THEN thread_id END, blame_s * ?6, 1"
                           " FROM \"%w\".object_blame WHERE object_id = ?2 AND blame_s > 0",
    [LB_ROW_SYMBOL] = "INSERT OR IGNORE INTO \"%w\".symbol VALUES(?,?,?,?,?,?,?)",
    [LB_ROW_FUNCTIONS] = "INSERT OR IGNORE INTO \"%w\".module_function VALUES(?,?,?)",
    [LB_ROW_META] = "INSERT INTO \"%w\".meta VALUES(?,?)",
    [LB_ROW_WINDOW_THREAD] = "INSERT INTO \"%w\".thread VALUES(?,?,?,NULL,?,?,?,?,?,1,NULL,NULL)",
    [LB_ROW_WINDOW_OBJECT] = "INSERT INTO \"%w\".sync_object VALUES(?,?,?,NULL,NULL,?,?,?,?,?,1,0)",
};

/* The parameters a shifted statement takes a record's shifts from, past
 * every kind's values: ?21 run, ?22 module, ?23 frame, ?24 node, ?25
 * thread, ?26 object. */
#define SHIFT_RUN    "?21"
#define SHIFT_MODULE "?22"
#define SHIFT_FRAME  "?23"
#define SHIFT_NODE   "?24"
#define SHIFT_THREAD "?25"
#define SHIFT_OBJECT "?26"
#define SHIFTS       6
/* a node or frame reference shifted, the root node and no frame (0) kept */
#define NODE_REF(x)  "CASE WHEN " x " = 0 THEN 0 ELSE " x " + " SHIFT_NODE " END"
#define FRAME_REF(x) "CASE WHEN " x " = 0 THEN 0 ELSE " x " + " SHIFT_FRAME " END"

/* Each kind's statement with the record's ids shifted, as lb_db_merge
 * copies a profile's rows (common/db_merge.c: the same columns, the run
 * row's command trimmed and its exec generation counted among the
 * schema's images of its process, node 0 of the record not copied); the
 * kinds whose rows carry no ids (meta and the names) are added as a merge
 * adds them (lb_row_sql_shifted). Each value keeps its parameter index,
 * which the log names. */
static const char *const shifted_sql[LB_ROW_KINDS] = {
    [LB_ROW_FRAME] = "INSERT INTO \"%w\".frame VALUES(?1 + " SHIFT_FRAME ", ?2 + " SHIFT_MODULE
                     ", ?3, ?4, ?5, ?6)",
    [LB_ROW_MODULE] = "INSERT INTO \"%w\".module VALUES(?1 + " SHIFT_MODULE ", ?2, ?3, ?4)",
    /* the record's root is the schema's (its row breaks the key) */
    [LB_ROW_NODE] = "INSERT OR IGNORE INTO \"%w\".node VALUES(" NODE_REF("?1") ", " NODE_REF(
        "?2") ", " FRAME_REF("?3") ", ?4)",
    [LB_ROW_METRIC] = "INSERT INTO \"%w\".metric VALUES(" NODE_REF(
        "?1") ", ?2 + " SHIFT_THREAD ", ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
    [LB_ROW_SITE] = "INSERT INTO \"%w\".site VALUES(" FRAME_REF(
        "?1") ", ?2 + " SHIFT_THREAD ", ?3, ?4, ?5, ?6) ON CONFLICT DO UPDATE SET"
              " acquisitions = acquisitions + excluded.acquisitions,"
              " contended = contended + excluded.contended,"
              " releases = releases + excluded.releases",
    [LB_ROW_BLAME] = "INSERT INTO \"%w\".object_blame VALUES(?1 + " SHIFT_OBJECT
                     ", " NODE_REF("?2") ", ?3 + " SHIFT_THREAD ", ?4, ?5) ON CONFLICT DO"
                                         " UPDATE SET blame_s = blame_s + excluded.blame_s,"
                                         " count = count + excluded.count",
    [LB_ROW_THREAD] = "INSERT INTO \"%w\".thread VALUES(?1 + " SHIFT_THREAD ", ?2, " FRAME_REF(
        "?3") ", " NODE_REF("?4") ", ?5, ?6, ?7, ?8, ?9, 1 + " SHIFT_RUN ", ?10, ?11)",
    [LB_ROW_OBJECT] =
        "INSERT INTO \"%w\".sync_object VALUES(?1 + " SHIFT_OBJECT
        ", ?2, ?3, " NODE_REF("?4") ", ?5, ?6, ?7, ?8, ?9, ?10, 1 + " SHIFT_RUN ", ?11)",
    [LB_ROW_RUN] = "INSERT INTO \"%w\".run VALUES(1 + " SHIFT_RUN
                   ", rtrim(?1), ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,"
                   " (SELECT COUNT(*) FROM \"%w\".run"
                   " WHERE pid = ?3 AND proc_start IS ?16 AND run_key IS ?17), ?16, ?17)",
    [LB_ROW_STRUCTURAL] =
        "INSERT INTO \"%w\".structural_wait VALUES(?1 + " SHIFT_THREAD ", ?2 + " SHIFT_OBJECT
        ", ?3, ?4, ?5, ?6, " NODE_REF("?7") ", ?8 + " SHIFT_THREAD ", ?9, 0)",
    /* the object's blame rows read are the record's, shifted already */
    [LB_ROW_IDLE_HELPER] =
        "INSERT INTO \"%w\".structural_wait SELECT ?1 + " SHIFT_THREAD ", ?2 + " SHIFT_OBJECT
        ", ?3, ?4, ?5, 0,"
        " CASE WHEN node_id THEN node_id END,"
        " CASE WHEN node_id THEN thread_id END, blame_s * ?6, 1"
        " FROM \"%w\".object_blame WHERE object_id = ?2 + " SHIFT_OBJECT " AND blame_s > 0",
    [LB_ROW_WINDOW_THREAD] =
        "INSERT INTO \"%w\".thread VALUES(?1 + " SHIFT_THREAD
        ", ?2, " FRAME_REF("?3") ", NULL, ?4, ?5, ?6, ?7, ?8, 1 + " SHIFT_RUN ", NULL, NULL)",
    [LB_ROW_WINDOW_OBJECT] = "INSERT INTO \"%w\".sync_object VALUES(?1 + " SHIFT_OBJECT
                             ", ?2, ?3, NULL, NULL, ?4, ?5, ?6, ?7, ?8, 1 + " SHIFT_RUN ", 0)",
};

/* How many values each kind's row holds: its statement's parameters
 * (a shifted statement takes more, its shifts). */
static const unsigned char row_values[LB_ROW_KINDS] = {
    [LB_ROW_FRAME] = 6,         [LB_ROW_MODULE] = 4,      [LB_ROW_NODE] = 4,
    [LB_ROW_METRIC] = 15,       [LB_ROW_SITE] = 6,        [LB_ROW_BLAME] = 5,
    [LB_ROW_THREAD] = 11,       [LB_ROW_OBJECT] = 11,     [LB_ROW_RUN] = 17,
    [LB_ROW_STRUCTURAL] = 9,    [LB_ROW_IDLE_HELPER] = 6, [LB_ROW_SYMBOL] = 7,
    [LB_ROW_FUNCTIONS] = 3,     [LB_ROW_META] = 2,        [LB_ROW_WINDOW_THREAD] = 8,
    [LB_ROW_WINDOW_OBJECT] = 8,
};

int lb_row_values(enum lb_row_kind kind)
{
    return kind < LB_ROW_KINDS ? row_values[kind] : 0;
}

/* The table each kind's statement inserts into. */
static const char *const row_table[LB_ROW_KINDS] = {
    [LB_ROW_FRAME] = "frame",
    [LB_ROW_MODULE] = "module",
    [LB_ROW_NODE] = "node",
    [LB_ROW_METRIC] = "metric",
    [LB_ROW_SITE] = "site",
    [LB_ROW_BLAME] = "object_blame",
    [LB_ROW_THREAD] = "thread",
    [LB_ROW_OBJECT] = "sync_object",
    [LB_ROW_RUN] = "run",
    [LB_ROW_STRUCTURAL] = "structural_wait",
    [LB_ROW_IDLE_HELPER] = "structural_wait",
    [LB_ROW_SYMBOL] = "symbol",
    [LB_ROW_FUNCTIONS] = "module_function",
    [LB_ROW_META] = "meta",
    [LB_ROW_WINDOW_THREAD] = "thread",
    [LB_ROW_WINDOW_OBJECT] = "sync_object",
};

const char *lb_row_table(enum lb_row_kind kind)
{
    return kind < LB_ROW_KINDS ? row_table[kind] : NULL;
}

char *lb_row_sql(enum lb_row_kind kind, const char *schema)
{
    return kind < LB_ROW_KINDS ? sqlite3_mprintf(row_sql[kind], schema, schema) : NULL;
}

sqlite3_stmt *lb_row_prepare(sqlite3 *db, enum lb_row_kind kind, const char *schema)
{
    return lb_db_prepare_sql(db, lb_row_sql(kind, schema));
}

char *lb_row_sql_shifted(enum lb_row_kind kind, const char *schema)
{
    if (kind == LB_ROW_META)
        return lb_db_merge_meta_row_sql(schema);
    if (kind == LB_ROW_SYMBOL || kind == LB_ROW_FUNCTIONS) /* no ids, rows kept once */
        return lb_row_sql(kind, schema);
    return kind < LB_ROW_KINDS && shifted_sql[kind]
               ? sqlite3_mprintf(shifted_sql[kind], schema, schema)
               : NULL;
}

sqlite3_stmt *lb_row_prepare_shifted(sqlite3 *db, enum lb_row_kind kind, const char *schema)
{
    return lb_db_prepare_sql(db, lb_row_sql_shifted(kind, schema));
}

/* Row j's parameter N of a statement of several rows: its own past the
 * rows before it, the shifts (LB_ROW_SHIFT_PARAM on) shared. */
#define ROWS_STRIDE 32
_Static_assert(LB_ROW_SHIFT_PARAM + 6 <= ROWS_STRIDE, "a row's values and the shifts fit a stride");

/* *acc (sqlite3_mprintf'd, or NULL once out of memory) with fmt's text
 * appended. */
static void append(char **acc, const char *fmt, ...)
{
    if (!*acc)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *more = sqlite3_vmprintf(fmt, ap);
    va_end(ap);
    *acc = more ? sqlite3_mprintf("%z%z", *acc, more) : (sqlite3_free(*acc), NULL);
}

/* body[0..len) appended to *acc as row `row`'s: its values' parameters
 * renumbered (?N, or the n-th bare ? as ?n), the shifts' kept. */
static void append_renumbered(char **acc, const char *body, size_t len, int row)
{
    int bare = 0;
    for (size_t i = 0; i < len;) {
        size_t plain = i;
        while (i < len && body[i] != '?')
            i++;
        append(acc, "%.*s", (int)(i - plain), body + plain);
        if (i == len)
            break;
        int n = 0;
        bool digits = false;
        for (i++; i < len && body[i] >= '0' && body[i] <= '9'; i++, digits = true)
            n = n * 10 + (body[i] - '0');
        if (!digits)
            n = ++bare;
        append(acc, "?%d", n < LB_ROW_SHIFT_PARAM ? n + ROWS_STRIDE * row : n);
    }
}

char *lb_row_sql_rows(const char *one, int rows)
{
    const char *values = one ? strstr(one, " VALUES(") : NULL;
    if (!values || rows < 1)
        return NULL;
    const char *open = values + 7, *close = open;
    for (int depth = 0; *close; close++) {
        depth += (*close == '(') - (*close == ')');
        if (depth == 0)
            break;
    }
    if (!*close)
        return NULL;
    bool upsert = close[1] != '\0'; /* its conflicts update; any other row's are ignored */
    static const char insert[] = "INSERT INTO ";
    size_t skip = sizeof insert - 1;
    char *sql = !upsert && strncmp(one, insert, skip) == 0
                    ? sqlite3_mprintf("INSERT OR IGNORE INTO %.*s VALUES",
                                      (int)(values - one - skip), one + skip)
                    : sqlite3_mprintf("%.*s VALUES", (int)(values - one), one);
    for (int j = 0; j < rows; j++) {
        append(&sql, j ? ", (" : "(");
        append_renumbered(&sql, open + 1, (size_t)(close - open - 1), j);
        append(&sql, ")");
    }
    append(&sql, "%s", close + 1);
    return sql;
}

void lb_row_bind_shifts(sqlite3_stmt *st, const lb_db_shifts_t *s)
{
    const sqlite3_int64 by[SHIFTS] = { s->run, s->module, s->frame, s->node, s->thread, s->object };
    int last = sqlite3_bind_parameter_count(st);
    for (int i = 0; i < SHIFTS && LB_ROW_SHIFT_PARAM + i <= last; i++)
        sqlite3_bind_int64(st, LB_ROW_SHIFT_PARAM + i, by[i]);
}

enum {
    VALUE_INT = 1,
    VALUE_DOUBLE,
    VALUE_TEXT,
    VALUE_BLOB
};

static bool reserve(lb_rowlog_t *log, size_t more)
{
    if (log->failed)
        return false;
    if (log->len + more <= log->cap)
        return true;
    size_t cap = log->cap ? log->cap : 256; /* a row's values: a few dozen bytes */
    while (cap < log->len + more)
        cap *= 2;
    unsigned char *grown = lb_scratch_realloc(log->bytes, cap);
    if (!grown) {
        log->failed = true;
        return false;
    }
    log->bytes = grown;
    log->cap = cap;
    return true;
}

static void put(lb_rowlog_t *log, const void *bytes, size_t n)
{
    if (reserve(log, n)) {
        memcpy(log->bytes + log->len, bytes, n);
        log->len += n;
    }
}

void lb_rowlog_reset(lb_rowlog_t *log, bool header)
{
    log->len = 0;
    log->failed = false;
    if (header) {
        /* room for a small process's profile, so that it is seldom
         * copied; only the pages written are touched */
        reserve(log, 65536);
        unsigned char h[LB_ROWLOG_HEADER] = { 0 };
        uint32_t version = LB_SCHEMA_VERSION;
        memcpy(h, LB_ROWLOG_MAGIC, sizeof LB_ROWLOG_MAGIC);
        memcpy(h + 8, &version, sizeof version);
        put(log, h, sizeof h);
    }
}

void lb_rowlog_free(lb_rowlog_t *log)
{
    lb_scratch_free(log->bytes);
    memset(log, 0, sizeof *log);
}

bool lb_rowlog_failed(const lb_rowlog_t *log)
{
    return log->failed;
}

static void put_tag(lb_rowlog_t *row, int index, int type)
{
    unsigned char tag[2] = { (unsigned char)index, (unsigned char)type };
    put(row, tag, sizeof tag);
}

void lb_rowlog_int(lb_rowlog_t *row, int index, int64_t value)
{
    put_tag(row, index, VALUE_INT);
    put(row, &value, sizeof value);
}

void lb_rowlog_double(lb_rowlog_t *row, int index, double value)
{
    put_tag(row, index, VALUE_DOUBLE);
    put(row, &value, sizeof value);
}

static void put_bytes(lb_rowlog_t *row, int index, int type, const void *bytes, size_t n)
{
    if (n > INT32_MAX) {
        row->failed = true;
        return;
    }
    uint32_t len = (uint32_t)n;
    put_tag(row, index, type);
    put(row, &len, sizeof len);
    put(row, bytes, n);
}

void lb_rowlog_text(lb_rowlog_t *row, int index, const char *text)
{
    if (text)
        put_bytes(row, index, VALUE_TEXT, text, strlen(text));
}

void lb_rowlog_blob(lb_rowlog_t *row, int index, const void *bytes, size_t n)
{
    put_bytes(row, index, VALUE_BLOB, bytes, n);
}

void lb_rowlog_add(lb_rowlog_t *log, enum lb_row_kind kind, lb_rowlog_t *row)
{
    if (row->failed)
        log->failed = true;
    unsigned char k = (unsigned char)kind, end = 0;
    put(log, &k, 1);
    put(log, row->bytes, row->len);
    put(log, &end, 1);
    lb_rowlog_reset(row, false);
}

/* Reads the log's bytes in order; each read fails (false) past the end. */
typedef struct reader {
    const unsigned char *p, *end;
} reader_t;

static bool take(reader_t *r, void *out, size_t n)
{
    if ((size_t)(r->end - r->p) < n)
        return false;
    memcpy(out, r->p, n);
    r->p += n;
    return true;
}

/* One value (after its index byte) read into *v: SQLITE_OK or
 * SQLITE_CORRUPT. */
static int read_value(reader_t *r, lb_row_value_t *v)
{
    unsigned char type;
    if (!take(r, &type, 1))
        return SQLITE_CORRUPT;
    switch (type) {
    case VALUE_INT:
        v->type = SQLITE_INTEGER;
        return take(r, &v->i, sizeof v->i) ? SQLITE_OK : SQLITE_CORRUPT;
    case VALUE_DOUBLE:
        v->type = SQLITE_FLOAT;
        return take(r, &v->d, sizeof v->d) ? SQLITE_OK : SQLITE_CORRUPT;
    case VALUE_TEXT:
    case VALUE_BLOB:
        v->type = type == VALUE_TEXT ? SQLITE_TEXT : SQLITE_BLOB;
        if (!take(r, &v->n, sizeof v->n) || (size_t)(r->end - r->p) < v->n || v->n > INT32_MAX)
            return SQLITE_CORRUPT;
        v->bytes = r->p;
        r->p += v->n;
        return SQLITE_OK;
    default:
        return SQLITE_CORRUPT;
    }
}

/* A decoded value bound to st at index (type 0: NULL). */
static void bind_decoded(sqlite3_stmt *st, int index, const lb_row_value_t *v)
{
    if (v->type == SQLITE_INTEGER)
        sqlite3_bind_int64(st, index, v->i);
    else if (v->type == SQLITE_FLOAT)
        sqlite3_bind_double(st, index, v->d);
    else if (v->type == SQLITE_TEXT)
        sqlite3_bind_text(st, index, (const char *)v->bytes, (int)v->n, SQLITE_STATIC);
    else if (v->type == SQLITE_BLOB)
        sqlite3_bind_blob(st, index, v->bytes, (int)v->n, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, index);
}

void lb_rowlog_seal(lb_rowlog_t *log)
{
    uint32_t n = (uint32_t)log->len;
    if (log->len >= LB_ROWLOG_HEADER && log->len <= UINT32_MAX)
        memcpy(log->bytes + 12, &n, sizeof n);
}

/* The header of a log of n bytes: this build's magic or the one before's,
 * this schema version, and a sealed log's length n. */
static bool header_ok(reader_t *r, size_t n)
{
    unsigned char h[LB_ROWLOG_HEADER];
    uint32_t version, sealed;
    if (!take(r, h, sizeof h) || (memcmp(h, LB_ROWLOG_MAGIC, sizeof LB_ROWLOG_MAGIC) != 0 &&
                                  memcmp(h, LB_ROWLOG_MAGIC_BEFORE, sizeof LB_ROWLOG_MAGIC) != 0))
        return false;
    memcpy(&version, h + 8, sizeof version);
    memcpy(&sealed, h + 12, sizeof sealed);
    return version == LB_SCHEMA_VERSION && (sealed == 0 || sealed == n);
}

/* One row's values (after its kind byte) read into values[1 ..
 * row_values[kind]] by their parameter index (the others there type 0,
 * NULL; none past them is set): SQLITE_OK or SQLITE_CORRUPT. */
static int read_row(enum lb_row_kind kind, reader_t *r, lb_row_value_t values[LB_ROW_SHIFT_PARAM])
{
    memset(values, 0, ((size_t)row_values[kind] + 1) * sizeof *values);
    for (;;) {
        unsigned char index;
        if (!take(r, &index, 1) || index > row_values[kind])
            return SQLITE_CORRUPT;
        if (index == 0)
            return SQLITE_OK;
        if (read_value(r, &values[index]) != SQLITE_OK)
            return SQLITE_CORRUPT;
    }
}

/* One row's values (after its kind byte) read, edited (edit NULL: as
 * they are) and bound to st as row `row` of it; *bound gets bit i for
 * value ?i bound. */
static int bind_row(sqlite3_stmt *st, enum lb_row_kind kind, reader_t *r, int row, uint32_t *bound,
                    lb_row_edit_fn edit, void *ctx)
{
    _Static_assert(LB_ROW_SHIFT_PARAM <= 32, "a row's values fit the mask");
    lb_row_value_t values[LB_ROW_SHIFT_PARAM];
    *bound = 0;
    int rc = read_row(kind, r, values);
    if (rc != SQLITE_OK)
        return rc;
    if (edit)
        edit(ctx, kind, values);
    for (int i = 1; i <= row_values[kind]; i++) {
        if (!values[i].type)
            continue;
        *bound |= 1u << i;
        bind_decoded(st, i + ROWS_STRIDE * row, &values[i]);
    }
    return SQLITE_OK;
}

/* The values of row `row` that bound says were bound, NULL again for the
 * next rows; the parameters past them (a shifted statement's shifts)
 * kept. */
static void unbind_row(sqlite3_stmt *st, uint32_t bound, int row)
{
    for (int i = 1; bound >> i; i++)
        if (bound & (1u << i))
            sqlite3_bind_null(st, i + ROWS_STRIDE * row);
}

/* Whether a step's result fails the replay: not done, and no constraint
 * the direct insert would have broken (which leaves the row out, as it
 * would have). Its statement's bindings are then cleared whole, not
 * unbound one by one: a bind clears the connection's error, which the
 * replay's caller says. */
static bool step_failed(sqlite3_stmt *st, int step)
{
    bool failed = step != SQLITE_DONE && (step & 0xff) != SQLITE_CONSTRAINT;
    if (failed)
        sqlite3_clear_bindings(st);
    return failed;
}

/* A batched replay's rows of each kind not added yet, each where its
 * values start in the log. */
typedef struct held_rows {
    const unsigned char *at[LB_ROW_BATCH];
    int n;
} held_rows_t;

typedef struct replay {
    sqlite3 *db;
    const unsigned char *end;
    lb_row_statement_fn statement;
    lb_row_rows_fn rows; /* a kind's statement for several rows, or NULL */
    lb_row_edit_fn edit; /* or NULL */
    void *ctx;
    held_rows_t held[LB_ROW_KINDS];
} replay_t;

static int no_statement(const replay_t *p)
{
    return p->db && sqlite3_errcode(p->db) != SQLITE_OK ? sqlite3_errcode(p->db) : SQLITE_NOMEM;
}

/* Rows at[0..n) of kind added through st, a statement of n rows:
 * SQLITE_OK; SQLITE_CONSTRAINT where a constraint stopped it, which
 * leaves none of its rows; or another error. */
static int add_rows(replay_t *p, sqlite3_stmt *st, enum lb_row_kind kind,
                    const unsigned char *const *at, int n)
{
    uint32_t bound[LB_ROW_BATCH] = { 0 };
    int rc = SQLITE_OK;
    for (int j = 0; rc == SQLITE_OK && j < n; j++) {
        reader_t r = { at[j], p->end };
        rc = bind_row(st, kind, &r, j, &bound[j], p->edit, p->ctx);
    }
    int step = rc == SQLITE_OK ? sqlite3_step(st) : SQLITE_DONE;
    sqlite3_reset(st);
    if (step_failed(st, step))
        return step;
    for (int j = 0; j < n; j++)
        unbind_row(st, bound[j], j);
    return rc != SQLITE_OK ? rc : step == SQLITE_DONE ? SQLITE_OK : step;
}

/* The row at `at` of kind added alone, through its statement of one row;
 * a constraint the direct insert would have broken leaves it out, as it
 * would have. */
static int add_one(replay_t *p, enum lb_row_kind kind, const unsigned char *at)
{
    sqlite3_stmt *st = p->statement(p->ctx, kind);
    int rc = st ? add_rows(p, st, kind, &at, 1) : no_statement(p);
    return (rc & 0xff) == SQLITE_CONSTRAINT ? SQLITE_OK : rc;
}

/* The held rows of kind added, in their order: as many at once as a
 * statement of LB_ROW_BATCH, then of half as many... takes, the last one
 * at a time (a batch a constraint stopped adds none of its rows: they go
 * on in smaller batches, then one at a time). */
static int add_held(replay_t *p, enum lb_row_kind kind)
{
    held_rows_t *h = &p->held[kind];
    int n = h->n, done = 0, rc = SQLITE_OK;
    h->n = 0;
    for (int size = LB_ROW_BATCH; rc == SQLITE_OK && size > 1; size /= 2) {
        while (rc == SQLITE_OK && n - done >= size) {
            sqlite3_stmt *st = p->rows(p->ctx, kind, size);
            if (!st)
                break;
            rc = add_rows(p, st, kind, h->at + done, size);
            if ((rc & 0xff) == SQLITE_CONSTRAINT)
                break; /* one at a time, below */
            done += size;
        }
        if ((rc & 0xff) == SQLITE_CONSTRAINT)
            rc = SQLITE_OK;
    }
    for (int j = done; rc == SQLITE_OK && j < n; j++)
        rc = add_one(p, kind, h->at[j]);
    return rc;
}

static int add_all_held(replay_t *p)
{
    int rc = SQLITE_OK;
    for (int k = 0; rc == SQLITE_OK && k < LB_ROW_KINDS; k++)
        if (p->held[k].n)
            rc = add_held(p, (enum lb_row_kind)k);
    return rc;
}

int lb_rowlog_replay_rows(sqlite3 *db, const unsigned char *bytes, size_t n, bool header,
                          lb_row_statement_fn statement, lb_row_rows_fn rows, lb_row_keep_fn keep,
                          lb_row_edit_fn edit, void *ctx)
{
    reader_t r = { bytes, bytes + n };
    if (header && !header_ok(&r, n))
        return SQLITE_CORRUPT;
    replay_t p = {
        .db = db, .end = bytes + n, .statement = statement, .rows = rows, .edit = edit, .ctx = ctx
    };
    unsigned char kind;
    int rc = SQLITE_OK;
    while (rc == SQLITE_OK && take(&r, &kind, 1)) {
        if (kind >= LB_ROW_KINDS)
            return SQLITE_CORRUPT;
        /* each row read past first (a row cut short fails before any
         * statement), and added from where its values start */
        const unsigned char *at = r.p;
        lb_row_value_t values[LB_ROW_SHIFT_PARAM];
        if ((rc = read_row((enum lb_row_kind)kind, &r, values)) != SQLITE_OK)
            break;
        if (keep && !keep(ctx, (enum lb_row_kind)kind, values))
            continue;
        held_rows_t *h = &p.held[kind];
        if (rows && rows(ctx, (enum lb_row_kind)kind, LB_ROW_BATCH)) {
            /* held: added with LB_ROW_BATCH - 1 more of its kind, or
             * before the next row of a kind not held */
            h->at[h->n++] = at;
            if (h->n == LB_ROW_BATCH)
                rc = add_held(&p, (enum lb_row_kind)kind);
            continue;
        }
        /* a row of a kind not held may read rows before it (an idle
         * helper's structural rows, a run's exec generation) */
        rc = add_all_held(&p);
        if (rc == SQLITE_OK)
            rc = add_one(&p, (enum lb_row_kind)kind, at);
    }
    return rc == SQLITE_OK ? add_all_held(&p) : rc;
}

int lb_rowlog_each(const unsigned char *bytes, size_t n, lb_row_visit_fn visit, void *ctx)
{
    reader_t r = { bytes, bytes + n };
    if (!header_ok(&r, n))
        return SQLITE_CORRUPT;
    unsigned char kind;
    while (take(&r, &kind, 1)) {
        if (kind >= LB_ROW_KINDS)
            return SQLITE_CORRUPT;
        lb_row_value_t values[LB_ROW_SHIFT_PARAM];
        if (read_row((enum lb_row_kind)kind, &r, values) != SQLITE_OK)
            return SQLITE_CORRUPT;
        int stop = visit ? visit(ctx, (enum lb_row_kind)kind, values) : 0;
        if (stop)
            return stop;
    }
    return SQLITE_OK;
}

int lb_rowlog_replay(sqlite3 *db, const unsigned char *bytes, size_t n, bool header,
                     lb_row_statement_fn statement, void *ctx)
{
    return lb_rowlog_replay_rows(db, bytes, n, header, statement, NULL, NULL, NULL, ctx);
}
