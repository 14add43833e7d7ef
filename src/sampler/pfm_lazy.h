/* Loading libpfm4 on demand (pfm_lazy.c). */
#ifndef LB_SAMPLER_PFM_LAZY_H
#define LB_SAMPLER_PFM_LAZY_H
#include <stdbool.h>

/* Load libpfm4 now if not yet; false with dlerror's text in why. */
bool lb_pfm_open(char *why, unsigned whylen);
#endif
