/* See meta_known.h. The rules below are the upsert's in
 * lb_db_merge_meta_row_sql (common/db_merge.c, meta_upsert), read in C;
 * tests/unit/meta_known.c holds the two to each other. */
#include "common/meta_known.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/room_for.h"

struct lb_meta_known_entry {
    char *key;
    size_t key_n;
    char *value; /* NULL: not known (not text, or a sum not followed) */
    size_t value_n;
};

/* The keys the upsert leaves as dst has them (or without them). */
static const char *const version_keys[] = { "schema_version", "lockblame_version", "writer" };
/* The keys it sums as reals. */
static const char *const real_keys[] = { "unsampled_cpu_s", "unsampled_blocked_cpu_s" };

/* The most digits of a counter summed here: two of them stay below
 * INT64_MAX, as SQLite's CAST(... AS INTEGER) and + compute them. */
#define COUNTER_DIGITS 18

static bool text_is(const char *text, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(text, word, n) == 0;
}

static bool one_of(const char *text, size_t n, const char *const *words, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (text_is(text, n, words[i]))
            return true;
    return false;
}

/* Non-empty and only ASCII digits: the upsert's `<> ''` and `NOT GLOB
 * '*[^0-9]*'` (a NUL byte is not a digit; see has_nul). */
static bool all_digits(const char *text, size_t n)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (text[i] < '0' || text[i] > '9')
            return false;
    return true;
}

/* SQL's text functions stop at a NUL byte where these do not. */
static bool has_nul(const char *text, size_t n)
{
    return memchr(text, '\0', n) != NULL;
}

static char *copy_of(const void *bytes, size_t n)
{
    char *c = malloc(n + 1);
    if (c) {
        memcpy(c, bytes, n);
        c[n] = '\0';
    }
    return c;
}

/* Entry e's value set to bytes[0..n) (NULL: not known). */
static void set_value(lb_meta_known_entry_t *e, const void *bytes, size_t n)
{
    free(e->value);
    e->value = bytes ? copy_of(bytes, n) : NULL;
    e->value_n = e->value ? n : 0;
}

static lb_meta_known_entry_t *find(lb_meta_known_t *m, const char *key, size_t n)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->e[i].key_n == n && memcmp(m->e[i].key, key, n) == 0)
            return &m->e[i];
    return NULL;
}

/* A new entry for key (its value not known), or NULL without memory. */
static lb_meta_known_entry_t *add(lb_meta_known_t *m, const void *key, size_t n)
{
    if (!lb_room_for((void **)&m->e, &m->cap, m->n, sizeof *m->e, 32))
        return NULL;
    char *k = copy_of(key, n);
    if (!k)
        return NULL;
    m->e[m->n] = (lb_meta_known_entry_t){ .key = k, .key_n = n };
    return &m->e[m->n++];
}

static void load(lb_meta_known_t *m, sqlite3 *db, const char *dst)
{
    m->loaded = true;
    sqlite3_stmt *st = NULL;
    char *q = sqlite3_mprintf("SELECT key, value FROM \"%w\".meta", dst);
    int rc = q ? sqlite3_prepare_v2(db, q, -1, &st, NULL) : SQLITE_NOMEM;
    sqlite3_free(q);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        rc = SQLITE_OK;
        if (sqlite3_column_type(st, 0) != SQLITE_TEXT)
            continue; /* a key the upsert's text keys never meet */
        const void *key = sqlite3_column_text(st, 0);
        size_t key_n = (size_t)sqlite3_column_bytes(st, 0);
        lb_meta_known_entry_t *e = key ? add(m, key, key_n) : NULL;
        if (!e) {
            rc = SQLITE_NOMEM;
            break;
        }
        if (sqlite3_column_type(st, 1) == SQLITE_TEXT)
            set_value(e, sqlite3_column_text(st, 1), (size_t)sqlite3_column_bytes(st, 1));
    }
    sqlite3_finalize(st);
    m->failed = rc != SQLITE_DONE;
}

/* The number digits[0..n) spell (all digits, n <= COUNTER_DIGITS). */
static int64_t counter_of(const char *digits, size_t n)
{
    int64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = v * 10 + (digits[i] - '0');
    return v;
}

/* e's value after the upsert sums `value` into it (both counters), and
 * whether that changed it; not known past COUNTER_DIGITS. */
static bool sum_changes(lb_meta_known_entry_t *e, const char *value, size_t n)
{
    if (e->value_n > COUNTER_DIGITS || n > COUNTER_DIGITS) {
        set_value(e, NULL, 0);
        return true;
    }
    char sum[24];
    int len = snprintf(sum, sizeof sum, "%lld",
                       (long long)(counter_of(e->value, e->value_n) + counter_of(value, n)));
    if ((size_t)len == e->value_n && memcmp(sum, e->value, e->value_n) == 0)
        return false;
    set_value(e, sum, (size_t)len);
    return true;
}

bool lb_meta_known_changes(lb_meta_known_t *m, sqlite3 *db, const char *dst,
                           const lb_row_value_t *key, const lb_row_value_t *value)
{
    if (key->type == 0)
        return true; /* NULL: the upsert's WHERE leaves the row out */
    if (key->type != SQLITE_TEXT) {
        /* stored as its text ('42'), which a text key may name later:
         * not followed, so every row is added until the next forget */
        m->loaded = m->failed = true;
        return true;
    }
    const char *k = (const char *)key->bytes;
    size_t kn = key->n;
    if (has_nul(k, kn))
        return true;
    if (one_of(k, kn, version_keys, sizeof version_keys / sizeof *version_keys))
        return false; /* the upsert's WHERE leaves the row out */
    if (!m->loaded)
        load(m, db, dst);
    if (m->failed)
        return true;
    bool text = value->type == SQLITE_TEXT && !has_nul((const char *)value->bytes, value->n);
    lb_meta_known_entry_t *e = find(m, k, kn);
    if (!e) { /* inserted as it is */
        e = add(m, k, kn);
        if (!e)
            m->failed = true; /* from here every row is added */
        else if (text)
            set_value(e, value->bytes, value->n);
        return true;
    }
    if (one_of(k, kn, real_keys, sizeof real_keys / sizeof *real_keys) || !text || !e->value ||
        has_nul(e->value, e->value_n)) {
        set_value(e, NULL, 0);
        return true;
    }
    const char *v = (const char *)value->bytes;
    if (!all_digits(e->value, e->value_n) || !all_digits(v, value->n))
        return false; /* ELSE value: dst's kept */
    return sum_changes(e, v, value->n);
}

void lb_meta_known_forget(lb_meta_known_t *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->e[i].key);
        free(m->e[i].value);
    }
    free(m->e);
    *m = (lb_meta_known_t){ 0 };
}
