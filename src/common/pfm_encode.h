/* The perf_event_attr that libpfm4 encodes for an event name, counting
 * user mode only (PFM_PLM3): the one encoding step of the sampler (which
 * opens the event) and of `lockblame events` (which tries each name).
 * Depends on libpfm4 only; both binaries link it. */
#ifndef LB_COMMON_PFM_ENCODE_H
#define LB_COMMON_PFM_ENCODE_H
#include <perfmon/pfmlib_perf_event.h> /* its struct perf_event_attr */

/* Fill *attr (zeroed first) for event `name`. pfm_initialize() must have
 * succeeded. Returns PFM_SUCCESS or libpfm4's error code. */
int lb_pfm_encode(const char *name, struct perf_event_attr *attr);
#endif
