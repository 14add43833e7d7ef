#include "util/env.h"

#include <stdlib.h>
#include <string.h>

extern char **environ;

const char *lb_getenv(const char *name)
{
    const char *v = getenv(name);
    if (v)
        return v;
    size_t n = strlen(name);
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}
