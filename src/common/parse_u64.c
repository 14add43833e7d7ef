/* See parse_u64.h. */
#include "common/parse_u64.h"

#include <errno.h>
#include <stdlib.h>

bool lb_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return false;
    int saved_errno = errno;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    bool ok = !errno && !*end && v >= lo && v <= hi;
    errno = saved_errno;
    if (ok)
        *out = v;
    return ok;
}
