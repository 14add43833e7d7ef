/* The last component of a path: what follows its last '/', or the whole
 * path without one; NULL stays NULL. Header-only; depends on nothing. */
#ifndef LB_COMMON_PATH_BASE_H
#define LB_COMMON_PATH_BASE_H
#include <string.h>

static inline const char *lb_path_base(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    return slash ? slash + 1 : path;
}
#endif
