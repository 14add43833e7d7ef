/* lb_thread: everything lockblame keeps per application thread.
 *
 * Layering: core owns the record, its identity and the registry; each
 * upper layer owns its per-thread part (sampler state and CCT, blame
 * tables) behind a pointer declared here only as an incomplete struct.
 * A layer allocates and fills its part in its thread hooks
 * (core/hooks.h), before the record is published, so every part
 * pointer of a published record is valid (cct may be NULL: no memory).
 *
 * Invariants:
 *  - A record is created by its own thread (trampoline or lazily) and is
 *    written only by that thread, except `exited`, `cpu_ns`, `end_ns` and
 *    `run_delay_ns`, set by the thread itself at exit (a foreign record's
 *    at each of its samples, and `exited` by quiesce once its thread is
 *    gone: sampler/foreign.h), and the final
 *    write, which reads all records after lb_sampler_quiesce().
 *  - Records come from the arena and are never freed; they are linked into
 *    a push-only registry list (lock-free CAS push), so the writer can walk
 *    all threads, live and exited. When a thread exits, its big per-thread
 *    tables (sites, CCT chunks) are compacted into right-sized arena
 *    memory and unmapped, unless the final write has begun (see
 *    lb_thread_freeze), so 100K short-lived threads cost ~1 KB each.
 *  - `busy` > 0 means lockblame code is running on this thread: wrappers
 *    called from there (sqlite locking, libdw) go straight to the real
 *    functions, and the sampling handler drops its sample. `deferred`
 *    shares its word (`gate`), so that the mutex unlock's fast path tests
 *    both at once: with either set, it takes its out-of-line path.
 *  - The fields the lock fast paths read (busy, tid, sites, spin_held
 *    and its word, the last release site) share the record's first cache
 *    line.
 *  - A foreign record (sampler/foreign.h) belongs to a thread started by a
 *    raw clone(CLONE_THREAD) without a thread pointer of its own: it
 *    shares its creator's thread-local storage, lb_self included, so
 *    lb_self on that thread is the creator's record. Its own record is
 *    never lb_self; the paths that may act for it (the sampling handler,
 *    the lock wrappers' out-of-line paths) find it through
 *    lb_thread_here. Its `tid` is the creator's, the owner word glibc
 *    (and the inline fast paths) store for both of them; `os_tid` is its
 *    own kernel thread id, its identity in the thread table, the target
 *    of its sampling timer. The inline fast paths still count on lb_self
 *    (the creator's record): those counts are only counts. */
#ifndef LB_CORE_THREAD_H
#define LB_CORE_THREAD_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/kinds.h"
#include "util/common.h"

/* Per-layer parts, complete only in their own layer's headers. */
struct lb_site_table;         /* blame/sites.h */
struct lb_site;               /* blame/sites.h */
struct lb_rw_holds;           /* blame/rw_holds.h */
struct lb_object_blame_table; /* blame/object_blame.h */
struct lb_sampler_thread;     /* sampler/sampler.h */
struct lb_cct;                /* sampler/cct.h */
struct lb_wait_note;          /* blame/wait_note.h */
struct lb_wait_deferred;      /* blame/wait_deferred.h */
struct lb_mon;                /* blame/mon.h */
struct lb_acq_counts;         /* locks/acq_counts.h */
struct lb_acq_count;          /* locks/acq_counts.h */
struct lb_omp_share;          /* sampler/omp_share.h */

/* What bounds the CPU time a sample of the thread may owe to a hot
 * mutex's hold (blame/holder_window.h). waited_ns and in_wait are
 * written by the thread itself, the rest by its own signal handler. */
typedef struct lb_holder_window {
    uint64_t waited_ns;      /* its sampled mutex waits' time in all */
    uint64_t cpu_ns;         /* the CPU its samples stood for since its last sample */
    uint64_t from_ns;        /* outside a sampled mutex wait, that sample's time (0: none), */
    uint64_t waited_at_from; /* and waited_ns then */
    uint32_t in_wait;        /* 1 while in a sampled mutex wait */
} lb_holder_window_t;

typedef struct lb_thread {
    /* hot: read by every wrapped call */
    union {
        struct {
            uint16_t busy;     /* re-entry guard, see above */
            uint16_t deferred; /* blame/wait_deferred.h: a wait's end awaits a release */
        };
        uint32_t gate; /* either: the mutex unlock fast path's one test */
    };
    pid_t tid;                      /* gettid(); the NORMAL-mutex fast path stores it as owner */
    struct lb_site_table *sites;    /* exact per-call-site counts (mmap'd; NULL once exited) */
    const volatile void *spin_held; /* locks/spin_ops.h: the spin lock this thread acquired last
                                     while monitored, also once released; NULL: none */
    struct lb_mon *spin_held_mon;   /* spin_held's lb_mon when it was acquired */
    uint32_t waiting;               /* lb_obj_kind + 1 while blocked in a wrapped wait, else 0 */
    int32_t spin_held_word;         /* spin_held's monitored word, held bit clear */
    uint32_t signal_countdown;      /* blame/signal_sampled.h: signals on sampled conds and */
    uint32_t signal_rng;            /* semaphores until this thread measures one; its PRNG */
    uintptr_t last_site_key;        /* blame/sites.h: the key of the release site this thread */
    struct lb_site *last_site;      /* counted last, and its slot (a loop's unlock hits it) */
    struct lb_acq_count *acq_count_last; /* locks/acq_counts.h: the slot of the object
                                          * counted last (always one of acq_counts') */
    /* per-layer parts (see above) */
    struct lb_rw_holds *rw_holds;                   /* blame: rwlocks held, with V at acquire */
    struct lb_object_blame_table *object_blame;     /* blame: per (object, release node) */
    struct lb_sampler_thread *sampler;              /* sampler: timer/perf state, counts */
    struct lb_cct *cct;                             /* sampler: calling-context tree, or NULL */
    uint64_t unrecorded_acquisitions[LB_OBJ_KINDS]; /* not in an object record (object_stats.h) */
    struct lb_wait_note *wait_note;                 /* blame: open wait, last cond/sem wait */
    struct lb_wait_deferred *wait_deferred;         /* blame: a hot cond wait's deferred end */
    struct lb_acq_counts *acq_counts;               /* locks: hot spin locks' and semaphores'
                                                     * acquisitions */
    struct lb_mon *spin_sampled;      /* blame/spin_sampled.h: the spin lock this thread
                                   * spins on while its samples measure the wait */
    uint64_t spin_sampled_waits;      /* blame/spin_sampled.h: its sampled spin waits not yet
                                   * in their record (record index << 32 | count) */
    uint64_t signal_drawn_ns;         /* blame/signal_sampled.h: when the countdown was drawn, */
    uint32_t signal_drawn;            /* its length, */
    uint16_t signal_every_log2;       /* and log2 of its mean N (0: none drawn yet) */
    uint16_t gap_skip_log2;           /* blame/signal_sampled.h: log2 of the signals with
                                       * waiters that may skip the gap look in a row */
    uint64_t signal_gap_from;         /* blame/signal_sampled.h: the signal about to be measured
                                   * ends a gap that began then (0: none) */
    const void *gap_slot;             /* blame/signal_sampled.h: the slot whose time this */
    uint32_t gap_skips;               /* thread stored last, and its signals there since */
    uint32_t gap_eligible;            /* its signals with waiters since the countdown's draw */
    struct lb_omp_share *omp_share;   /* sampler/omp_share.h: the OpenMP share this thread runs
                                       * now, which its work samples go to; NULL: none */
    uintptr_t last_signal_key;        /* blame/sites.h: as last_site_key, for signals and posts */
    struct lb_site *last_signal_site; /* (locks/cond_ops.h). Here, not above: 16 more bytes
                                       * among the hot fields cost the one-worker task
                                       * queue 4-9% on 2 vCPUs */
    struct lb_mon *expired_mon;       /* blame/wait_note.h: the object of the thread's last wait,
                                 * which ran out of time; a signal or post of the thread's own
                                 * on it clears it (locks/cond_ops.h) */
    struct lb_mon *signal_memo_mon;   /* locks/cond_ops.h: the sampled object with a slot this */
    uint32_t signal_memo_state;       /* thread signalled last, and its signal_sampled then (which
                                     * names the slot); NULL mon: none */
    lb_holder_window_t holder_window; /* blame/holder_window.h */
    /* identity, cold */
    uint32_t id;               /* 0 = main thread, then creation order */
    uintptr_t handle;          /* pthread_self() */
    uintptr_t start_routine;   /* pthread_create's start routine, 0 for main */
    uint32_t creator_id;       /* thread that called pthread_create */
    uint32_t creator_node;     /* node of that call in the creator's CCT */
    uint64_t start_ns, end_ns; /* monotonic */
    uint64_t cpu_ns;           /* thread CPU time at exit (or at the write), less cpu_base_ns */
    uint64_t cpu_base_ns;      /* the thread's CPU clock when this image began to track it:
                                * nonzero for the main thread only, whose clock also counts
                                * the loader and, after exec, the image before it (0 again
                                * in a fork child, whose clock starts at the fork) */
    uint64_t run_delay_ns;     /* at exit: time runnable but waiting for a CPU (schedstat);
                                * UINT64_MAX when unknown or not read (see lb_thread_detach) */
    bool exited;
    bool foreign;                 /* a raw clone's record, never lb_self (see above) */
    pid_t os_tid;                 /* its kernel thread id: gettid(), unlike tid for a foreign
                                 * record; 0 in a record core did not make (unit tests) */
    uintptr_t stack_lo, stack_hi; /* a foreign record's stack (its mapping), else 0: the
                                   * thread-local lb_stack_bounds are its creator's */
    uint32_t compacting;          /* 1 while lb_thread_detach moves data to the arena */
    struct lb_site *kept_sites;   /* the used site slots, once exited */
    uint32_t n_kept_sites;
    uint32_t site_pages;    /* blame/sites.h: bit i: a slot on page i of `sites` was claimed */
    uint64_t site_overflow; /* blame/sites.h: site counts that found no free slot */
    void *tables;           /* core/thread_tables.h: the block the tables are carved from */
    uint32_t tables_parts;  /* the parts that hold it (LB_TT_PART_*) */
    uint32_t tables_dirty;  /* its pages the parts wrote (bit i: page i) */
    struct lb_thread *next; /* registry link */
} lb_thread_t;

/* The calling thread's record, or NULL before lockblame runs on it. */
extern LB_TLS lb_thread_t *lb_self;
/* The calling thread is inside lb_thread_attach. What the attach calls
 * may call the program's allocator (glibc's pthread_getattr_np reallocs
 * under the thread's own lock), and an allocator may take a monitored
 * lock (jemalloc's mutexes): a thread must not be adopted there, or its
 * second attach waits on the lock its first one holds. */
extern LB_TLS bool lb_thread_attaching;

/* The kernel thread id of t's thread (tid may be its creator's: foreign). */
static inline pid_t lb_thread_os_tid(const lb_thread_t *t)
{
    return t->os_tid ? t->os_tid : t->tid;
}

/* Record the calling thread's stack bounds (util/stack_bounds.h), create
 * and register its record (id assigned here), run every layer's init and
 * start hooks. Returns NULL if out of memory (the
 * thread then runs unmonitored). */
lb_thread_t *lb_thread_attach(uintptr_t start_routine, uint32_t creator_id, uint32_t creator_node);
/* Create and register a foreign record for the calling thread, kernel
 * thread os_tid, which runs with creator's thread pointer (see above):
 * the init hooks and the start_foreign hooks run, lb_self is left alone,
 * and the thread counts in no live-thread figure (its end is never seen).
 * Returns NULL if out of memory. errno is preserved. */
lb_thread_t *lb_thread_attach_foreign(const lb_thread_t *creator, pid_t os_tid,
                                      uintptr_t start_routine, uintptr_t stack_lo,
                                      uintptr_t stack_hi);
/* The calling thread is ending: run the stop hooks (sampling stops),
 * record CPU time, stop monitoring this thread (lb_self = NULL) and
 * compact its tables (compact hooks). Called by a started thread's
 * trampoline, an adopted thread's exit destructor and the initial
 * thread's pthread_exit (interpose/thread_create.c). */
void lb_thread_detach(lb_thread_t *self);
/* The final write begins: no thread compacts from now on, and any
 * compaction in progress has finished when this returns. */
void lb_thread_freeze(void);
/* A reader of live threads' tables (the time windows' writer thread, one
 * at a time): no thread compacts from hold until release (an exiting
 * thread waits), and none is compacting when hold returns. */
void lb_thread_hold_tables(void);
void lb_thread_release_tables(void);
/* Head of the registry (newest first). */
lb_thread_t *lb_thread_registry(void);
uint32_t lb_thread_count(void);
/* The newest exited thread with this pthread_t; NULL if none. */
lb_thread_t *lb_thread_find_exited(uintptr_t handle);
/* After fork, in the child: the registry keeps only the forking thread. */
void lb_thread_after_fork_child(lb_thread_t *self);

/* Enter/leave lockblame code on this thread (nestable). */
static inline void lb_enter(lb_thread_t *self)
{
    self->busy++;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}
static inline void lb_leave(lb_thread_t *self)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    self->busy--;
}
#endif
