/* dlclose: a library the program unloads is recorded first, so that the
 * profile, symbolized at exit, can still name its code
 * (core/retired_modules.h). The return value and dlerror() are
 * the real call's. */
#include <dlfcn.h>

#include "core/phase.h"
#include "core/retired_modules.h"
#include "util/common.h"

LB_EXPORT int dlclose(void *handle)
{
    int (*real)(void *) = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
    if (lb_runtime_monitoring())
        lb_retired_record(handle);
    return real(handle);
}
