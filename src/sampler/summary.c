/* The sampler's run metadata as rows of the meta table (docs/SCHEMA.md):
 * the mechanism and why it was chosen, whether kernel time is sampled,
 * the effective rate, samples taken and dropped, and the unsampled CPU
 * time credited to start routines. Runs once, on the finishing thread,
 * after lb_sampler_quiesce. */
#include <stdio.h>

#include "sampler/sampler.h"

void lb_sampler_meta_each(void (*put)(void *ctx, const char *key, const char *value), void *ctx)
{
    lb_sampler_summary_t s;
    lb_sampler_summarize(&s);
    uint64_t all = s.samples + s.dropped;
    char v[64];
    put(ctx, "sampling_mechanism", s.mechanism);
    put(ctx, "sampling_choice", s.why ? s.why : "");
    put(ctx, "sampling_kernel", s.with_kernel ? "1" : "0");
    snprintf(v, sizeof v, "%.1f", s.rate_hz);
    put(ctx, "sampling_rate_hz", v);
    snprintf(v, sizeof v, "%llu", (unsigned long long)s.samples);
    put(ctx, "samples_taken", v);
    snprintf(v, sizeof v, "%llu", (unsigned long long)s.dropped);
    put(ctx, "samples_dropped", v);
    snprintf(v, sizeof v, "%.2f", all ? 100.0 * (double)s.dropped / (double)all : 0.0);
    put(ctx, "samples_dropped_pct", v);
    snprintf(v, sizeof v, "%.6f", s.unsampled_s);
    put(ctx, "unsampled_cpu_s", v);
    snprintf(v, sizeof v, "%u", s.unsampled_threads);
    put(ctx, "unsampled_threads", v);
    snprintf(v, sizeof v, "%.6f", s.unsampled_blocked_s);
    put(ctx, "unsampled_blocked_cpu_s", v);
    snprintf(v, sizeof v, "%u", s.unsampled_blocked_threads);
    put(ctx, "unsampled_blocked_threads", v);
    snprintf(v, sizeof v, "%u", s.timer_fallbacks);
    put(ctx, "sampling_timer_fallbacks", v);
}
