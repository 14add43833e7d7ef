/* _exit and _Exit write the profile, as exit does (docs/DESIGN.md "Process
 * trees"). A vfork child shares its parent's memory and must not touch
 * lockblame's state: it is recognised by a pid that is not the one the
 * runtime started (or forked) with, and goes straight to the real call.
 *
 * glibc's own internal _exit calls (posix_spawn's child, abort paths) do
 * not go through the PLT and are not seen here. */
#include <dlfcn.h>
#include <errno.h>
#include <unistd.h>

#include "core/runtime.h"
#include "util/common.h"

typedef void (*exit_fn)(int);

__attribute__((noreturn)) static void finish_then(const char *name, int status)
{
    exit_fn real = (exit_fn)dlsym(RTLD_NEXT, name);
    if (lb_runtime_is_own_process()) {
        lb_runtime_finish(name);
        lb_runtime_wait_finished(); /* another thread's write, if it is writing */
    }
    real(status);
    __builtin_unreachable();
}

LB_EXPORT void _exit(int status)
{
    finish_then("_exit", status);
}

LB_EXPORT void _Exit(int status)
{
    finish_then("_Exit", status);
}
