/* The sampler's run metadata as rows of the meta table (docs/SCHEMA.md):
 * the mechanism and why it was chosen, whether kernel time is sampled,
 * the effective rate, samples taken and dropped, and the unsampled CPU
 * time credited to start routines. Runs once, on the finishing thread,
 * after lb_sampler_quiesce. */
#include <stdio.h>

#include "sampler/sampler.h"
#include "util/decimal.h"

/* A meta row's number, formatted without stdio (util/decimal.h): the
 * exit write of a fork child calls this, and the values are what
 * "%llu" and "%.*f" write. */
static void put_number(void (*put)(void *, const char *, const char *), void *ctx, const char *key,
                       uint64_t value)
{
    char v[LB_DECIMAL_U64_MAX + 1];
    lb_decimal_u64_str(v, sizeof v, value);
    put(ctx, key, v);
}

static void put_fixed(void (*put)(void *, const char *, const char *), void *ctx, const char *key,
                      double value, unsigned places)
{
    char v[64];
    if (!lb_decimal_fixed(v, sizeof v, value, places))
        snprintf(v, sizeof v, "%.*f", (int)places, value);
    put(ctx, key, v);
}

void lb_sampler_meta_each(void (*put)(void *ctx, const char *key, const char *value), void *ctx)
{
    lb_sampler_summary_t s;
    lb_sampler_summarize(&s);
    uint64_t all = s.samples + s.dropped;
    put(ctx, "sampling_mechanism", s.mechanism);
    put(ctx, "sampling_choice", s.why ? s.why : "");
    put(ctx, "sampling_kernel", s.with_kernel ? "1" : "0");
    put_fixed(put, ctx, "sampling_rate_hz", s.rate_hz, 1);
    put_number(put, ctx, "samples_taken", s.samples);
    put_number(put, ctx, "samples_dropped", s.dropped);
    put_fixed(put, ctx, "samples_dropped_pct", all ? 100.0 * (double)s.dropped / (double)all : 0.0,
              2);
    put_fixed(put, ctx, "unsampled_cpu_s", s.unsampled_s, 6);
    put_number(put, ctx, "unsampled_threads", s.unsampled_threads);
    put_fixed(put, ctx, "unsampled_blocked_cpu_s", s.unsampled_blocked_s, 6);
    put_number(put, ctx, "unsampled_blocked_threads", s.unsampled_blocked_threads);
    put_number(put, ctx, "sampling_timer_fallbacks", s.timer_fallbacks);
}
