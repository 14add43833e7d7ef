#include "common/duration.h"

#include <stdlib.h>
#include <string.h>

bool lb_parse_duration(const char *s, uint64_t *ns)
{
    static const struct {
        const char *unit;
        double ns;
    } units[] = { { "ms", 1e6 }, { "s", 1e9 }, { "m", 60e9 }, { "h", 3600e9 }, { "", 1e9 } };
    if (!s || !*s)
        return false;
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || !(v >= 0) || v > 1e6)
        return false;
    for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
        if (strcmp(end, units[i].unit) == 0) {
            *ns = (uint64_t)(v * units[i].ns);
            return true;
        }
    }
    return false;
}
