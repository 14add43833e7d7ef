/*
 * util.h - small helpers shared by the lockblame CLI: error exits, checked
 * allocation, a growable string buffer, a string intern table and a
 * uint64 -> int32 hash map.
 *
 * Error contract: every lb_x* allocator either returns memory or exits with
 * status 1 after one "lockblame:" line; callers never see NULL.
 */
#ifndef LB_CLI_UTIL_H
#define LB_CLI_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/u64map.h"

enum lb_exit {
    LB_EXIT_OK = 0,    /* success */
    LB_EXIT_FAIL = 1,  /* runtime failure */
    LB_EXIT_USAGE = 2, /* usage error or bad input */
};

/* Print "lockblame: <msg>" as one line on stderr and exit with `code`. */
_Noreturn void cli_die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Same, but returns: for warnings. */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void *lb_xmalloc(size_t size);
void *lb_xcalloc(size_t n, size_t size);
void *lb_xrealloc(void *p, size_t size);
char *lb_xstrdup(const char *s); /* NULL stays NULL */
/* Grow *arr (of *cap elements of `size` bytes) to hold at least `need`. */
void lb_grow(void **arr, size_t *cap, size_t need, size_t size);
/* qsort of n elements, where an empty array may be NULL (qsort's own
 * pointer must not be). */
void lb_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

/* Growable NUL-terminated string. Zero-initialise to start. */
struct lb_buf {
    char *s;    /* contents, NUL-terminated once anything was added */
    size_t len; /* bytes used, excluding the NUL */
    size_t cap; /* bytes allocated */
};
void lb_buf_puts(struct lb_buf *b, const char *s);
void lb_buf_putc(struct lb_buf *b, char c);
void lb_buf_printf(struct lb_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void lb_buf_reset(struct lb_buf *b); /* len = 0, keeps memory */
void lb_buf_free(struct lb_buf *b);
const char *lb_buf_str(struct lb_buf *b); /* "" when empty */

/* String intern table: equal strings get equal dense ids 0, 1, 2, ... */
struct lb_strtab {
    char **strs;      /* id -> owned copy */
    uint32_t *hashes; /* id -> hash of strs[id] */
    int32_t n;        /* number of ids handed out */
    size_t cap;       /* capacity of strs/hashes */
    int32_t *slots;   /* open addressing table of ids, -1 = empty */
    size_t nslots;    /* power of two */
};
int32_t lb_strtab_intern(struct lb_strtab *t, const char *s);
int32_t lb_strtab_find(const struct lb_strtab *t, const char *s); /* -1 if absent */
void lb_strtab_free(struct lb_strtab *t);

/* uint64 -> int32 map: common/u64map.h, exiting on out-of-memory.
 * Zero-initialise to start. */
struct lb_map {
    lb_u64map_t m;
};
int32_t lb_map_get(const struct lb_map *m, uint64_t key); /* -1 if absent */
/* Slot for key; a new slot holds -1 and *is_new is set. */
int32_t *lb_map_slot(struct lb_map *m, uint64_t key, bool *is_new);
void lb_map_free(struct lb_map *m);

const char *lb_basename(const char *path);
/* Cut trailing whitespace of s in place; returns s (NULL stays NULL). */
char *lb_trim_end(char *s); /* pointer into path; "" for NULL */

#endif
