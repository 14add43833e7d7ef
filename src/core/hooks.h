/* Hooks of the upper layers, so that core runs the thread and process
 * lifecycles without calling upward.
 *
 * A layer declares one static lb_thread_hooks_t (LB_THREAD_HOOKS) and/or
 * one lb_process_hooks_t (LB_PROCESS_HOOKS); the linker gathers them in a
 * section each, and core runs them by rank (LB_RANK_*, lower layers
 * first). Steps that build up run in ascending rank; steps that tear down
 * or quiesce run in descending rank. Any hook may be NULL.
 *
 * Thread hooks run on the thread itself, with errno saved by core:
 *   init     before the record is published (not yet lb_self, not in the
 *            registry): allocate the layer's part; -1 if it cannot, and
 *            then the thread runs unmonitored (the record is not used);
 *   start    the record is lb_self;
 *   start_foreign  instead of start, for a record that is not lb_self:
 *            a thread started by a raw clone (sampler/foreign.h), which
 *            shares its creator's thread-local storage, so this hook
 *            touches only the record and per-kernel-thread state (its
 *            timer, its signal mask), never a thread-local variable;
 *   stop     the thread ends; the record is still lb_self;
 *   compact  after lb_self is NULL, only while the final write has not
 *            begun (see lb_thread_freeze).
 *
 * Process hooks (core/runtime.c):
 *   setup         once, at start, before the main thread attaches;
 *   quiesce       at finish, before the registry freezes: stop everything
 *                 that writes per-thread data from other contexts;
 *   finish        at finish, after the freeze (the writer writes here),
 *                 with lockblame's busy held on the calling thread;
 *   fork_prepare / fork_parent / fork_child  pthread_atfork's three steps;
 *                 fork_child gets the forking thread's record, or NULL when
 *                 lockblame was not running on it; core prunes its
 *                 registry only after every fork_child hook ran. */
#ifndef LB_CORE_HOOKS_H
#define LB_CORE_HOOKS_H
#include "core/thread.h"

enum lb_rank {
    LB_RANK_SAMPLER,
    LB_RANK_BLAME,
    LB_RANK_LOCKS,
    LB_RANK_WRITER,
    LB_RANK_INTERPOSE,
    LB_RANKS
};

typedef struct lb_thread_hooks {
    enum lb_rank rank;
    int (*init)(lb_thread_t *t);
    void (*start)(lb_thread_t *t);
    void (*start_foreign)(lb_thread_t *t);
    void (*stop)(lb_thread_t *t);
    void (*compact)(lb_thread_t *t);
} lb_thread_hooks_t;

typedef struct lb_process_hooks {
    enum lb_rank rank;
    void (*setup)(void);
    void (*quiesce)(void);
    void (*finish)(const char *reason);
    void (*fork_prepare)(void);
    void (*fork_parent)(void);
    void (*fork_child)(lb_thread_t *self);
} lb_process_hooks_t;

#define LB_HOOKS_SECTION_(type, sec, name) \
    static const type name __attribute__((used, section(sec), aligned(sizeof(void *))))
#define LB_THREAD_HOOKS(name)  LB_HOOKS_SECTION_(lb_thread_hooks_t, "lb_thread_hooks", name)
#define LB_PROCESS_HOOKS(name) LB_HOOKS_SECTION_(lb_process_hooks_t, "lb_process_hooks", name)

/* Run one step of every layer's hooks, in the order given above. */
enum lb_thread_step {
    LB_THREAD_INIT,
    LB_THREAD_START,
    LB_THREAD_START_FOREIGN,
    LB_THREAD_STOP,
    LB_THREAD_COMPACT
};
int lb_hooks_thread(enum lb_thread_step step, lb_thread_t *t); /* -1: an init failed */
enum lb_process_step {
    LB_PROCESS_SETUP,
    LB_PROCESS_QUIESCE,
    LB_PROCESS_FINISH,
    LB_PROCESS_FORK_PREPARE,
    LB_PROCESS_FORK_PARENT,
    LB_PROCESS_FORK_CHILD
};
void lb_hooks_process(enum lb_process_step step, const char *reason, lb_thread_t *self);
#endif
