/* See idle_cpu.h. */
#include "common/idle_cpu.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool lb_cpu_times_parse(const char *line, int *cpu, lb_cpu_times_t *out)
{
    if (!line || strncmp(line, "cpu", 3) != 0)
        return false;
    const char *p = line + 3;
    *cpu = -1;
    if (*p >= '0' && *p <= '9') {
        char *end;
        long n = strtol(p, &end, 10);
        if (n > INT_MAX)
            return false;
        *cpu = (int)n;
        p = end;
    }
    if (*p != ' ')
        return false;
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
    out->cpus = 1;
    return true;
}

bool lb_cpu_times_read(const cpu_set_t *allowed, lb_cpu_times_t *out)
{
    FILE *f = fopen("/proc/stat", "re");
    if (!f)
        return false;
    *out = (lb_cpu_times_t){ 0 };
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "cpu", 3) != 0)
            break; /* the per-CPU lines come first, together */
        int cpu;
        lb_cpu_times_t one;
        if (lb_cpu_times_parse(line, &cpu, &one) && cpu >= 0 && cpu < CPU_SETSIZE &&
            CPU_ISSET(cpu, allowed)) {
            out->idle += one.idle;
            out->total += one.total;
            out->cpus++;
        }
    }
    fclose(f);
    return out->cpus > 0;
}

double lb_cpu_idle_between(const lb_cpu_times_t *before, const lb_cpu_times_t *after)
{
    if (before->cpus != after->cpus || after->cpus < 1 || after->total <= before->total ||
        after->idle < before->idle)
        return 0;
    uint64_t idle = after->idle - before->idle;
    uint64_t total = after->total - before->total;
    if (idle > total)
        return (double)after->cpus;
    return (double)idle / (double)total * (double)after->cpus;
}

/* Whether the first word of the file at path limits CPU time: v2's
 * cpu.max ("max PERIOD" when not), v1's cfs_quota_us ("-1" when not). */
static bool quota_file_limits(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    char word[32] = "";
    bool limits =
        fscanf(f, "%31s", word) == 1 && strcmp(word, "max") != 0 && strcmp(word, "-1") != 0;
    fclose(f);
    return limits;
}

/* Whether dir/<cgroup path>/file, or the same file of an ancestor of that
 * cgroup, limits CPU time. */
static bool quota_on_path(const char *dir, char *cgroup, const char *file)
{
    for (;;) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s%s/%s", dir, cgroup, file) < (int)sizeof path &&
            quota_file_limits(path))
            return true;
        char *slash = strrchr(cgroup, '/');
        if (!slash)
            return false;
        *slash = '\0'; /* its parent; "" is the root */
    }
}

bool lb_cpu_quota_limited(void)
{
    return lb_cpu_quota_limited_in("/proc/self/cgroup", "/sys/fs/cgroup");
}

bool lb_cpu_quota_limited_in(const char *cgroup_file, const char *root)
{
    FILE *f = fopen(cgroup_file, "re");
    if (!f)
        return false;
    char line[PATH_MAX + 64];
    bool limited = false;
    while (!limited && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        /* "ID:CONTROLLERS:PATH": v2's "0::PATH", v1's "N:cpu,cpuacct:PATH" */
        char *controllers = strchr(line, ':'),
             *path = controllers ? strchr(controllers + 1, ':') : NULL;
        if (!path)
            continue;
        *path++ = '\0';
        controllers++;
        if (*controllers == '\0')
            limited = quota_on_path(root, path, "cpu.max");
        else if (strstr(controllers, "cpu") && !strstr(controllers, "cpuset")) {
            char dir[PATH_MAX];
            if (snprintf(dir, sizeof dir, "%s/%s", root, controllers) < (int)sizeof dir)
                limited = quota_on_path(dir, path, "cpu.cfs_quota_us");
        }
    }
    fclose(f);
    return limited;
}
