#include "util/env.h"

#include <dlfcn.h>
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
        if (**e == *name && strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

void lb_unsetenv(const char *name)
{
    unsetenv(name);
    int (*libc_unsetenv)(const char *) = (int (*)(const char *))dlsym(RTLD_NEXT, "unsetenv");
    if (libc_unsetenv)
        libc_unsetenv(name);
}

long lb_getenv_pid(const char *name)
{
    const char *v = lb_getenv(name);
    if (!v)
        return -1;
    long pid = 0;
    for (; *v >= '0' && *v <= '9' && pid < 100000000L; v++)
        pid = pid * 10 + (*v - '0');
    return pid;
}
