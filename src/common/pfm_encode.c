/* See pfm_encode.h. No state. */
#include "common/pfm_encode.h"

#include <perfmon/pfmlib.h>
#include <perfmon/pfmlib_perf_event.h>
#include <string.h>

int lb_pfm_encode(const char *name, struct perf_event_attr *attr)
{
    pfm_perf_encode_arg_t arg;
    memset(attr, 0, sizeof *attr);
    memset(&arg, 0, sizeof arg);
    arg.attr = attr;
    arg.size = sizeof arg;
    return pfm_get_os_event_encoding(name, PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
}
