#include "common/path_search.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

bool lb_path_search(const char *file, const char *default_path,
                    bool (*visit)(const char *candidate, void *arg), void *arg)
{
    if (!file || !*file)
        return false;
    if (strchr(file, '/'))
        return visit(file, arg);
    const char *path = getenv("PATH");
    if (!path)
        path = default_path;
    size_t flen = strlen(file);
    for (const char *dir = path;; dir++) {
        const char *end = strchr(dir, ':');
        size_t dlen = end ? (size_t)(end - dir) : strlen(dir);
        const char *prefix = dlen ? dir : ".";
        size_t plen = dlen ? dlen : 1;
        char candidate[PATH_MAX];
        if (plen + 1 + flen < sizeof candidate) {
            memcpy(candidate, prefix, plen);
            candidate[plen] = '/';
            memcpy(candidate + plen + 1, file, flen + 1);
            if (visit(candidate, arg))
                return true;
        }
        if (!end)
            return false;
        dir = end;
    }
}
