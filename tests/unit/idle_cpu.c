/* Unit tests for src/common/idle_cpu.h: /proc/stat's CPU lines parsed,
 * the idle CPUs between two looks at the same CPUs, as `lockblame run`'s
 * merger reads them to add pending profiles while CPU goes unused, and
 * the reads themselves (the allowed CPUs only). */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/idle_cpu.h"

static void test_parse(void)
{
    lb_cpu_times_t t = { 0 };
    int cpu = 7;
    /* user nice system idle iowait irq softirq steal guest guest_nice */
    ASSERT_TRUE(lb_cpu_times_parse("cpu  100 2 30 400 5 6 7 8 50 1\n", &cpu, &t));
    ASSERT_EQ(cpu, -1);       /* the sum's line */
    ASSERT_UEQ(t.idle, 405);  /* idle + iowait */
    ASSERT_UEQ(t.total, 558); /* the first eight: guest time is in user's */
    ASSERT_EQ(t.cpus, 1);
    ASSERT_TRUE(lb_cpu_times_parse("cpu13 1 2 3 4\n", &cpu, &t)); /* an old kernel's four fields */
    ASSERT_EQ(cpu, 13);
    ASSERT_UEQ(t.idle, 4);
    ASSERT_UEQ(t.total, 10);
    ASSERT_FALSE(lb_cpu_times_parse("cpu  1 2 3\n", &cpu, &t));
    ASSERT_FALSE(lb_cpu_times_parse("cpux 1 2 3 4\n", &cpu, &t));
    ASSERT_FALSE(lb_cpu_times_parse("intr 1 2 3 4\n", &cpu, &t));
    ASSERT_FALSE(lb_cpu_times_parse(NULL, &cpu, &t));
}

static void test_idle_between(void)
{
    lb_cpu_times_t a = { .idle = 1000, .total = 5000, .cpus = 2 };
    lb_cpu_times_t b = { .idle = 1100, .total = 5200, .cpus = 2 }; /* half the time idle */
    ASSERT_TRUE(lb_cpu_idle_between(&a, &b) == 1.0);               /* one CPU of two */
    lb_cpu_times_t wide_a = a, wide_b = b;
    wide_a.cpus = wide_b.cpus = 16;
    ASSERT_TRUE(lb_cpu_idle_between(&wide_a, &wide_b) == 8.0);
    lb_cpu_times_t busy = { .idle = 1000, .total = 5200, .cpus = 2 };
    ASSERT_TRUE(lb_cpu_idle_between(&a, &busy) == 0.0);
    ASSERT_TRUE(lb_cpu_idle_between(&a, &a) == 0.0);      /* no time passed */
    ASSERT_TRUE(lb_cpu_idle_between(&b, &a) == 0.0);      /* counters back */
    ASSERT_TRUE(lb_cpu_idle_between(&a, &wide_b) == 0.0); /* other CPUs */
}

static void test_read(void)
{
    cpu_set_t all, one, none;
    ASSERT_EQ(sched_getaffinity(0, sizeof all, &all), 0);
    lb_cpu_times_t t = { 0 };
    ASSERT_TRUE(lb_cpu_times_read(&all, &t));              /* Linux: /proc/stat is there */
    ASSERT_TRUE(t.cpus >= 1 && t.cpus <= CPU_COUNT(&all)); /* (a container may list fewer) */
    ASSERT_TRUE(t.total > 0 && t.idle <= t.total);
    int first = 0;
    while (!CPU_ISSET(first, &all))
        first++;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    lb_cpu_times_t t1 = { 0 };
    /* (where /proc/stat numbers the CPUs as the mask does: a container's
     * may renumber them) */
    if (t.cpus == CPU_COUNT(&all)) {
        ASSERT_TRUE(lb_cpu_times_read(&one, &t1));
        ASSERT_EQ(t1.cpus, 1);
        if (t.cpus > 1)
            ASSERT_TRUE(t1.total < t.total); /* one CPU's time, not the others' with it */
    }
    CPU_ZERO(&none);
    ASSERT_FALSE(lb_cpu_times_read(&none, &t1));
    (void)lb_cpu_quota_limited(); /* reads, whatever this machine's cgroups say */
}

static char root[64];

static void put(const char *rel, const char *text)
{
    char path[256], cmd[320];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
    ASSERT_EQ(system(cmd), 0);
    FILE *f = fopen(path, "w");
    ASSERT_TRUE(f != NULL);
    fputs(text, f);
    fclose(f);
}

static bool limited(const char *cgroup_line)
{
    put("proc_cgroup", cgroup_line);
    char file[128];
    snprintf(file, sizeof file, "%s/proc_cgroup", root);
    return lb_cpu_quota_limited_in(file, root);
}

/* A quota on the process's cgroup or an ancestor, v2 and v1, in a tree
 * laid out as /sys/fs/cgroup is. */
static void test_quota(void)
{
    snprintf(root, sizeof root, "/tmp/lb_idle_cpu.%d", (int)getpid());
    put("cpu.max", "max 100000\n"); /* the v2 root's (none in reality) */
    put("a/cpu.max", "max 100000\n");
    put("a/b/cpu.max", "max 100000\n");
    ASSERT_FALSE(limited("0::/a/b\n"));
    put("a/cpu.max", "200000 100000\n"); /* an ancestor's: two CPUs */
    ASSERT_TRUE(limited("0::/a/b\n"));
    ASSERT_FALSE(limited("0::/c\n")); /* no such cgroup: no files */
    put("cpu,cpuacct/x/cpu.cfs_quota_us", "-1\n");
    ASSERT_FALSE(limited("5:cpu,cpuacct:/x\n3:memory:/x\n"));
    put("cpu,cpuacct/x/cpu.cfs_quota_us", "50000\n");
    ASSERT_TRUE(limited("5:cpu,cpuacct:/x\n3:memory:/x\n"));
    ASSERT_FALSE(limited("4:cpuset:/x\n")); /* a cpuset narrows the affinity mask instead */
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    ASSERT_EQ(system(cmd), 0);
}

CHECK_MAIN(test_parse, test_idle_between, test_read, test_quota)
