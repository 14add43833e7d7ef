/* lb_thread: everything lockblame keeps per application thread.
 *
 * Invariants:
 *  - A record is created by its own thread (trampoline or lazily) and is
 *    written only by that thread, except `exited`/`cpu_ns_at_exit`, set by
 *    the thread itself at exit, and the final write, which reads all
 *    records after lb_sampler_quiesce().
 *  - Records come from the arena and are never freed; they are linked into
 *    a push-only registry list (lock-free CAS push), so the writer can walk
 *    all threads, live and exited. When a thread exits, its big per-thread
 *    tables (sites, CCT chunks) are compacted into right-sized arena
 *    memory and unmapped, unless the final write has begun (see
 *    lb_thread_freeze), so 100K short-lived threads cost ~1 KB each.
 *  - `busy` > 0 means lockblame code is running on this thread: wrappers
 *    called from there (libunwind, sqlite locking) go straight to the real
 *    functions, and the sampling handler drops its sample. */
#ifndef LB_THREAD_H
#define LB_THREAD_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "blame/sites.h"
#include "blame/object_blame.h"
#include "blame/rw_holds.h"
#include "sampler/cct.h"
#include "sampler/sampler.h"
#include "util/common.h"

typedef struct lb_thread {
    /* hot: read by every wrapped call */
    uint32_t busy;                /* re-entry guard, see above */
    uint32_t waiting;             /* lb_obj_kind + 1 while blocked in a wrapped wait, else 0 */
    lb_site_table_t *sites;       /* exact per-call-site counts (mmap'd; NULL once exited) */
    lb_rw_holds_t rw_holds;       /* rwlocks held, with V at acquire */
    /* sampling */
    lb_sampler_thread_t sampler;
    lb_cct_t *cct;                /* &cct_storage, or NULL if it has no memory */
    lb_cct_t cct_storage;
    lb_object_blame_table_t object_blame;  /* blame per (object, release node) */
    uint64_t retired_acquisitions[LB_OBJ_KINDS]; /* of destroyed never-contended objects */
    /* identity, cold */
    uint32_t id;                  /* 0 = main thread, then creation order */
    pid_t tid;
    uintptr_t handle;             /* pthread_self() */
    uintptr_t start_routine;      /* pthread_create's start routine, 0 for main */
    uint32_t creator_id;          /* thread that called pthread_create */
    uint32_t creator_node;        /* node of that call in the creator's CCT */
    uint64_t start_ns, end_ns;    /* monotonic */
    uint64_t cpu_ns;              /* thread CPU time at exit (or at the write) */
    bool exited;
    uint32_t compacting;          /* 1 while lb_thread_detach moves data to the arena */
    lb_site_t *kept_sites;        /* the used site slots, once exited */
    uint32_t n_kept_sites;
    struct lb_thread *next;       /* registry link */
} lb_thread_t;

/* The calling thread's record, or NULL before lockblame runs on it. */
extern LB_TLS lb_thread_t *lb_self;

/* Create and register the calling thread's record (id assigned here).
 * Returns NULL if out of memory (the thread then runs unmonitored). */
lb_thread_t *lb_thread_attach(uintptr_t start_routine, uint32_t creator_id,
                              uint32_t creator_node);
/* The calling thread is ending: stop sampling, record CPU time, stop
 * monitoring this thread (lb_self = NULL) and compact its tables. */
void lb_thread_detach(lb_thread_t *self);
/* The final write begins: no thread compacts from now on, and any
 * compaction in progress has finished when this returns. */
void lb_thread_freeze(void);
/* Head of the registry (newest first). */
lb_thread_t *lb_thread_registry(void);
uint32_t lb_thread_count(void);
/* The newest exited thread with this pthread_t; NULL if none. */
lb_thread_t *lb_thread_find_exited(uintptr_t handle);
/* After fork, in the child: the registry keeps only the forking thread. */
void lb_thread_after_fork_child(lb_thread_t *self);

/* Enter/leave lockblame code on this thread (nestable). */
static inline void lb_enter(lb_thread_t *self) { self->busy++; __atomic_signal_fence(__ATOMIC_SEQ_CST); }
static inline void lb_leave(lb_thread_t *self) { __atomic_signal_fence(__ATOMIC_SEQ_CST); self->busy--; }
#endif
