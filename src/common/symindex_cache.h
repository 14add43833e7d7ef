/* The per-user cache of symbol indexes (symindex.h): a module's sorted
 * function symbols, kept in a file named by the module's GNU build id and
 * the table they come from, so that a big module's index is built once,
 * not once per run: the same build id means the same file, hence the same
 * symbols. The files, <build id in hex>.<symtab|dynsym|libdwfl> (the
 * table the index comes from), live in $XDG_CACHE_HOME/lockblame/symindex/ (else
 * $HOME/.cache/lockblame/symindex/), hold addresses as the module's file
 * gives them (no load bias: one file serves every process and run) and
 * the names themselves, and are written to a temporary name and renamed
 * (concurrent writers each leave a whole file). A file is read with one
 * read() and used only when every check holds (symindex_cache.c, "The
 * file"); anything else is a miss. The directory is used only where it is
 * this user's (its owner the effective user, no group or other write)
 * and a file only where it is this user's regular file; missing
 * directories are made only under one of the user's own (`sudo -E` makes
 * no root-owned ~/.cache); files are opened with O_NOFOLLOW, written
 * under a fresh name (O_EXCL) and renamed, and only the cache's own names
 * are removed to keep its bound. Nothing here says anything: a cache that
 * cannot be read or written costs a failed system call or two.
 *
 * Off unless lb_symindex_cache_use (symindex.h) turned it on: the CLI
 * does, the library never does, so that no profiled process reads or
 * writes files in its user's home. Not thread-safe: the state is set
 * before the naming starts, and one thread names at a time. */
#ifndef LB_COMMON_SYMINDEX_CACHE_H
#define LB_COMMON_SYMINDEX_CACHE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/symindex.h"

/* Modules whose symbol table has at most this many entries are not
 * cached: building their index costs less than ~0.5M instructions
 * (~460 an entry: cc1's 28,902 cost 13.4M), about what opening, reading
 * and checking a file costs, and they would fill the cache with files
 * that save nothing. */
#define LB_SYMINDEX_CACHE_MIN_SYMBOLS 1000

/* Where a module's index comes from. */
typedef enum lb_symindex_table {
    LB_SYMINDEX_TABLE_SYMTAB,  /* the module's own .symtab, read through libelf */
    LB_SYMINDEX_TABLE_DYNSYM,  /* its own .dynsym (no .symtab), read so */
    LB_SYMINDEX_TABLE_LIBDWFL, /* the table libdwfl assembles (a separate
                                * debug file's, MiniDebugInfo's) */
} lb_symindex_table_t;

/* What names a module's index: its build id and its table. */
typedef struct lb_symindex_key {
    const unsigned char *build_id;
    size_t build_id_len; /* 1..LB_SYMINDEX_CACHE_MAX_BUILD_ID */
    lb_symindex_table_t table;
    uint64_t count;   /* the table's entries, as libdwfl counts them */
    uint64_t content; /* the own table's bytes and its names' summed
                       * (lb_symindex_cache_sum; 0 for libdwfl's): a file
                       * rewritten under the same build id (prelink, objcopy
                       * renaming a symbol) is another key */
} lb_symindex_key_t;
#define LB_SYMINDEX_CACHE_MAX_BUILD_ID 64

/* A sum of len bytes (any length), as the cache sums its files. */
uint64_t lb_symindex_cache_sum(const void *p, size_t len, uint64_t seed);

/* The cache key of mod's index, as its build uses it (its build id
 * pointing into libdwfl's data), whether or not the cache is on; false
 * where such an index is not cached (no build id, too few symbols). */
bool lb_symindex_cache_key_of(Dwfl_Module *mod, lb_symindex_key_t *key);

/* Whether lb_symindex_cache_use turned the cache on. */
bool lb_symindex_cache_on(void);

/* The cached index of key, its starts moved by bias: *n entries (malloc),
 * whose names point into *names (malloc; free it with the entries). NULL,
 * *n and *names untouched, when there is no such file or it fails a
 * check, or without memory. */
lb_symentry_t *lb_symindex_cache_load(const lb_symindex_key_t *key, uintptr_t bias, size_t *n,
                                      char **names);

/* Writes e[0..n) (sorted as the index sorts, starts at bias) as key's
 * file, making the cache's directories where missing, and removing the
 * files written longest ago where the cache would exceed its bound.
 * Silent; on any failure nothing is left but what was there. */
void lb_symindex_cache_store(const lb_symindex_key_t *key, uintptr_t bias, const lb_symentry_t *e,
                             size_t n);
#endif
