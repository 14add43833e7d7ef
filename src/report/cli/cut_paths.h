/*
 * cut_paths.h - call paths the sampler could not finish: walks that
 * stopped at code without unwind information, whose outermost frame is
 * an "[unknown: no unwind info in MODULE]" marker (common/marker_frames.h).
 * The table header says how much of the work and the blame they carry,
 * as their callers are not known.
 */
#ifndef LB_CLI_CUT_PATHS_H
#define LB_CLI_CUT_PATHS_H
#include <stdio.h>

#include "report/cli/profile.h"

/* The header's "cut paths:" line, printed only where some path was cut. */
void lb_print_cut_paths(const struct lb_profile *p, FILE *out);
#endif
