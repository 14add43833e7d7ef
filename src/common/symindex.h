/* A sorted index of one module's function symbols, for O(log n) lookups
 * by address. libdwfl's dwfl_module_addrinfo/addrname scan the module's
 * whole symbol table on every call; a module that exports its symbols
 * (gcc's cc1: 29K in .dynsym) made every profiled cc1 of a make -j tree
 * spend ~100 ms of its exit in those scans.
 *
 * The index is built on a module's first lookup and kept in the module's
 * libdwfl userdata slot until lb_symindex_release_all. Where
 * lb_symindex_cache_use turned it on (the CLI), a big module's index is
 * read from, or written to, a per-user cache keyed by its build id
 * (symindex_cache.h): the same entries either way. Single-threaded: the
 * writer symbolizes on one thread. */
#ifndef LB_COMMON_SYMINDEX_H
#define LB_COMMON_SYMINDEX_H
#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>

/* What the index says of an address. */
typedef enum lb_symindex_answer {
    LB_SYMINDEX_NONE, /* mod has no function symbols indexed (none, or no
                       * memory): ask libdwfl */
    LB_SYMINDEX_MISS, /* no function symbol holds pc; final: libdwfl would
                       * rescan the same table to find at most a label */
    LB_SYMINDEX_HIT,  /* *name, *lo and *hi are set */
} lb_symindex_answer_t;

/* One function symbol of an index, as the index keeps it. */
typedef struct lb_symentry {
    uintptr_t lo, size; /* size 0: up to the next symbol's start */
    const char *name;
    int rank; /* 0 global, 1 weak, 2 local: lower is preferred */
} lb_symentry_t;

/* The search of lb_symindex_find over e[0..n), sorted by lo and then by
 * preference: LB_SYMINDEX_HIT or LB_SYMINDEX_MISS (n 0: MISS). The
 * writer's symbol cache (symcache.h) searches its copies of indexes with
 * it. */
lb_symindex_answer_t lb_symentries_find(const lb_symentry_t *e, size_t n, uintptr_t pc,
                                        const char **name, uintptr_t *lo, uintptr_t *hi);

/* The function symbol (STT_FUNC or STT_GNU_IFUNC, defined) holding pc in
 * mod: its name as libdwfl gives it (version suffix included) and its
 * bounds [*lo, *hi) (a symbol without a size ends where the next one
 * starts). Where several symbols start at the same address, a global one
 * is preferred to a weak one, and a weak one to a local one, as libdwfl
 * does. Builds mod's index on first use. */
lb_symindex_answer_t lb_symindex_find(Dwfl_Module *mod, uintptr_t pc, const char **name,
                                      uintptr_t *lo, uintptr_t *hi);

/* Calls visit for each entry of mod's index, in the index's order (by
 * address, the preferred binding first among symbols at one address),
 * with the entry's start, its size (0: up to the next start) and its
 * name. False, visiting nothing, when mod has no function symbols indexed
 * (lb_symindex_find answers LB_SYMINDEX_NONE). */
typedef void (*lb_symindex_visit_fn)(void *ctx, uintptr_t lo, uintptr_t size, const char *name);
bool lb_symindex_each(Dwfl_Module *mod, lb_symindex_visit_fn visit, void *ctx);

/* mod's index itself: *n entries in the index's order (NULL, *n 0, when
 * lb_symindex_find answers LB_SYMINDEX_NONE). They live until
 * lb_symindex_release_all. */
const lb_symentry_t *lb_symindex_entries(Dwfl_Module *mod, size_t *n);

/* Turns the per-user cache of indexes (symindex_cache.h) on for this
 * process, unless LOCKBLAME_CACHE is 0 or neither XDG_CACHE_HOME nor HOME
 * names an absolute directory; each call reads the environment again.
 * The CLI calls it; the library never does, so a profiled process reads
 * and writes no cache. */
void lb_symindex_cache_use(void);

/* Frees every module's index; call before dwfl_end. */
void lb_symindex_release_all(Dwfl *dwfl);
#endif
