/* See lazy_lib.h. */
#include "util/lazy_lib.h"

#include <dlfcn.h>
#include <stdio.h>

bool lb_lazy_lib_open(lb_lazy_lib_t *lib, char *why, unsigned whylen)
{
    if (__atomic_load_n(&lib->handle, __ATOMIC_ACQUIRE))
        return true;
    if (__atomic_load_n(&lib->failed, __ATOMIC_RELAXED)) {
        snprintf(why, whylen, "%s could not be loaded", lib->soname);
        return false;
    }
    /* RTLD_LOCAL: the program's own symbol look-ups never see it (unless
     * the program loaded the library itself, when this is its copy). */
    void *h = dlopen(lib->soname, RTLD_LAZY | RTLD_LOCAL);
    if (!h) {
        const char *err = dlerror();
        snprintf(why, whylen, "%s", err ? err : lib->soname);
        __atomic_store_n(&lib->failed, 1, __ATOMIC_RELAXED);
        return false;
    }
    __atomic_store_n(&lib->handle, h, __ATOMIC_RELEASE);
    return true;
}

void *lb_lazy_sym(lb_lazy_lib_t *lib, const char *name)
{
    char why[256];
    if (!lb_lazy_lib_open(lib, why, sizeof why))
        return NULL;
    return dlsym(__atomic_load_n(&lib->handle, __ATOMIC_ACQUIRE), name);
}
