/* libpfm4, opened only when an event name needs it (see util/lazy_lib.h;
 * util/lazy_deps.h for where the stubs sit): the generic events the
 * sampler picks by itself (cycles, task-clock, cpu-clock) are encoded
 * without it (sampler/backend_perf.c), so a default run never loads its
 * ~41,000 relocations. Hidden stubs with the names and prototypes of
 * perfmon/pfmlib.h, called by common/pfm_encode.c; lb_pfm_open is the
 * check before them. The CLI links this file too, for `lockblame events`
 * (report/cli/events.c, the listing's stubs below): loaded at its start,
 * libpfm4's relocations were 288 of the 464 page faults of every command,
 * `run` and `report` included. */
#include "util/lazy_deps.h"

#include <perfmon/pfmlib.h>

#include "util/lazy_lib.h"

static LB_LAZY_LIB(pfm_lib, "libpfm.so.4");

bool lb_pfm_open(char *why, unsigned whylen)
{
    return lb_lazy_lib_open(&pfm_lib, why, whylen);
}

LB_LAZY_FN(pfm_lib, pfm_err_t, pfm_initialize, (void), ())
LB_LAZY_FN(pfm_lib, const char *, pfm_strerror, (int code), (code))
LB_LAZY_FN(pfm_lib, pfm_err_t, pfm_get_os_event_encoding,
           (const char *str, int plm, pfm_os_t os, void *args), (str, plm, os, args))
LB_LAZY_FN(pfm_lib, pfm_err_t, pfm_get_pmu_info, (pfm_pmu_t pmu, pfm_pmu_info_t *info), (pmu, info))
LB_LAZY_FN(pfm_lib, int, pfm_get_event_next, (int idx), (idx))
LB_LAZY_FN(pfm_lib, pfm_err_t, pfm_get_event_info, (int idx, pfm_os_t os, pfm_event_info_t *info),
           (idx, os, info))
