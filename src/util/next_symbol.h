/* The next definition of a libc function past lockblame's export of the
 * same name (dlsym(RTLD_NEXT)), looked up on first use and kept in its
 * entry: the program may call the function before lockblame's constructor
 * runs. Benign race: two threads resolving at once store the same
 * pointer. NULL if there is none.
 *
 * Each entry also lies in one section (LB_NEXT_SYMBOL), so that a forking
 * process resolves them all before the fork (lb_next_symbols_settle): a
 * fork child that made the look-up itself would read the loader's and
 * libc's symbol tables again, a page fault for each page its parent had
 * mapped (a prefork server's backend per connection: its first munmap). */
#ifndef LB_NEXT_SYMBOL_H
#define LB_NEXT_SYMBOL_H
#include <dlfcn.h>

typedef struct lb_next_symbol {
    void *fn;         /* NULL until found */
    const char *name; /* the libc function's name */
} lb_next_symbol_t;

/* A static entry named `entry` for libc's `symbol`. Entries are 16
 * bytes, aligned to 16, so that the linker lays the section out as one
 * array. */
#define LB_NEXT_SYMBOL(entry, symbol)                                              \
    static lb_next_symbol_t entry __attribute__((used, section("lb_next_symbols"), \
                                                 aligned(2 * sizeof(void *)))) = { NULL, symbol }

static inline void *lb_next_symbol(lb_next_symbol_t *entry)
{
    void *f = __atomic_load_n(&entry->fn, __ATOMIC_ACQUIRE);
    if (!f) {
        f = dlsym(RTLD_NEXT, entry->name);
        __atomic_store_n(&entry->fn, f, __ATOMIC_RELEASE);
    }
    return f;
}

/* Before a fork: every entry not looked up yet is, once (a name libc does
 * not define is tried again at its use, not at every fork). */
void lb_next_symbols_settle(void);
#endif
