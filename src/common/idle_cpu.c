/* See idle_cpu.h. */
#include "common/idle_cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool lb_cpu_times_parse(const char *line, lb_cpu_times_t *out)
{
    if (!line || strncmp(line, "cpu ", 4) != 0)
        return false;
    const char *p = line + 4;
    uint64_t field[10] = { 0 };
    int n = 0;
    while (n < 10) {
        while (*p == ' ')
            p++;
        if (*p < '0' || *p > '9')
            break;
        char *end;
        field[n++] = strtoull(p, &end, 10);
        p = end;
    }
    if (n < 4)
        return false;
    /* user nice system idle iowait irq softirq steal: guest and
     * guest_nice (fields 9 and 10) are already in user and nice */
    uint64_t total = 0;
    for (int i = 0; i < n && i < 8; i++)
        total += field[i];
    out->idle = field[3] + field[4];
    out->total = total;
    return true;
}

bool lb_cpu_times_read(lb_cpu_times_t *out)
{
    FILE *f = fopen("/proc/stat", "re");
    if (!f)
        return false;
    char line[256];
    bool ok = fgets(line, sizeof line, f) && lb_cpu_times_parse(line, out);
    fclose(f);
    return ok;
}

double lb_cpu_idle_between(const lb_cpu_times_t *before, const lb_cpu_times_t *after, long cpus)
{
    if (cpus < 1 || after->total <= before->total || after->idle < before->idle)
        return 0;
    uint64_t idle = after->idle - before->idle;
    uint64_t total = after->total - before->total;
    if (idle > total)
        return (double)cpus;
    return (double)idle / (double)total * (double)cpus;
}
