/* Waits still open at exit, and structural waits (docs/DESIGN.md rules 4, 6),
 * at the final write. See blame/wait_note.h for what each thread notes. */
#ifndef LB_STRUCTURAL_WRITE_H
#define LB_STRUCTURAL_WRITE_H
#include <stdint.h>

/* Close every wait still in progress at now (the moment the profile is
 * taken) where its thread's time in the profile ends (lb_tables_span: a
 * live thread's where sampling stopped, before the write): its time goes
 * into the object's waiters' measure (wait_s) and
 * into the waiter's CCT node where it waits (the root if unknown); the
 * object's accrual, settled at now, runs to now (later by the time from
 * quiesce to the write's start).
 * Call before the CCTs are merged. Returns how many it closed. */
uint32_t lb_close_open_waits(uint64_t now);

/* A thread's local CCT node -> global node id (0 unknown). */
typedef uint32_t (*lb_node_map_fn)(void *ctx, uint32_t thread, uint32_t local);

/* Insert the structural_wait rows (docs/SCHEMA.md): threads parked on a
 * cond/sem until shutdown. A wait still open at now is one (open = 1,
 * ending where its thread's time ends, as lb_close_open_waits closed it;
 * its time is unattributed, blame_s 0); a thread's last cond/sem wait, and
 * its longest one, is one when the object's last signal/post ended it and
 * the thread then ended within a quarter of the time it had been parked. The blame that signal
 * collected is shared by the parked waits it ended, up to their total
 * time: that much of its site's idleness is structural. An idle helper
 * (docs/DESIGN.md rule 6) has one row per object_blame row of its home object
 * (those rows logged before), its share of that context's blame; the
 * parked waits that home object's signals ended have none. The rows go to
 * w's log (writer_int.h). */
struct writer;
void lb_write_structural(struct writer *w, uint64_t now, lb_node_map_fn map, void *ctx);
#endif
