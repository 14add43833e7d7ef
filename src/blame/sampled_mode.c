/* The sampled-accounting modes and the hot-lock rate: see sampled_mode.h. */
#include "blame/sampled_mode.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sampler/sampler.h"
#include "util/env.h"
#include "util/log.h"

uint32_t lb_hot_shard_mask;

/* The CPUs this process may run on: its affinity mask, one system call,
 * where the online count is a file in /sys to open and read (a path walk
 * that costs a fresh exec'd process tens of microseconds), and no more
 * threads than these run at once; the online count if the mask is too
 * large for a cpu_set_t. */
static long usable_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        return CPU_COUNT(&set);
    return sysconf(_SC_NPROCESSORS_ONLN);
}

void lb_hot_shards_setup(void)
{
    long cpus = usable_cpus();
    uint32_t shards = 1;
    while (shards < LB_HOT_SHARDS && (long)shards * 2 * 2 <= cpus)
        shards *= 2;
    lb_hot_shard_mask = shards - 1;
}

lb_sampled_mode_t lb_sampled_mode_from_env(const char *var, bool needs_samples,
                                           const char *fallback)
{
    const char *want = lb_getenv(var);
    lb_sampled_mode_t mode = LB_SAMPLED_AUTO;
    if (want && *want) {
        if (strcmp(want, "exact") == 0)
            mode = LB_SAMPLED_EXACT;
        else if (strcmp(want, "sampled") == 0)
            mode = LB_SAMPLED_ALWAYS;
        else if (strcmp(want, "auto") != 0)
            lb_warn_setting(var, "bad %s '%s' (want exact, sampled or auto); using auto", var,
                            want);
    }
    if (needs_samples && mode != LB_SAMPLED_EXACT && lb_sampler_ns_per_sample() <= 0) {
        if (mode == LB_SAMPLED_ALWAYS)
            lb_warn_setting(var, "%s=sampled needs CPU sampling with a known period; %s", var,
                            fallback);
        mode = LB_SAMPLED_EXACT;
    }
    return mode;
}

bool lb_sampled_rate_is_hot(lb_object_stats_t *stats, uint64_t now)
{
    if (!stats)
        return false;
    if (stats->rate_window_waits++ == 0) {
        stats->rate_window_ns = now;
        return false;
    }
    if (stats->rate_window_waits < LB_SAMPLED_RATE_HOLDS)
        return false;
    uint64_t span = now - stats->rate_window_ns;
    stats->rate_window_waits = 0;
    return span * LB_SAMPLED_RATE <= (uint64_t)LB_SAMPLED_RATE_HOLDS * 1000000000u;
}
