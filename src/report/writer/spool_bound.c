/* The bound on a run's pending profiles (spool_bound.h, which states the
 * invariants). The setting is read once per image, at setup; the rest
 * runs in a process's final write and in commits, on one thread. */
#include "report/writer/spool_bound.h"

#include <stdlib.h>
#include <unistd.h>

#include "common/ledger.h"
#include "common/spool.h"
#include "core/hooks.h"
#include "core/phase.h"
#include "report/writer/ledger.h"
#include "report/writer/output.h"
#include "util/env.h"
#include "util/fork_pages.h"
#include "util/proc_numbers.h"
#include "util/log.h"

static unsigned spool_max = LB_SPOOL_MAX_DEFAULT;
static uint64_t duty; /* this process's duty word while it holds the duty, else 0 */

/* LOCKBLAME_SPOOL_MAX; a bad value is said once, by the image that
 * started the run (under `lockblame run`, the CLI says it). */
static void read_setting(void)
{
    char why[256];
    spool_max = lb_spool_max_setting(lb_getenv("LOCKBLAME_SPOOL_MAX"), why, sizeof why);
    if (why[0] && lb_output_started_run())
        lb_warn("%s", why);
}

uint32_t lb_spool_bound_count_record(void)
{
    lb_ledger_t *l = lb_ledger_shared();
    return l ? __atomic_add_fetch(&l->spooled, 1u, __ATOMIC_SEQ_CST) : 0;
}

/* spooled - merged, 0 when merged ran ahead (both wrap) */
static uint32_t pending(const lb_ledger_t *l)
{
    uint32_t merged = __atomic_load_n(&l->merged, __ATOMIC_SEQ_CST);
    int32_t n = (int32_t)(__atomic_load_n(&l->spooled, __ATOMIC_SEQ_CST) - merged);
    return n > 0 ? (uint32_t)n : 0;
}

/* A duty word: a pid and its start time's low 32 bits, so that a pid the
 * kernel hands out again is not taken for the holder. */
static uint64_t duty_word(uint32_t pid, uint64_t start)
{
    return (uint64_t)pid | (uint64_t)(uint32_t)start << 32;
}

/* Whether duty word `held` leaves the duty free: nobody holds it, or its
 * holder is gone. */
static bool duty_open(uint64_t held)
{
    if (!held)
        return true;
    uint32_t pid = (uint32_t)held;
    uint64_t start = lb_proc_start_of((pid_t)pid); /* 0: none, or a zombie */
    return !start || duty_word(pid, start) != held;
}

/* The duty taken by this process if no live process holds it. */
static bool take_duty(lb_ledger_t *l)
{
    uint64_t start = lb_runtime_proc_start(lb_own_pid());
    if (!start)
        return false;
    uint64_t mine = duty_word((uint32_t)getpid(), start);
    uint64_t held = __atomic_load_n(&l->committer, __ATOMIC_SEQ_CST);
    while (duty_open(held)) {
        if (__atomic_compare_exchange_n(&l->committer, &held, mine, false, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST)) {
            duty = mine;
            return true;
        }
    }
    return false; /* another process commits: this one's record waits */
}

bool lb_spool_bound_take_duty(void)
{
    lb_ledger_t *l = lb_ledger_shared();
    return l && spool_max && pending(l) >= spool_max && take_duty(l);
}

bool lb_spool_bound_take_duty_now(void)
{
    lb_ledger_t *l = lb_ledger_shared();
    return l && take_duty(l);
}

uint32_t lb_spool_bound_pending(void)
{
    lb_ledger_t *l = lb_ledger_shared();
    return l ? pending(l) : 0;
}

bool lb_spool_bound_duty_free(void)
{
    lb_ledger_t *l = lb_ledger_shared();
    return l && duty_open(__atomic_load_n(&l->committer, __ATOMIC_SEQ_CST));
}

unsigned lb_spool_bound_max(void)
{
    return spool_max;
}

unsigned lb_spool_bound_batch(void)
{
    return lb_spool_duty_batch(spool_max);
}

bool lb_spool_bound_on_duty(void)
{
    return duty != 0;
}

void lb_spool_bound_release(void)
{
    lb_ledger_t *l = lb_ledger_shared();
    uint64_t mine = duty;
    if (!l || !mine)
        return;
    __atomic_compare_exchange_n(&l->committer, &mine, 0, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    duty = 0;
}

uint32_t lb_spool_bound_mark(void)
{
    lb_ledger_t *l = lb_ledger_shared();
    return l ? lb_ledger_spool_mark(l) : 0;
}

void lb_spool_bound_took(uint32_t mark, unsigned taken, bool drained)
{
    lb_ledger_t *l = lb_ledger_shared();
    if (l)
        lb_ledger_spool_took(l, mark, taken, drained);
}

/* A fork child holds no duty: the one its parent's writing thread held
 * when another thread forked is the parent's to release. Stored only
 * where the parent held one: a fork child's store would copy the page it
 * shares with its parent. */
static void forget_duty(lb_thread_t *self)
{
    (void)self;
    LB_STORE_CHANGED(&duty, 0u);
}

LB_PROCESS_HOOKS(spool_bound_hooks) = {
    .rank = LB_RANK_WRITER,
    .setup = read_setting,
    .fork_child = forget_duty,
};
