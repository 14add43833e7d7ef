/* demangle.c - see demangle.h. */
#include "common/demangle.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rust_names.h"
#include "common/rust_v0.h"

char *lb_demangle_dup_with(const char *name, lb_cxx_demangler *cxx)
{
    if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
        return NULL;
    char rust[4096];
    if (lb_rust_legacy_demangle(name, rust, sizeof rust) ||
        lb_rust_v0_demangle(name, rust, sizeof rust))
        return strdup(rust);
    if (name[1] != 'Z')
        return NULL;
    if (!cxx)
        cxx = (lb_cxx_demangler *)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    int status = -1;
    char *d = cxx ? cxx(name, NULL, NULL, &status) : NULL;
    if (d && status == 0)
        return d;
    free(d);
    return NULL;
}

char *lb_demangle_dup(const char *name)
{
    return lb_demangle_dup_with(name, NULL);
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
