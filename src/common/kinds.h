/* The kinds of synchronization object, shared by the library (which
 * records them) and the CLI (which reads them back from the database).
 * The names are the strings stored in the database: renaming one is a
 * schema change (see common/schema.h). Depends on nothing. */
#ifndef LB_COMMON_KINDS_H
#define LB_COMMON_KINDS_H
#include <stdbool.h>

/* The order is the metric table's: idle_mutex_s .. idle_join_s follow it,
 * idle_futex_s (a later kind) is the table's last column; a new kind goes
 * after the last one. */
typedef enum lb_obj_kind {
    LB_OBJ_MUTEX,
    LB_OBJ_SPIN,
    LB_OBJ_RWLOCK,
    LB_OBJ_COND,
    LB_OBJ_BARRIER,
    LB_OBJ_SEM,
    LB_OBJ_JOIN,
    LB_OBJ_FUTEX, /* a futex word waited on and woken through syscall(SYS_futex) */
    LB_OBJ_KINDS
} lb_obj_kind;

/* Conds, semaphores and futex words: the kinds whose waits end by a
 * signal, post or wake, which the idleness accrued since the previous one
 * is blamed on (docs/DESIGN.md rule 3), rather than by a release. */
static inline bool lb_obj_kind_is_signalled(unsigned kind)
{
    return kind == LB_OBJ_COND || kind == LB_OBJ_SEM || kind == LB_OBJ_FUTEX;
}

/* "mutex", "spin", ... indexed by lb_obj_kind. */
extern const char *const lb_obj_kind_names[LB_OBJ_KINDS];

/* The name of kind, or "unknown" for a value outside the enum (never
 * NULL, so callers can print it directly). */
const char *lb_obj_kind_name(lb_obj_kind kind);
/* The kind named s; -1 if s is NULL or names no kind. */
int lb_obj_kind_parse(const char *s);
#endif
