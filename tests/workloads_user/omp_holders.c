/* omp_holders: OpenMP mutual exclusion with one slow holder (gcc -fopenmp
 * -O2 -g), blamed as a mutex (docs/DESIGN.md rule 3).
 *
 * Usage: omp_holders critical|lock
 *   critical  `omp critical` (GOMP_critical_start/_end)
 *   lock      omp_set_lock/omp_unset_lock on one omp_lock_t
 *
 * Four threads: thread 0 enters ROUNDS times through slow_holder, which
 * holds for 20 ms; the others enter through quick_holder (1 ms) until
 * thread 0 is done. Holding and the pauses between entries sleep, so the
 * figures stay what they are on a loaded machine. Idleness that accrues
 * while slow_holder holds must be blamed on slow_holder's release,
 * quick_holder's likewise, and the rest is hand-off latency.
 *
 * Truth: every entry logs its wait [before the entry, inside) and its
 * hold [inside, just before the release); gt_sweep_holders applies the
 * mutex rule to those intervals. */
#include <omp.h>

#include "gt.h"

#define NTHREADS 4
#define ROUNDS   8
#define MS       1000000

enum {
    SLOW,
    QUICK,
    NSITES
};
enum mode {
    CRITICAL,
    LOCK
};

static enum mode mode;
static omp_lock_t lock;
static struct gt_log logs[NTHREADS];
static atomic_int slow_done;

/* Inside the critical section entered at `entered`: log the wait, hold
 * for hold_ns, log the hold; returns just before the release. */
static inline void hold(int me, int site, int64_t entered, int64_t hold_ns)
{
    int64_t inside = gt_now();
    gt_log_add(&logs[me], entered, inside, -1);
    gt_sleep_until(inside + hold_ns);
    gt_log_add(&logs[me], inside, gt_now(), site);
}

/* One entry, at the call sites this function's name stands for. */
#define ENTER_AND_HOLD(me, site, hold_ns)                             \
    do {                                                              \
        int64_t entered = gt_now();                                   \
        if (mode == CRITICAL) {                                       \
            _Pragma("omp critical") hold(me, site, entered, hold_ns); \
        } else {                                                      \
            omp_set_lock(&lock);                                      \
            hold(me, site, entered, hold_ns);                         \
            omp_unset_lock(&lock);                                    \
        }                                                             \
    } while (0)

static __attribute__((noinline)) void slow_holder(int me)
{
    ENTER_AND_HOLD(me, SLOW, 20 * MS);
}

static __attribute__((noinline)) void quick_holder(int me)
{
    ENTER_AND_HOLD(me, QUICK, 1 * MS);
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "critical") != 0 && strcmp(argv[1], "lock") != 0)) {
        fprintf(stderr, "usage: %s critical|lock\n", argv[0]);
        return 2;
    }
    mode = strcmp(argv[1], "critical") == 0 ? CRITICAL : LOCK;
    omp_init_lock(&lock);
    for (int i = 0; i < NTHREADS; i++)
        gt_log_init(&logs[i], 4096);
    int64_t t0 = gt_now();
#pragma omp parallel num_threads(NTHREADS)
    {
        int me = omp_get_thread_num();
        if (me == 0) {
            for (int r = 0; r < ROUNDS; r++) {
                slow_holder(me);
                gt_sleep_until(gt_now() + 5 * MS);
            }
            atomic_store(&slow_done, 1);
        } else {
            while (!atomic_load(&slow_done)) {
                quick_holder(me);
                gt_sleep_until(gt_now() + 2 * MS);
            }
        }
    }
    struct gt_result res = { .workload = "omp_holders",
                             .object = "mutex",
                             .threads = NTHREADS,
                             .nsites = NSITES,
                             .site_names = { "slow_holder", "quick_holder" } };
    if (mode == LOCK) {
        res.addresses[0] = &lock;
        res.naddresses = 1;
    } else {
        res.all_objects_of_kind = true; /* libgomp's own lock */
    }
    res.duration_s = (double)(gt_now() - t0) / 1e9;
    gt_sweep_holders(&res, logs, NTHREADS);
    gt_write_json(&res);
    omp_destroy_lock(&lock);
    return 0;
}
