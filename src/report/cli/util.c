/*
 * util.c - error exits, checked allocation, string buffer, intern table and
 * hash map for the lockblame CLI. Nothing here is thread-safe; the CLI is
 * single-threaded.
 */
#include "report/cli/util.h"

#include <stdlib.h>
#include <string.h>

#include "common/path_base.h"

/* Write one "lockblame: ..." line: embedded newlines become spaces so that
 * every error stays a single line, as scripts expect. */
static void vline(const char *fmt, va_list ap)
{
    char msg[1024];

    vsnprintf(msg, sizeof msg, fmt, ap);
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    fflush(stdout);
    fprintf(stderr, "lockblame: %s\n", msg);
}

void cli_die(int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vline(fmt, ap);
    va_end(ap);
    exit(code);
}

void cli_warn(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vline(fmt, ap);
    va_end(ap);
}

void *lb_xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);

    if (!p)
        cli_die(LB_EXIT_FAIL, "out of memory (%zu bytes)", size);
    return p;
}

void *lb_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);

    if (!p)
        cli_die(LB_EXIT_FAIL, "out of memory (%zu x %zu bytes)", n, size);
    return p;
}

void *lb_xrealloc(void *p, size_t size)
{
    void *q = realloc(p, size ? size : 1);

    if (!q)
        cli_die(LB_EXIT_FAIL, "out of memory (%zu bytes)", size);
    return q;
}

char *lb_xstrdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = lb_xmalloc(n);

    memcpy(d, s, n);
    return d;
}

void lb_grow(void **arr, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return;
    size_t ncap = *cap ? *cap : 16;

    while (ncap < need)
        ncap *= 2;
    *arr = lb_xrealloc(*arr, ncap * size);
    *cap = ncap;
}

void lb_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(base, n, size, cmp);
}

static void buf_reserve(struct lb_buf *b, size_t extra)
{
    lb_grow((void **)&b->s, &b->cap, b->len + extra + 1, 1);
}

void lb_buf_puts(struct lb_buf *b, const char *s)
{
    size_t n = strlen(s);

    buf_reserve(b, n);
    memcpy(b->s + b->len, s, n + 1);
    b->len += n;
}

void lb_buf_putc(struct lb_buf *b, char c)
{
    buf_reserve(b, 1);
    b->s[b->len++] = c;
    b->s[b->len] = '\0';
}

void lb_buf_printf(struct lb_buf *b, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    buf_reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void lb_buf_reset(struct lb_buf *b)
{
    b->len = 0;
    if (b->s)
        b->s[0] = '\0';
}

void lb_buf_free(struct lb_buf *b)
{
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
}

const char *lb_buf_str(struct lb_buf *b)
{
    return b->s ? b->s : "";
}

/* FNV-1a: short keys, good enough spread for open addressing. */
static uint32_t str_hash(const char *s)
{
    uint32_t h = 2166136261u;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static void strtab_rehash(struct lb_strtab *t, size_t nslots)
{
    free(t->slots);
    t->slots = lb_xmalloc(nslots * sizeof *t->slots);
    memset(t->slots, 0xff, nslots * sizeof *t->slots);
    t->nslots = nslots;
    for (int32_t id = 0; id < t->n; id++) {
        size_t i = t->hashes[id] & (nslots - 1);

        while (t->slots[i] >= 0)
            i = (i + 1) & (nslots - 1);
        t->slots[i] = id;
    }
}

int32_t lb_strtab_find(const struct lb_strtab *t, const char *s)
{
    if (!t->nslots)
        return -1;
    uint32_t h = str_hash(s);

    for (size_t i = h & (t->nslots - 1);; i = (i + 1) & (t->nslots - 1)) {
        int32_t id = t->slots[i];

        if (id < 0)
            return -1;
        if (t->hashes[id] == h && strcmp(t->strs[id], s) == 0)
            return id;
    }
}

int32_t lb_strtab_intern(struct lb_strtab *t, const char *s)
{
    int32_t id = lb_strtab_find(t, s);

    if (id >= 0)
        return id;
    if ((size_t)(t->n + 1) * 2 > t->nslots)
        strtab_rehash(t, t->nslots ? t->nslots * 2 : 64);
    size_t cap = t->cap;
    lb_grow((void **)&t->strs, &cap, (size_t)t->n + 1, sizeof *t->strs);
    lb_grow((void **)&t->hashes, &t->cap, (size_t)t->n + 1, sizeof *t->hashes);
    id = t->n++;
    t->strs[id] = lb_xstrdup(s);
    t->hashes[id] = str_hash(s);
    size_t i = t->hashes[id] & (t->nslots - 1);

    while (t->slots[i] >= 0)
        i = (i + 1) & (t->nslots - 1);
    t->slots[i] = id;
    return id;
}

void lb_strtab_free(struct lb_strtab *t)
{
    for (int32_t i = 0; i < t->n; i++)
        free(t->strs[i]);
    free(t->strs);
    free(t->hashes);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

int32_t lb_map_get(const struct lb_map *m, uint64_t key)
{
    return lb_u64map_find(&m->m, key);
}

int32_t *lb_map_slot(struct lb_map *m, uint64_t key, bool *is_new)
{
    int32_t *slot = lb_u64map_slot(&m->m, key, is_new);

    if (!slot)
        cli_die(LB_EXIT_FAIL, "out of memory (map of %zu keys)", m->m.used);
    return slot;
}

void lb_map_free(struct lb_map *m)
{
    lb_u64map_free(&m->m);
}

const char *lb_basename(const char *path)
{
    return path ? lb_path_base(path) : "";
}

char *lb_trim_end(char *s)
{
    size_t n = s ? strlen(s) : 0;

    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}
