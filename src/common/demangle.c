/* demangle.c - see demangle.h. Called by the writer's exit line and by
 * `lockblame run`'s summary (both through top_site.c; malloc is fine
 * there), never in a signal handler or a lock wrapper. */
#include "common/demangle.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/rust_names.h"

typedef char *cxa_demangle_fn(const char *mangled, char *buf, size_t *len, int *status);

const char *lb_demangled(const char *name)
{
    static char out[256];
    if (!name || name[0] != '_' || name[1] != 'Z')
        return name;
    if (lb_rust_legacy_demangle(name, out, sizeof out))
        return out;
    cxa_demangle_fn *demangle = (cxa_demangle_fn *)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    int status = -1;
    char *d = demangle ? demangle(name, NULL, NULL, &status) : NULL;
    if (!d || status != 0) {
        free(d);
        return name;
    }
    snprintf(out, sizeof out, "%s", d);
    free(d);
    return out;
}
