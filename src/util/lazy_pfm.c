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
#include <stdio.h>

#include "util/lazy_lib.h"

static LB_LAZY_LIB(pfm_lib, "libpfm.so.4");

/* The functions the stubs forward to, one list for the stubs and for
 * lb_pfm_open's look-up of each: a stub whose function is missing
 * returns 0, which is PFM_SUCCESS (and pfm_get_event_next's 0 would never
 * end a listing). X(return type, name, parameters, arguments). */
#define PFM_FUNCTIONS(X)                                                                         \
    X(pfm_err_t, pfm_initialize, (void), ())                                                     \
    X(const char *, pfm_strerror, (int code), (code))                                            \
    X(pfm_err_t, pfm_get_os_event_encoding, (const char *str, int plm, pfm_os_t os, void *args), \
      (str, plm, os, args))                                                                      \
    X(pfm_err_t, pfm_get_pmu_info, (pfm_pmu_t pmu, pfm_pmu_info_t * info), (pmu, info))          \
    X(int, pfm_get_event_next, (int idx), (idx))                                                 \
    X(pfm_err_t, pfm_get_event_info, (int idx, pfm_os_t os, pfm_event_info_t *info),             \
      (idx, os, info))

#define PFM_NAME(ret, name, params, args) #name,
static const char *const pfm_functions[] = { PFM_FUNCTIONS(PFM_NAME) };

bool lb_pfm_open(char *why, unsigned whylen)
{
    if (!lb_lazy_lib_open(&pfm_lib, why, whylen))
        return false;
    for (size_t i = 0; i < sizeof pfm_functions / sizeof *pfm_functions; i++)
        if (!lb_lazy_sym(&pfm_lib, pfm_functions[i])) {
            snprintf(why, whylen, "%s has no %s", pfm_lib.soname, pfm_functions[i]);
            return false;
        }
    return true;
}

#define PFM_STUB(ret, name, params, args) LB_LAZY_FN(pfm_lib, ret, name, params, args)
PFM_FUNCTIONS(PFM_STUB)
