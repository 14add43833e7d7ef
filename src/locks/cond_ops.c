/* Condition variables and semaphores.
 *
 * The monitored state lives in the object map (glibc's condvar and sem_t
 * have no spare field). The object is permanently "held" for the blame
 * clock: V advances at rate w (waiters) all the time, and each
 * signal/broadcast/post collects V since the previous one.
 *
 * A cond wait releases and re-acquires its mutex inside glibc: we account
 * the mutex release at the cond_wait call site before the real call and
 * the re-acquisition after it; the time spent re-acquiring counts as cond
 * waiting (it is inside the wait interval). A hot cond's wait finishes
 * its end after the program releases the mutex (blame/wait_deferred.h);
 * a cancelled one inside the cleanup handler, as any other.
 *
 * Cancellation: a waiter cancelled inside the real call leaves through the
 * cleanup handler, which ends its wait so `waiters` stays exact. The
 * handler is pushed with glibc's exported _pthread_cleanup_push (the
 * buffer on our stack, linked into the thread's list: two stores), which
 * glibc's own pthread_cond_wait uses for its handler. The cancellation's
 * unwind runs such handlers as it leaves the frames that hold them, after
 * glibc's (deeper, so first). pthread_cleanup_push, compiled without
 * -fexceptions, would instead take a sigsetjmp and two calls into glibc
 * on every wait: ~60 instructions inside the caller's hold of the mutex
 * (with -fexceptions, the library would need libgcc_s at every start). */
#include "locks/cond_ops.h"

#include <errno.h>

#include "blame/blame.h"
#include "blame/shared_objs.h"
#include "blame/signal_sampled.h"
#include "blame/wait_deferred.h"
#include "core/real.h"
#include "locks/lifecycle.h"
#include "locks/mutex_ops.h"
#include "locks/objmap.h"
#include "sampler/adopt.h"
#include "sampler/foreign.h"
#include "util/timeout.h"

/* glibc's exported, undeclared cleanup-list calls (libc since 2.34,
 * libpthread before): push links buffer to the calling thread's list,
 * pop unlinks it and runs its routine if execute. */
extern void _pthread_cleanup_push(struct _pthread_cleanup_buffer *buffer, void (*routine)(void *),
                                  void *arg);
extern void _pthread_cleanup_pop(struct _pthread_cleanup_buffer *buffer, int execute);

typedef struct cond_wait_ctx {
    lb_thread_t *self;
    lb_wait_t wait;
    pthread_mutex_t *mutex;
    lb_shared_wait_t shared; /* on an object shared across processes (blame/shared_objs.h):
                              * its record, else NULL */
    bool woken;              /* the real wait succeeded (a cancelled one: not) */
} cond_wait_ctx_t;

/* A cond or semaphore wait's context as it starts, by self, releasing
 * mutex (NULL: none) inside glibc: no initializer, since the wait's fields
 * are all written where it begins and woken after the call (zeroing the
 * whole context costs a string store inside the caller's hold). */
static inline void ctx_start(cond_wait_ctx_t *ctx, lb_thread_t *self, pthread_mutex_t *mutex)
{
    ctx->self = self;
    ctx->mutex = mutex;
    ctx->woken = false; /* (a cancelled wait's) */
}

/* obj's record shared across processes, if it has one, into ctx, with the
 * tree's count of its releases and whether a signal or post is under way
 * now (a release from here on may be the one that ends the wait). */
static inline void shared_look(cond_wait_ctx_t *ctx, const void *obj)
{
    ctx->shared.r = lb_shared_find(obj);
    if (ctx->shared.r) {
        ctx->shared.releases = lb_shared_releases(ctx->shared.r);
        ctx->shared.signal_pending = lb_shared_signal_pending(ctx->shared.r);
    }
}

/* The wait on a shared object (ctx's) ended at `ended`. */
static void shared_wait_finished(cond_wait_ctx_t *ctx, uint64_t ended)
{
    if (ctx->shared.r)
        lb_shared_wait_ends(&ctx->shared, ctx->wait.mon, ended, false, ctx->woken,
                            ctx->wait.timed_out);
}

static void cond_wait_finished(void *p)
{
    cond_wait_ctx_t *ctx = p;
    uint64_t ended = lb_wait_end(ctx->self, &ctx->wait, false);
    shared_wait_finished(ctx, ended);
    if (ctx->mutex)
        lb_mutex_acquired_inside(ctx->self, ctx->mutex, ended);
}

int lb_cond_wait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                 const struct timespec *abstime, uintptr_t site)
{
    uint64_t now = lb_now_ns(); /* the call's entry (below) */
    lb_thread_t *self = lb_self ? lb_thread_here(lb_self) : lb_thread_adopt();
    lb_mon_t *mon = self && !self->busy ? lb_objmap_get(c, LB_OBJ_COND) : NULL;
    if (!mon) {
        if (clock == LB_WAIT_FOREVER)
            return lb_real.cond_wait(c, m);
        if (clock == LB_WAIT_REALTIME)
            return lb_real.cond_timedwait(c, m, abstime);
        return lb_real.cond_clockwait(c, m, clock, abstime);
    }
    cond_wait_ctx_t ctx;
    ctx_start(&ctx, self, m);
    /* The mutex's hold ends and the wait begins at one time, the call's
     * entry (where glibc would go on to release it, but for our
     * bookkeeping); the mutex's blame goes to the wait's calling context
     * (one context look-up for both). */
    lb_hold_t mutex_hold = lb_mutex_releasing_inside(self, m, now);
    lb_wait_begin_at(self, mon, LB_OBJ_COND, &ctx.wait, now);
    shared_look(&ctx, c);
    if (ctx.shared.r) /* its signallers may be in any process of the tree */
        lb_shared_wait_begins(&ctx.shared, mon, now, false, 0);
    if (mutex_hold.blame_ns > 0) /* (lb_deposit_at's own test, without the call) */
        lb_deposit_at(self, &mutex_hold, LB_OBJ_MUTEX, site, ctx.wait.node, ctx.wait.node_id);
    int rc;
    struct _pthread_cleanup_buffer cleanup;
    _pthread_cleanup_push(&cleanup, cond_wait_finished, &ctx);
    if (clock == LB_WAIT_FOREVER)
        rc = lb_real.cond_wait(c, m);
    else if (clock == LB_WAIT_REALTIME)
        rc = lb_real.cond_timedwait(c, m, abstime);
    else
        rc = lb_real.cond_clockwait(c, m, clock, abstime);
    _pthread_cleanup_pop(&cleanup, 0);
    ctx.wait.timed_out = rc == ETIMEDOUT;
    ctx.wait.had_deadline = clock != LB_WAIT_FOREVER;
    ctx.woken = rc == 0;
    /* m is held again: a hot wait's end waits for its release
     * (wait_deferred.h); any other ends here. */
    uint64_t ended = lb_wait_end_deferred(self, &ctx.wait, m);
    if (ended)
        lb_mutex_acquired_inside(self, m, ended);
    else
        cond_wait_finished(&ctx);
    return rc;
}

/* A signal, broadcast, post or wake on obj (its lb_mon, mon), before the
 * real call (cond_ops.h): counts the release at site and, if threads
 * wait, collects the idleness accrued since the previous one onto it; on
 * a sampled object (signal_sampled.h) only one signal interval in N is
 * measured, at its two ends. Nothing of it runs after the real call. */
void lb_signal_account(lb_thread_t *self, lb_mon_t *mon, const void *obj, lb_obj_kind kind,
                       uintptr_t site)
{
    lb_site_t *s = lb_site_lookup_last(self, lb_site_key(site, kind), &self->last_signal_key,
                                       &self->last_signal_site);
    if (s)
        s->releases++;
    lb_signal_ends_own_run(self, mon);
    uint32_t sampled = __atomic_load_n(&mon->signal_sampled, __ATOMIC_RELAXED);
    if (sampled) {
        uint64_t looked_at;
        if (lb_signal_sampled_needs(self, sampled, obj, kind, &looked_at))
            lb_signal_sampled_measure(self, mon, kind, looked_at);
    } else if (lb_release_needs_accounting(mon)) {
        lb_signal_blame(self, mon, kind, site);
    }
}

/* lb_signal's general path (cond_ops.h): the object looked up (created on
 * first use), its signal accounted, then the real call, whose result it
 * returns. */
int lb_signal_general(void *obj, lb_obj_kind kind, uintptr_t site, int arg)
{
    lb_thread_t *self = lb_thread_current();
    lb_mon_t *mon = self && !self->busy ? lb_objmap_get(obj, kind) : NULL;
    if (mon && (kind == LB_OBJ_SEM || kind == LB_OBJ_COND)) {
        lb_shared_obj_t *shared = lb_shared_find(obj);
        if (shared) { /* its waiters may be in any process of the tree */
            lb_site_count_release(self, site, kind);
            lb_signal_ends_own_run(self, mon); /* (lb_signal_account's step) */
            lb_shared_blame(self, shared, mon, kind, site);
            int rc = lb_signal_real(obj, kind, arg);
            lb_shared_signal_returned(shared); /* atomics: errno kept */
            return rc;
        }
    }
    if (mon)
        lb_signal_account(self, mon, obj, kind, site);
    return lb_signal_real(obj, kind, arg);
}

int lb_signal_measured(lb_thread_t *self, lb_mon_t *mon, void *obj, lb_obj_kind kind, int arg)
{
    lb_signal_sampled_measure(self, mon, kind, 0); /* before: nothing after */
    return lb_signal_real(obj, kind, arg);
}

int lb_signal_looking(lb_thread_t *self, lb_mon_t *mon, void *obj, lb_obj_kind kind, int arg,
                      uint32_t v)
{
    lb_signal_hot_t *slot = lb_signal_waits_slot(v);
    uint64_t now = lb_now_ns();
    bool gap = lb_signal_gap_ends(self, slot, now);
    if (lb_signal_sampled_due(self, v, slot, gap))
        lb_signal_sampled_measure(self, mon, kind, now); /* the look's time: no second read */
    return lb_signal_real(obj, kind, arg);
}

int lb_signal_unresolved(void *obj, lb_obj_kind kind, uintptr_t site, int arg)
{
    if (lb_real_resolve() != 0)
        return 0;
    return lb_signal_general(obj, kind, site, arg);
}

int lb_cond_init(pthread_cond_t *c, const pthread_condattr_t *attr)
{
    lb_objmap_retire(c);
    int rc = lb_real.cond_init(c, attr);
    int pshared = PTHREAD_PROCESS_PRIVATE;
    if (rc == 0 && attr && lb_self && pthread_condattr_getpshared(attr, &pshared) == 0 &&
        pshared == PTHREAD_PROCESS_SHARED)
        lb_shared_register(c, LB_OBJ_COND, 0); /* errno kept */
    return rc;
}

int lb_cond_destroy(pthread_cond_t *c)
{
    int rc = lb_real.cond_destroy(c);
    if (rc == 0)
        lb_objmap_retire(c);
    return rc;
}

static int real_sem_wait(sem_t *s, clockid_t clock, const struct timespec *abstime)
{
    if (clock == LB_WAIT_FOREVER)
        return lb_real.sem_wait(s);
    if (clock == LB_WAIT_REALTIME)
        return lb_real.sem_timedwait(s, abstime);
    return lb_real.sem_clockwait(s, clock, abstime);
}

static void sem_wait_finished(void *p)
{
    cond_wait_ctx_t *ctx = p;
    uint64_t ended = lb_wait_end(ctx->self, &ctx->wait, false);
    shared_wait_finished(ctx, ended);
}

/* A wait that has to wait begins at the call's entry: the first call on
 * a semaphore makes its lb_mon and looks its shared record up (0.1 to
 * 0.3 ms of page faults in an exec'd worker; a cond's first wait in a
 * fork child, 0.05 to 3 ms), and a thread preempted there is already
 * waiting as its caller sees it. So a thread that has not used the
 * semaphore lately reads the clock at entry; one that has (its lb_mon in
 * the thread's recent slots: no first-use work ahead) reads it only where
 * the wait blocks, as an uncontended post and wait pair would otherwise
 * pay a clock read for nothing (58 ns a pair against 31, on the 2-vCPU
 * VM; 13 natively). */
int lb_sem_wait(sem_t *s, clockid_t clock, const struct timespec *abstime, uintptr_t site)
{
    lb_mon_t *recent = lb_objmap_recent_mon(s, LB_OBJ_SEM);
    uint64_t entered = recent ? 0 : lb_now_ns();
    lb_thread_t *self = lb_self ? lb_thread_here(lb_self) : lb_thread_adopt();
    lb_mon_t *mon = NULL;
    if (self && !self->busy)
        mon = recent ? recent : lb_objmap_get_probed(s, LB_OBJ_SEM); /* (recent: looked) */
    if (!mon || lb_timeout_rejected(clock, abstime))
        return real_sem_wait(s, clock, abstime); /* EINVAL before any attempt */
    pthread_testcancel(); /* glibc's sem_wait is a cancellation point even when it need not wait */
    int saved_errno = errno;
    cond_wait_ctx_t ctx;
    ctx_start(&ctx, self, NULL);
    shared_look(&ctx, s);
    if (sem_trywait(s) == 0) { /* a sem_trywait never waits (rule 1) */
        /* an acquisition that did not wait (waits count in lb_wait_end) */
        __atomic_fetch_add(&mon->acquisitions, 1, __ATOMIC_RELAXED);
        return 0;
    }
    errno = saved_errno;
    lb_wait_begin_at(self, mon, LB_OBJ_SEM, &ctx.wait, entered ? entered : lb_now_ns());
    if (ctx.shared.r)
        lb_shared_wait_begins(&ctx.shared, mon, ctx.wait.start_ns, false, 0);
    struct _pthread_cleanup_buffer cleanup;
    _pthread_cleanup_push(&cleanup, sem_wait_finished, &ctx);
    int rc = real_sem_wait(s, clock, abstime);
    ctx.wait.timed_out = rc != 0 && errno == ETIMEDOUT;
    ctx.wait.had_deadline = clock != LB_WAIT_FOREVER;
    ctx.woken = rc == 0;
    _pthread_cleanup_pop(&cleanup, 1);
    return rc;
}

int lb_sem_init(sem_t *s, int pshared, unsigned value)
{
    lb_objmap_retire(s);
    int rc = lb_real.sem_init(s, pshared, value);
    if (rc == 0 && pshared && lb_self)
        lb_shared_register(s, LB_OBJ_SEM, 0); /* errno kept */
    return rc;
}

int lb_sem_destroy(sem_t *s)
{
    int rc = lb_real.sem_destroy(s);
    if (rc == 0)
        lb_objmap_retire(s);
    return rc;
}
