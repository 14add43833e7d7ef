/* What a thread is waiting on, and how its last cond/sem wait ended, kept
 * so that the final write can (docs/DESIGN.md rules 4 and 6):
 *  - close a wait still open at exit: count its time in the waiters'
 *    measure as it already is in the accrual (conservation);
 *  - recognise structural waits: a thread parked on a condition variable
 *    or semaphore from its start (or last task) until shutdown, i.e. its
 *    last (or longest) wait either is still open at exit or was ended by
 *    the object's last signal/post with the thread ending soon after;
 *  - recognise idle helpers: a helper thread that waits, some of the
 *    time with a deadline, on one cond/sem of its own (its home), woken
 *    early by the other threads' signals.
 *
 * Invariants: a note is written only by its own thread, in the blame
 * verbs' slow paths (a wait that failed to acquire, a signal/post that
 * collected blame), never on a fast path. The final write reads it
 * without synchronisation: every field is a plain word, a torn read
 * between two fields of a thread that wakes during the write costs at
 * most that one wait's classification. Records of lb_mon and
 * lb_object_stats are never unmapped, so a stale pointer stays readable. */
#ifndef LB_WAIT_NOTE_H
#define LB_WAIT_NOTE_H
#include <stdint.h>

struct lb_mon;

/* A thread's completed waits on one cond/sem, in all. */
typedef struct lb_wait_home {
    uint32_t stats;     /* object record index, 0 none */
    uint32_t deadlines; /* the waits that had a deadline (timed waits) */
    uint64_t first_ns;  /* the first one's start */
    uint64_t last_ns;   /* the last one's end */
    uint64_t wait_ns;   /* their total time */
} lb_wait_home_t;

/* The most time between two waits of one run (below), or an eighth of
 * the earlier wait if that is more. */
#define LB_NOTE_RUN_GAP_NS 1000000u

/* Does a wait begun at start go on the run of the wait that ran from
 * prev_start to prev_end (and ran out of time), on the same object: begun
 * right after it? */
static inline int lb_note_run_goes_on(uint64_t prev_start, uint64_t prev_end, uint64_t start)
{
    uint64_t previous = prev_end - prev_start;
    uint64_t slack = previous / 8 > LB_NOTE_RUN_GAP_NS ? previous / 8 : LB_NOTE_RUN_GAP_NS;
    return prev_end && start >= prev_end && start - prev_end <= slack;
}

/* The thread's last cond/sem/futex wait that ran out of time, whose own
 * accrual was taken back (docs/DESIGN.md rule 3: blame.c's
 * expired_wait_unblamed, signal_waits.c, shared_objs.c's expired_takes),
 * kept so that the thread's next wait, if it goes on the run (on the same
 * object, right after, lb_note_run_goes_on) with no collect on the object
 * in between, puts the amount back: the signal that ends the run collects
 * all of it. Each path's part holds what it took back and the object's
 * state then (its generation: what any collect in between changes); the
 * next wait puts back a part whose generation is unchanged and "carries"
 * it, and if that wait runs out too, it takes back its own accrual and
 * the carried part (the generation still unchanged). Any other wait
 * clears it. */
typedef struct lb_expired_run {
    struct lb_mon *mon;        /* the object, NULL none */
    uint64_t start_ns, end_ns; /* the wait that ran out (0: one that did not) */
    uint32_t carried;          /* the wait open now (or last) on mon put the parts back */
    uint32_t shared_carried;   /* the same for the shared part */
    /* the meta path (blame.c): taken from V; generation: the record's last
     * collect, V at it, the sampled state and its open interval */
    double taken, v_acquire, base;
    uint64_t collect_ns, from;
    uint32_t sampled;
    uint32_t stats_index; /* the object's record (a recycled lb_mon is another object) */
    /* a hot object's shards (signal_waits.c): taken into T; generation:
     * the slot's mark and last signal */
    const void *hot;
    uint64_t hot_taken, hot_mark_ns, hot_signal_ns;
    uint32_t hot_marked;
    /* a process-shared object (shared_objs.c): taken from owed_ns into
     * expired_ns; generation: the tree's release count */
    const void *shared;
    double shared_taken;
    uint64_t shared_releases;
} lb_expired_run_t;

typedef struct lb_wait_note {
    /* the wait in progress (open_start_ns == 0: none) */
    struct lb_mon *open_mon;
    uint64_t open_start_ns; /* monotonic */
    uint32_t open_kind;     /* lb_obj_kind */
    uint32_t open_node;     /* the wait's context in the thread's CCT, 0 unknown */
    /* the last completed cond/sem wait */
    uint32_t last_stats; /* object record index, 0 if none */
    uint32_t last_kind;  /* lb_obj_kind */
    uint64_t last_start_ns, last_end_ns;
    /* the longest completed cond/sem wait: a thread parked from its start
     * until shutdown that, once woken, waits again on its way out (a
     * server's background threads' shutdown handshakes) has its parked
     * wait here, not as its last */
    uint32_t longest_stats, longest_kind;
    uint64_t longest_start_ns, longest_end_ns;
    /* where the run of waits on last_stats that the last one ends began:
     * waits on one object, each begun right after the previous one ran
     * out of time (a background thread's timed waits, until the shutdown
     * signal): parked all along. A wait a signal ended starts a new run:
     * xz's main thread, waiting for its workers' blocks with timed waits,
     * is taking part in the work, not parked */
    uint64_t run_start_ns;
    uint32_t last_timed_out; /* the last wait ran out of time */
    /* the cond/sem the thread has waited on longest in all (home[0]), and
     * the latest other one (home[1]), which takes the first place once it
     * has more: a helper thread's home object, and whether it waits there
     * with deadlines (an idle helper, docs/DESIGN.md rule 6) */
    lb_wait_home_t home[2];
    lb_expired_run_t expired; /* (above) */
} lb_wait_note_t;

/* The last signal/post that collected blame on an object: kept in its
 * lb_object_stats (under meta) and completed by the depositing thread. */
typedef struct lb_collect_note {
    uint64_t at_ns;  /* monotonic time of the collect, 0 none */
    double blame_ns; /* blame it collected */
    uint32_t thread; /* collecting thread id */
    uint32_t node;   /* its release context (0 until deposited) */
} lb_collect_note_t;
#endif
