/* The verbs that keep wait notes (wait_note.h); called by blame.c. */
#ifndef LB_WAIT_NOTE_OPS_H
#define LB_WAIT_NOTE_OPS_H
#include <stdbool.h>
#include <stdint.h>

#include "blame/object_stats.h"
#include "core/thread.h"
#include "blame/mon.h"

/* self starts waiting on mon (any kind), from its context node (an id
 * in self's CCT; 0 unknown). */
void lb_note_wait_begin(lb_thread_t *self, lb_mon_t *mon, lb_obj_kind kind, uint64_t start_ns,
                        uint32_t node);
/* Its wait ended (stats_index: the object's record, 0 if none;
 * timed_out: it ran out of time; had_deadline: a timed wait). Reads no
 * record: a record's line is written by the object's signallers. */
void lb_note_wait_end(lb_thread_t *self, lb_obj_kind kind, uint32_t stats_index, uint64_t start_ns,
                      uint64_t end_ns, bool timed_out, bool had_deadline);
/* A signal/post by self collected blame_ns at now; under mon->meta. */
void lb_note_collect(lb_thread_t *self, lb_object_stats_t *stats, uint64_t now, double blame_ns);
/* A wait that self made from the call at call_pc (its innermost program
 * frame) completed: count it at that site, where it happened (a
 * contended acquisition, or a completed cond/sem/barrier wait). */
void lb_note_lock_site(lb_thread_t *self, uintptr_t call_pc, lb_obj_kind kind);
/* That collect's blame went to node of self's CCT (stats may be NULL). */
void lb_note_deposit(lb_thread_t *self, lb_object_stats_t *stats, uint32_t node);
#endif
