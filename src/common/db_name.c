#include "common/db_name.h"
#include "common/path_base.h"

#include <stdio.h>
#include <string.h>

int lb_default_db_name(char *out, size_t size, const char *prog, int pid)
{
    return snprintf(out, size, "lockblame.%s.%d.db", lb_path_base(prog), pid);
}

int lb_shared_table_path(char *out, size_t size, const char *db_path)
{
    return snprintf(out, size, "%s-shared", db_path);
}
