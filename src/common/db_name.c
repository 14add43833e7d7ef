#include "common/db_name.h"
#include "common/path_base.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int lb_default_db_name(char *out, size_t size, const char *prog, int pid)
{
    return snprintf(out, size, "lockblame.%s.%d.db", lb_path_base(prog), pid);
}

int lb_shared_table_path(char *out, size_t size, const char *db_path)
{
    return snprintf(out, size, "%s-shared", db_path);
}

bool lb_db_dir(const char *path, char *dir, size_t size)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    const char *whole = !slash ? "." : n == 0 ? "/" : NULL;
    if (whole)
        return snprintf(dir, size, "%s", whole) < (int)size;
    if (n >= size)
        return false;
    memcpy(dir, path, n);
    dir[n] = '\0';
    return true;
}

bool lb_db_writable(const char *path, char *why, size_t size)
{
    char dir[PATH_MAX];
    if (!lb_db_dir(path, dir, sizeof dir))
        dir[0] = '\0'; /* (longer than PATH_MAX: access says so) */
    bool ok = access(dir[0] ? dir : path, W_OK | X_OK) == 0 &&
              (access(path, W_OK) == 0 || errno == ENOENT);
    if (!ok)
        snprintf(why, size, "%s", strerror(errno));
    return ok;
}
