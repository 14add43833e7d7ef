#include "core/gomp_real.h"

#include <dlfcn.h>
#include <errno.h>

#include "util/log.h"

lb_gomp_table_t lb_gomp;

void *lb_gomp_resolve(void **slot, const char *name)
{
    void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (fn)
        return fn;
    int saved_errno = errno; /* dlsym may allocate: the program's errno stays */
    fn = dlsym(RTLD_NEXT, name);
    if (!fn)
        lb_die("libgomp's %s is missing", name);
    __atomic_store_n(slot, fn, __ATOMIC_RELEASE);
    errno = saved_errno;
    return fn;
}
