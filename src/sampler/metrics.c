/* Names of the sync-object kinds, as stored in the database and shown by the
 * CLI. Pure data; no state. */
#include "sampler/metrics.h"

static const char *const lb_obj_kind_names[LB_OBJ_KINDS] = {
    [LB_OBJ_MUTEX] = "mutex",
    [LB_OBJ_SPIN] = "spin",
    [LB_OBJ_RWLOCK] = "rwlock",
    [LB_OBJ_COND] = "cond",
    [LB_OBJ_BARRIER] = "barrier",
    [LB_OBJ_SEM] = "sem",
    [LB_OBJ_JOIN] = "join",
};

/* Returns the name of kind, or "unknown" for a value outside the enum
 * (never NULL, so callers can print it directly). */
const char *lb_obj_kind_name(lb_obj_kind kind)
{
    if ((unsigned)kind >= LB_OBJ_KINDS)
        return "unknown";
    return lb_obj_kind_names[kind];
}
