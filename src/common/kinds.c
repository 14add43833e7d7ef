/* Names of the sync-object kinds, as stored in the database and shown by the
 * CLI. Pure data; no state. */
#include "common/kinds.h"

#include <string.h>

const char *const lb_obj_kind_names[LB_OBJ_KINDS] = {
    [LB_OBJ_MUTEX] = "mutex", [LB_OBJ_SPIN] = "spin",       [LB_OBJ_RWLOCK] = "rwlock",
    [LB_OBJ_COND] = "cond",   [LB_OBJ_BARRIER] = "barrier", [LB_OBJ_SEM] = "sem",
    [LB_OBJ_JOIN] = "join",   [LB_OBJ_FUTEX] = "futex",
};

const char *lb_obj_kind_name(lb_obj_kind kind)
{
    if ((unsigned)kind >= LB_OBJ_KINDS)
        return "unknown";
    return lb_obj_kind_names[kind];
}

int lb_obj_kind_parse(const char *s)
{
    for (int k = 0; s && k < LB_OBJ_KINDS; k++) {
        if (strcmp(s, lb_obj_kind_names[k]) == 0)
            return k;
    }
    return -1;
}
