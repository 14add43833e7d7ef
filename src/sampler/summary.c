/* The sampler's run metadata as rows of the meta table (docs/SCHEMA.md):
 * the mechanism and why it was chosen, whether kernel time is sampled,
 * the effective rate, samples taken and dropped, and the unsampled CPU
 * time credited to start routines. Runs once, on the finishing thread,
 * after lb_sampler_quiesce. */
#include <stdio.h>
#include <string.h>

#include "sampler/sampler.h"

/* Copies s into out as the body of an SQL string literal (' doubled). */
static void lb_sql_quote(const char *s, char *out, size_t len)
{
    size_t j = 0;
    for (; *s && j + 2 < len; s++) {
        if (*s == '\'')
            out[j++] = '\'';
        out[j++] = *s;
    }
    out[j] = '\0';
}

int lb_sampler_meta_rows(char *buf, size_t len)
{
    lb_sampler_summary_t s;
    lb_sampler_summarize(&s);
    char why[2 * 192 + 1];
    lb_sql_quote(s.why ? s.why : "", why, sizeof why);
    uint64_t all = s.samples + s.dropped;
    return snprintf(buf, len,
                    ",('sampling_mechanism','%s'),('sampling_choice','%s'),"
                    "('sampling_kernel','%d'),('sampling_rate_hz','%.1f'),"
                    "('samples_taken','%llu'),('samples_dropped','%llu'),"
                    "('samples_dropped_pct','%.2f'),('unsampled_cpu_s','%.6f'),"
                    "('unsampled_threads','%u'),('unsampled_blocked_cpu_s','%.6f'),"
                    "('unsampled_blocked_threads','%u'),('sampling_timer_fallbacks','%u')",
                    s.mechanism, why, s.with_kernel ? 1 : 0, s.rate_hz,
                    (unsigned long long)s.samples, (unsigned long long)s.dropped,
                    all ? 100.0 * (double)s.dropped / (double)all : 0.0, s.unsampled_s,
                    s.unsampled_threads, s.unsampled_blocked_s, s.unsampled_blocked_threads,
                    s.timer_fallbacks);
}
