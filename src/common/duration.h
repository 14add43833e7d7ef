/* Durations as users write them for LOCKBLAME_INTERVAL and
 * `lockblame run --interval`: a number with a unit (ms, s, m, h; seconds
 * when none), e.g. "10s", "500ms", "1.5m", "0". Shared by the library
 * and the CLI, so that both accept the same words. Depends on nothing. */
#ifndef LB_COMMON_DURATION_H
#define LB_COMMON_DURATION_H
#include <stdbool.h>
#include <stdint.h>

/* The duration in s, in nanoseconds; false when s is not one. */
bool lb_parse_duration(const char *s, uint64_t *ns);
#endif
