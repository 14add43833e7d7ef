/* The next definition of a libc function past lockblame's export of the
 * same name (dlsym(RTLD_NEXT)), looked up on first use and kept in *slot:
 * the program may call the function before lockblame's constructor runs.
 * Benign race: two threads resolving at once store the same pointer.
 * NULL if there is none. */
#ifndef LB_NEXT_SYMBOL_H
#define LB_NEXT_SYMBOL_H
#include <dlfcn.h>

static inline void *lb_next_symbol(void **slot, const char *name)
{
    void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!f) {
        f = dlsym(RTLD_NEXT, name);
        __atomic_store_n(slot, f, __ATOMIC_RELEASE);
    }
    return f;
}
#endif
