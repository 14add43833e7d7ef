/* demangle.c - see demangle.h. */
#include "common/demangle.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rust_names.h"
#include "common/rust_v0.h"

typedef char *cxa_demangle_fn(const char *mangled, char *buf, size_t *len, int *status);

char *lb_demangle_dup(const char *name)
{
    if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
        return NULL;
    char rust[4096];
    if (lb_rust_legacy_demangle(name, rust, sizeof rust) ||
        lb_rust_v0_demangle(name, rust, sizeof rust))
        return strdup(rust);
    if (name[1] != 'Z')
        return NULL;
    cxa_demangle_fn *demangle = (cxa_demangle_fn *)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    int status = -1;
    char *d = demangle ? demangle(name, NULL, NULL, &status) : NULL;
    if (d && status == 0)
        return d;
    free(d);
    return NULL;
}

const char *lb_demangled(const char *name)
{
    static char out[256];
    char *d = lb_demangle_dup(name);
    if (!d)
        return name;
    snprintf(out, sizeof out, "%s", d);
    free(d);
    return out;
}
