#include "common/switches.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    const char *wants; /* what the line says the values mean */
} switches[] = {
    { "LOCKBLAME_QUIET", "0 (a summary from every process) or 1 (one for the tree)" },
    { "LOCKBLAME_SPOOL",
      "1 (a small profile waits for the next commit) or 0 (each process adds its own)" },
    { "LOCKBLAME_SHARE_RULES",
      "1 (fork children share the unwind rules they compute) or 0 (each computes its own)" },
    { "LOCKBLAME_CACHE",
      "1 (the CLI keeps big modules' symbol indexes in the user's cache) or 0 (it neither reads"
      " nor writes them)" },
};

bool lb_switch_off(const char *value)
{
    return value && strcmp(value, "0") == 0;
}

void lb_switches_check(const char *(*get)(const char *name), void (*say)(const char *line))
{
    for (size_t i = 0; i < sizeof switches / sizeof switches[0]; i++) {
        const char *v = get(switches[i].name);
        if (!v || !*v || strcmp(v, "0") == 0 || strcmp(v, "1") == 0)
            continue;
        char line[512];
        snprintf(line, sizeof line, "%s wants %s, not '%.*s'; using 1", switches[i].name,
                 switches[i].wants, 64, v);
        say(line);
    }
}
