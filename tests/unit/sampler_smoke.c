/* Smoke test for the sampler: a thread burns CPU in a known function with
 * sampling on; most samples must land there.
 *
 * Threads get real records from core (lb_thread_attach, which also runs
 * the sampler's thread hooks: its part is allocated and, once
 * lb_sampler_setup ran, sampling starts). The sampler is linked into the
 * executable, so lb_pc_in_self() is false
 * everywhere and nothing is taken for lockblame's own frames.
 *
 * Built by tests/tests.mak. By hand:
 *   gcc -std=gnu11 -O2 -g -D_GNU_SOURCE -Isrc -Itests -pthread -fno-omit-frame-pointer \
 *       tests/unit/sampler_smoke.c src/sampler/STAR.c src/util/STAR.c \
 *       -lunwind -lunwind-x86_64 -lpfm -ldl -lrt -o /tmp/sampler_smoke
 *   (STAR standing for a shell glob star, which cannot appear in a C comment)
 *   /tmp/sampler_smoke
 */
#include "check.h"

#include <dlfcn.h>
#include <pthread.h>
#include <time.h>

#include "core/thread.h"
#include "sampler/cct.h"
#include "sampler/sampler.h"
#include "util/clock.h"
#include "util/pages.h"

/* The hot function sits in its own section so its exact bounds are known
 * (__start_/__stop_ symbols) even where dladdr cannot name it. */
#define HOT __attribute__((noinline, section("lb_smoke_hot")))
extern const char __start_lb_smoke_hot[], __stop_lb_smoke_hot[];

static volatile uint64_t sink;

HOT uint64_t smoke_hot_spin_until(uint64_t cpu_ns, const uint64_t *samples, uint64_t want,
                                  uint64_t max_cpu_ns);
/* Spin for cpu_ns of the thread's CPU time, and on until *samples reaches
 * want (samples may be NULL), for at most max_cpu_ns in all: a CPU-time
 * timer is checked at the scheduler ticks its thread runs at, and on a
 * machine crowded with other work whole stretches of ticks can pass the
 * thread by, so a fixed stretch of CPU time may see few samples; a budget
 * of CPU time, not of wall time, keeps the test independent of the load. */
HOT uint64_t smoke_hot_spin_until(uint64_t cpu_ns, const uint64_t *samples, uint64_t want,
                                  uint64_t max_cpu_ns)
{
    uint64_t start = lb_thread_cpu_ns(), now = start, x = 1;
    while (now - start < cpu_ns || (samples && __atomic_load_n(samples, __ATOMIC_RELAXED) < want &&
                                    now - start < max_cpu_ns)) {
        for (int i = 0; i < 20000; i++)
            x = x * 6364136223846793005u + 1442695040888963407u;
        now = lb_thread_cpu_ns();
    }
    return x;
}

HOT uint64_t smoke_hot_spin(uint64_t cpu_ns);
HOT uint64_t smoke_hot_spin(uint64_t cpu_ns)
{
    return smoke_hot_spin_until(cpu_ns, NULL, 0, cpu_ns);
}

/* The calling thread's record; sampling starts if the sampler is set up. */
static lb_thread_t *new_record(void)
{
    lb_thread_t *t = lb_thread_attach(0, 0, 0);
    ASSERT_NOT_NULL(t);
    ASSERT_PTR_EQ(lb_self, t);
    ASSERT_NOT_NULL(t->cct);
    ASSERT_NOT_NULL(t->sampler);
    return t;
}

/* A thread's record, published once it has attached. */
static lb_thread_t *attached(lb_thread_t *const *slot)
{
    lb_thread_t *t;
    while (!(t = __atomic_load_n(slot, __ATOMIC_ACQUIRE)))
        sched_yield();
    return t;
}

static uint64_t burner_cpu_ns; /* the burner's CPU clock once it stopped sampling */

static void *burner(void *arg)
{
    lb_thread_t *t = new_record();
    __atomic_store_n((lb_thread_t **)arg, t, __ATOMIC_RELEASE);
    sink = smoke_hot_spin_until(300 * 1000000u, &t->sampler->samples, 150, 3000 * 1000000u);
    t->cpu_ns = lb_thread_cpu_ns() - t->cpu_base_ns; /* as lb_thread_detach reads it */
    lb_sampler_thread_stop(t);
    burner_cpu_ns = lb_thread_cpu_ns();
    return NULL;
}

static bool in_hot(uintptr_t pc)
{
    return pc >= (uintptr_t)__start_lb_smoke_hot && pc < (uintptr_t)__stop_lb_smoke_hot;
}

/* The work samples of the nodes at or below the hot function: the loop,
 * and the CPU clock reads it makes (where a busy machine's preemptions
 * put more of the samples: 20% of them beside two busy loops). */
static uint64_t under_hot(lb_cct_t *cct)
{
    uint64_t sum = 0;
    for (uint32_t id = 1; id < cct->nodes; id++) {
        lb_cct_node_t *n = lb_cct_node(cct, id);
        for (lb_cct_node_t *up = n; up && up->depth; up = lb_cct_node(cct, up->parent))
            if (in_hot(up->pc)) {
                sum += n->m.work_samples;
                break;
            }
    }
    return sum;
}

/* The node with the most work samples. */
static lb_cct_node_t *hottest(lb_cct_t *cct)
{
    lb_cct_node_t *best = lb_cct_node(cct, 0);
    for (uint32_t id = 1; id < cct->nodes; id++) {
        lb_cct_node_t *n = lb_cct_node(cct, id);
        if (n->m.work_samples > best->m.work_samples)
            best = n;
    }
    return best;
}

static void run_burner(void)
{
    ASSERT_EQ(lb_sampler_setup(), 0);
    printf("# event %s (requested %s), period %llu %s, freq %llu, signal %d\n",
           lb_sampler_event_name(), lb_sampler_event_requested(),
           (unsigned long long)lb_sampler_period(), lb_sampler_period_unit(),
           (unsigned long long)lb_sampler_freq(), lb_sampler_signal());
    lb_thread_t *slot = NULL;
    pthread_t th;
    ASSERT_OK(pthread_create(&th, NULL, burner, &slot));
    ASSERT_OK(pthread_join(th, NULL));
    lb_thread_t *t = attached(&slot);
    lb_sampler_quiesce();

    lb_cct_node_t *hot = hottest(t->cct);
    /* Work from samples; the credit node (lockblame_unsampled_cpu) holds
     * the CPU time no sample saw. */
    uint64_t total = 0, credited = 0;
    for (uint32_t id = 0; id < t->cct->nodes; id++) {
        uint64_t w = lb_cct_node(t->cct, id)->m.work_samples;
        if (id == t->sampler->unsampled_node && id)
            credited += w;
        else
            total += w;
    }
    /* With a time event every period of the burner's CPU time is work: a
     * sample's, or the credit's. A CPU-time timer is checked at scheduler
     * ticks the thread runs at, and on a machine busy with other processes
     * it misses some (10-40% beside two busy loops on 2 cores): the credit
     * makes up for them, to the period (rounding at each end). A count
     * event (cycles) has no such residue. */
    if (lb_sampler_period_is_time()) {
        long long periods = llround((double)burner_cpu_ns / lb_sampler_ns_per_sample());
        printf("# burner CPU %llu ns: %lld periods, %llu sampled + %llu credited\n",
               (unsigned long long)burner_cpu_ns, periods, (unsigned long long)total,
               (unsigned long long)credited);
        ASSERT_LE(llabs((long long)(total + credited) - periods), 2);
    } else {
        ASSERT_LE(credited, 20);
    }
    Dl_info info;
    const char *name = dladdr((void *)hot->pc, &info) && info.dli_sname ? info.dli_sname : "?";
    printf("# samples %llu (work %llu), dropped %llu, nodes %u; hottest pc %#lx (%s) "
           "depth %u with %llu samples\n",
           (unsigned long long)t->sampler->samples, (unsigned long long)total,
           (unsigned long long)t->sampler->dropped, t->cct->nodes, (unsigned long)hot->pc, name,
           hot->depth, (unsigned long long)hot->m.work_samples);
    ASSERT_GT(t->sampler->samples, 100);
    ASSERT_EQ(t->sampler->samples, total);
    ASSERT_TRUE(in_hot(hot->pc));
    uint64_t in_loop = under_hot(t->cct);
    printf("# %llu of %llu work samples in the hot loop or its calls\n",
           (unsigned long long)in_loop, (unsigned long long)total);
    ASSERT_GT(in_loop * 10, total * 9); /* > 90% in the hot loop and its calls */
    /* the caller chain above the leaf holds the thread function */
    bool saw_burner = false;
    for (lb_cct_node_t *n = lb_cct_node(t->cct, hot->parent); n && n->depth;
         n = lb_cct_node(t->cct, n->parent))
        if (n->pc - (uintptr_t)burner < 256)
            saw_burner = true;
    ASSERT_TRUE(saw_burner);
}

static void test_default_event(void)
{
    unsetenv("LOCKBLAME_EVENT");
    unsetenv("LOCKBLAME_FREQ");
    unsetenv("LOCKBLAME_SIGNAL");
    run_burner();
}

static void test_timer_backend(void)
{
    setenv("LOCKBLAME_EVENT", "timer", 1);
    run_burner();
    ASSERT_STR_EQ(lb_sampler_event_name(), "timer:thread-cputime");
}

static void test_freq_env(void)
{
    unsetenv("LOCKBLAME_EVENT");
    setenv("LOCKBLAME_FREQ", "2000", 1);
    run_burner();
    ASSERT_TRUE(lb_sampler_freq() == 2000 || lb_sampler_period() == 500000);
}

/* Quiesce while a thread is still burning: sampling stops for good. */
static volatile int keep_burning = 1;
static void *long_burner(void *arg)
{
    __atomic_store_n((lb_thread_t **)arg, new_record(), __ATOMIC_RELEASE);
    while (keep_burning)
        sink = smoke_hot_spin(10 * 1000000u);
    return NULL;
}

static void test_quiesce_stops_running_thread(void)
{
    unsetenv("LOCKBLAME_EVENT");
    ASSERT_EQ(lb_sampler_setup(), 0);
    lb_thread_t *slot = NULL;
    pthread_t th;
    ASSERT_OK(pthread_create(&th, NULL, long_burner, &slot));
    lb_thread_t *t = attached(&slot);
    while (__atomic_load_n(&t->sampler->samples, __ATOMIC_RELAXED) < 20)
        sched_yield();
    lb_sampler_quiesce();
    ASSERT_EQ(t->sampler->in_handler, 0);
    uint64_t after = t->sampler->samples;
    struct timespec ts = { 0, 100 * 1000000 };
    nanosleep(&ts, NULL);
    ASSERT_EQ(t->sampler->samples, after);
    ASSERT_FALSE(t->sampler->has_perf);
    ASSERT_FALSE(t->sampler->has_timer);
    keep_burning = 0;
    ASSERT_OK(pthread_join(th, NULL));
}

/* After fork the child re-opens its own event and samples itself; the
 * parent's event keeps working. Each burns 200 ms of CPU, and on until
 * it has more than 20 new samples (at most 3 s: see smoke_hot_spin_until). */
static void test_fork_child_resamples(void)
{
    unsetenv("LOCKBLAME_EVENT");
    ASSERT_EQ(lb_sampler_setup(), 0);
    lb_thread_t *t = new_record();
    ASSERT_TRUE(t->sampler->has_perf || t->sampler->has_timer);
    fflush(NULL);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        uint64_t before = t->sampler->samples;
        lb_sampler_after_fork_child(t);
        sink = smoke_hot_spin_until(200 * 1000000u, &t->sampler->samples, before + 21,
                                    3000 * 1000000u);
        lb_sampler_thread_stop(t);
        _exit(t->sampler->samples - before > 20 ? 0 : 3);
    }
    uint64_t before = t->sampler->samples;
    sink = smoke_hot_spin_until(200 * 1000000u, &t->sampler->samples, before + 21, 3000 * 1000000u);
    int st;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    ASSERT_TRUE(WIFEXITED(st));
    ASSERT_EQ(WEXITSTATUS(st), 0);
    ASSERT_GT(t->sampler->samples - before, 20);
    lb_sampler_thread_stop(t);
}

CHECK_MAIN(test_default_event, test_timer_backend, test_freq_env, test_quiesce_stops_running_thread,
           test_fork_child_resamples)
