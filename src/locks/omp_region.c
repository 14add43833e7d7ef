/* OpenMP parallel regions and team barriers: see omp_region.h.
 *
 * Concurrency: besides the record's member slots (omp_region.h), the
 * member whose share ends last adds each teammate's wait to that
 * teammate's wait node, a CCT node of another thread. That teammate is
 * blocked in libgomp's final barrier meanwhile, which only this member's
 * return can end, and nothing else writes a node's wait_ns from outside
 * a wrapped call of its own thread; libgomp's barrier orders the write
 * before the teammate's next use of its CCT. */
#include "locks/omp_region.h"

#include "blame/omp_idle.h"
#include "blame/sites.h"
#include "core/gomp_real.h"
#include "core/hooks.h"
#include "locks/barrier_ops.h"
#include "locks/objmap.h"
#include "sampler/omp_share.h"
#include "sampler/unwind.h"
#include "util/clock.h"

bool lb_omp_region_wanted(void)
{
    lb_thread_t *self = lb_self;
    return self && !self->busy;
}

void lb_omp_region_init(lb_omp_region_t *region, void (*fn)(void *), void *data)
{
    region->fn = fn;
    region->data = data;
    region->ended = 0;
}

/* The team's barrier state: keyed by the region record (its `ended`
 * word, which the shares' samples also name the team by). */
static lb_mon_t *team_mon(const lb_omp_share_t *share)
{
    return lb_objmap_get(share->ended, LB_OBJ_BARRIER);
}

/* The calling member's share is the last to end, at now: the others'
 * idleness since their own ends. */
static void last_share_ended(lb_thread_t *self, lb_omp_region_t *r, const lb_omp_share_t *share,
                             uint32_t me, uint64_t now)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < share->team; i++) {
        const lb_omp_member_t *m = &r->member[i];
        if (i == me || m->ended_ns >= now)
            continue;
        uint64_t waited = now - m->ended_ns;
        total += waited;
        if (m->node)
            m->node->m.wait_ns += waited;
    }
    lb_mon_t *mon = team_mon(share);
    if (mon)
        lb_omp_idle_blame(self, mon, total, share->team - 1, share, (uintptr_t)r->fn);
}

/* In section lb_omp_share (with GOMP_parallel's wrapper), whose bounds
 * the unwinder walks through (sampler/unwind.h), so that a share's samples
 * and wrapped calls keep their callers above the trampoline (libgomp, the
 * region's caller). */
__attribute__((section("lb_omp_share"), noinline)) void lb_omp_share_run(void *arg)
{
    lb_omp_region_t *r = arg;
    lb_thread_t *self = lb_self;
    int team = LB_GOMP(get_num_threads, "omp_get_num_threads")();
    int me = LB_GOMP(get_thread_num, "omp_get_thread_num")();
    if (!self || self->busy || team < 2 || team > LB_OMP_TEAM_MAX || me < 0 || me >= team) {
        r->fn(r->data);
        return;
    }
    lb_omp_share_t share;
    lb_mon_t *barrier = lb_objmap_get(&r->ended, LB_OBJ_BARRIER);
    lb_omp_share_init(&share, &r->ended, barrier ? &barrier->waiters : NULL, (uint32_t)team,
                      (uint32_t)LB_GOMP(get_level, "omp_get_level")());
    lb_omp_share_t *outer = self->omp_share;
    self->omp_share = &share;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    r->fn(r->data);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    self->omp_share = outer; /* the handler adds no more samples to share */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    lb_omp_member_t *mine = &r->member[me];
    mine->node = lb_omp_idle_wait_node(self, (uintptr_t)r->fn);
    uint64_t now = lb_now_ns();
    mine->ended_ns = now;
    if (__atomic_add_fetch(&r->ended, 1, __ATOMIC_ACQ_REL) == (uint32_t)team)
        last_share_ended(self, r, &share, (uint32_t)me, now);
}

void lb_omp_barrier_begin(uintptr_t site, lb_omp_barrier_t *b, bool ends_loop)
{
    lb_thread_t *self = lb_self;
    b->self = NULL;
    b->waits = false;
    if (!self || self->busy || !self->omp_share)
        return; /* not in a region we run (an orphaned barrier, a team of one) */
    lb_omp_share_t *share = self->omp_share;
    if (LB_GOMP(get_level, "omp_get_level")() != (int)share->level)
        return; /* a team of one nested in the share's region: no wait */
    lb_mon_t *mon = team_mon(share);
    if (!mon)
        return;
    if (__atomic_load_n(&mon->barrier_count, __ATOMIC_RELAXED) != share->team) {
        /* A new team at this record's address: every member sets the same
         * count before its own arrival, so the episode needs them all. */
        lb_meta_lock(&mon->meta);
        mon->barrier_count = share->team;
        lb_meta_unlock(&mon->meta);
    }
    b->self = self;
    if (!ends_loop) {
        b->waits = lb_barrier_enter(self, mon, site, &b->wait);
    } else {
        lb_site_count_release(self, site, LB_OBJ_BARRIER);
        lb_hold_t hold;
        b->waits = !lb_barrier_arrive(self, mon, &b->wait, &hold);
        if (!b->waits)
            lb_omp_idle_episode(self, &hold, share);
    }
    lb_enter(self);
    lb_omp_share_forget(share);
    lb_leave(self);
}

void lb_omp_barrier_end(lb_omp_barrier_t *b)
{
    if (b->waits)
        lb_wait_end(b->self, &b->wait, false);
}

extern char __start_lb_omp_share[], __stop_lb_omp_share[];

static void omp_region_setup(void)
{
    lb_unwind_set_pass_range((uintptr_t)__start_lb_omp_share, (uintptr_t)__stop_lb_omp_share);
}

LB_PROCESS_HOOKS(omp_region_hooks) = {
    .rank = LB_RANK_LOCKS,
    .setup = omp_region_setup,
};
