/* The metric vector kept per calling-context node and thread.
 * Units: samples for CPU metrics (converted to seconds at write time with
 * the run's ns_per_sample), nanoseconds for wait and idleness. */
#ifndef LB_METRICS_H
#define LB_METRICS_H
#include <stdint.h>

#include "common/kinds.h"

typedef struct lb_metrics {
    uint64_t work_samples;     /* CPU samples while not waiting, not in sync code */
    uint64_t overhead_samples; /* CPU samples in sync code (ours or libc's) or while spinning */
    uint64_t wait_ns;          /* victim view: time spent waiting in this context */
    double idle_ns
        [LB_OBJ_KINDS]; /* blame received here, by object kind (fractional for shared holds) */
    double undirected_samples; /* thesis ch. 5: sum over work samples of I/W (waiting/working) */
    uint32_t blamed_count;     /* releases/signals here that carried blame */
    uint32_t unused;
} lb_metrics_t;
#endif
