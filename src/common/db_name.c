#include "common/db_name.h"

#include <stdio.h>
#include <string.h>

int lb_default_db_name(char *out, size_t size, const char *prog, int pid)
{
    const char *slash = strrchr(prog, '/');
    return snprintf(out, size, "lockblame.%s.%d.db", slash ? slash + 1 : prog, pid);
}
