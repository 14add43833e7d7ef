/*
 * mutex_hot: a hot pthread mutex with two release sites, built -O2 -g.
 * THREADS threads take one mutex in a loop until main stops them. Inside
 * the lock each does CPU work and counts its acquisition and whether the
 * previous one was another thread's (a hand-off); every third hold does
 * LONG_ITERS of work and is released in long_release_site(), the others
 * SHORT_ITERS and release in short_release_site(). So while one thread
 * holds, the others wait, and the idleness they accrue falls on the two
 * sites in proportion to the holds' CPU time at each (2 x 3000 vs 2 x 1000
 * iterations out of every 3 holds by default: ~75% and ~25%). Each hold
 * times itself (CLOCK_MONOTONIC, from the lock's return to just before
 * the unlock), and the workload prints the sums per site: the ground
 * truth for how the blame splits between them. It also sums, per site,
 * the holds that ended with another thread inside pthread_mutex_lock
 * (contended holds: a thread always waits during them, on a busy machine
 * too, where the threads do not always overlap): the waiting during them
 * in wall time (each waiter from its lock call or the hold's start,
 * whichever is later: what exact accounting blames; on a busy machine a
 * waiter often calls late in the hold) and their holders' CPU time (what
 * CPU samples of the holder can see: a holder that other processes keep
 * off its CPU is not sampled; the two reads of its CPU clock are system
 * calls, ~0.5 us each on a VM, whose parts outside the span they time
 * still lie inside the hold, so one read's cost, measured at the start,
 * is added to each hold). And it times how fast its contended holds came: the shortest
 * wall time in which RATE_WINDOW, and in which 2 x RATE_WINDOW,
 * consecutive contended holds ended (RATE_WINDOW is lockblame's
 * LB_SAMPLED_RATE_HOLDS, the holds over which the default mode measures a
 * lock's rate): whether the lock was hot enough to turn sampled, which
 * on a busy machine, where both threads are off their CPUs most of the
 * time, it need not be.
 *
 * Output (stdout, one "key value" a line):
 *   acquisitions N    total acquisitions (checked against the threads' sums)
 *   handoffs H        acquisitions by another thread than the previous one
 *   elapsed_s S       from the start gate to the last join
 *   handoffs_per_s R  H / S
 *   long_hold_s L     the holds released at long_release_site, summed
 *   short_hold_s T    the same for short_release_site
 *   long_contended_s, short_contended_s          the waiting during contended holds
 *   long_contended_cpu_s, short_contended_cpu_s  the same in the holders' CPU time
 *   rate_window_holds N    RATE_WINDOW
 *   fastest_window_s F     the shortest time from the end of a contended
 *                          hold to the end of the (N-1)th contended hold after
 *                          it ("inf" if there were fewer than N)
 *   fastest_2_windows_s F2 the same for 2N consecutive contended holds
 * Exit status 0, or 1 if an update was lost or a call failed.
 *
 * Usage: mutex_hot [THREADS [SECONDS [LONG_ITERS SHORT_ITERS]]]
 *        (default 2 threads, 0.6 s, 6000 and 1000 iterations); the run
 *        lasts SECONDS, or longer on a busy machine (CONTENDED_CPU_NS)
 */
#define HOT_NAME "mutex_hot"
#include "hot_lock.h"

#include "gt_clock.h"

static pthread_mutex_t the_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t work_sink;                  /* under the_lock */
static int64_t long_hold_ns, short_hold_ns; /* under the_lock */
/* the contended holds, in wall and in the holder's CPU time (under the_lock) */
static int64_t long_contended_ns, short_contended_ns, long_contended_cpu_ns, short_contended_cpu_ns;
static int in_lock_call; /* threads inside pthread_mutex_lock (atomic) */
/* when each thread called pthread_mutex_lock, 0 while it is not inside */
static int64_t lock_called_at[HOT_MAX_THREADS + 1]; /* by worker number, 1.. */

/* Under the lock, at the end of a hold [from, to]: the waiting during it,
 * each thread inside pthread_mutex_lock counted from its call or the
 * hold's start, whichever is later. */
static int64_t waiting_during(uintptr_t me, int64_t from, int64_t to)
{
    int64_t sum = 0;
    for (int j = 1; j <= HOT_MAX_THREADS; j++) {
        int64_t since = __atomic_load_n(&lock_called_at[j], __ATOMIC_SEQ_CST);
        if ((uintptr_t)j != me && since && since < to)
            sum += to - (since > from ? since : from);
    }
    return sum;
}

#define RATE_WINDOW 512 /* lockblame's LB_SAMPLED_RATE_HOLDS */
/* The ends of the last 2 x RATE_WINDOW contended holds (a ring indexed by
 * their count), and the shortest spans of RATE_WINDOW and of 2 x
 * RATE_WINDOW of them (all under the_lock). */
static int64_t contended_ends[2 * RATE_WINDOW];
static uint64_t contended_holds;
static int64_t fastest_window_ns = INT64_MAX, fastest_2_windows_ns = INT64_MAX;

/* Under the_lock: a contended hold ended at `end`. */
static void note_contended_end(int64_t end)
{
    uint64_t n = contended_holds++;
    contended_ends[n % (2 * RATE_WINDOW)] = end;
    if (n >= RATE_WINDOW - 1) {
        int64_t span = end - contended_ends[(n - (RATE_WINDOW - 1)) % (2 * RATE_WINDOW)];
        fastest_window_ns = span < fastest_window_ns ? span : fastest_window_ns;
    }
    if (n >= 2 * RATE_WINDOW - 1) {
        int64_t span = end - contended_ends[(n - (2 * RATE_WINDOW - 1)) % (2 * RATE_WINDOW)];
        fastest_2_windows_ns = span < fastest_2_windows_ns ? span : fastest_2_windows_ns;
    }
}

static void print_span(const char *key, int64_t ns)
{
    if (ns == INT64_MAX)
        printf("%s inf\n", key);
    else
        printf("%s %.9f\n", key, (double)ns / 1e9);
}

/* The run goes on past SECONDS until the contended holds have had this
 * much of their holders' CPU time (up to 20 x SECONDS): the samples that
 * can see them are then as many on a busy machine as on an idle one. */
#define CONTENDED_CPU_NS 250000000

static int enough_contended_cpu(void)
{
    return __atomic_load_n(&long_contended_cpu_ns, __ATOMIC_RELAXED) +
               __atomic_load_n(&short_contended_cpu_ns, __ATOMIC_RELAXED) >=
           CONTENDED_CPU_NS;
}

static unsigned long long long_iters = 6000, short_iters = 1000;
static int64_t cpu_read_ns; /* gt_thread_cpu_read_ns, measured in main */

/* Under the lock: one more acquisition, by me, and `iters` of work. */
static inline void hold(uintptr_t me, unsigned long long iters)
{
    count_acquisition(me);
    uint64_t x = work_sink | 1;
    for (unsigned long long i = 0; i < iters; i++)
        x = x * 6364136223846793005u + 1442695040888963407u;
    work_sink = x;
}

/* The two release sites. (Their messages differ so that gcc -O2 cannot
 * fold them into one function: -fipa-icf merges identical bodies.) */
static __attribute__((noinline)) void long_release_site(void)
{
    int rc = pthread_mutex_unlock(&the_lock);
    if (rc)
        die("pthread_mutex_unlock after a long hold", rc);
}

static __attribute__((noinline)) void short_release_site(void)
{
    int rc = pthread_mutex_unlock(&the_lock);
    if (rc)
        die("pthread_mutex_unlock after a short hold", rc);
}

static void *worker(void *arg)
{
    uintptr_t me = (uintptr_t)arg;
    uint64_t mine = 0;
    hot_gate();
    while (!hot_stopped()) {
        __atomic_add_fetch(&in_lock_call, 1, __ATOMIC_SEQ_CST);
        __atomic_store_n(&lock_called_at[me], now_ns(), __ATOMIC_SEQ_CST);
        int rc = pthread_mutex_lock(&the_lock);
        if (rc)
            die("pthread_mutex_lock", rc);
        __atomic_store_n(&lock_called_at[me], 0, __ATOMIC_SEQ_CST);
        __atomic_sub_fetch(&in_lock_call, 1, __ATOMIC_SEQ_CST);
        int64_t held_from = now_ns(), cpu_from = gt_thread_cpu_ns();
        int long_hold = mine % 3 == 0;
        hold(me, long_hold ? long_iters : short_iters);
        /* the hold's CPU time, most of what the holder's samples see: the
         * two reads' parts outside the span (cpu_read_ns) are inside the
         * hold too */
        int64_t cpu = gt_thread_cpu_ns() - cpu_from + cpu_read_ns;
        int64_t held_to = now_ns(), held = held_to - held_from;
        int contended = __atomic_load_n(&in_lock_call, __ATOMIC_SEQ_CST) > 0;
        int64_t waited = contended ? waiting_during(me, held_from, held_to) : 0;
        if (contended)
            note_contended_end(held_to);
        if (long_hold) {
            long_hold_ns += held;
            long_contended_ns += waited;
            __atomic_add_fetch(&long_contended_cpu_ns, contended ? cpu : 0, __ATOMIC_RELAXED);
            long_release_site();
        } else {
            short_hold_ns += held;
            short_contended_ns += waited;
            __atomic_add_fetch(&short_contended_cpu_ns, contended ? cpu : 0, __ATOMIC_RELAXED);
            short_release_site();
        }
        mine++;
    }
    return (void *)(uintptr_t)mine;
}

int main(int argc, char **argv)
{
    int nthreads = argc > 1 ? atoi(argv[1]) : 2;
    double seconds = argc > 2 ? atof(argv[2]) : 0.6;
    if (argc > 4) {
        long_iters = strtoull(argv[3], NULL, 10);
        short_iters = strtoull(argv[4], NULL, 10);
    }
    if (nthreads < 1 || nthreads > HOT_MAX_THREADS || seconds <= 0) {
        fprintf(stderr, "usage: mutex_hot [THREADS [SECONDS [LONG_ITERS SHORT_ITERS]]]\n");
        return 2;
    }
    cpu_read_ns = gt_thread_cpu_read_ns();
    int status = hot_run(nthreads, seconds, worker, enough_contended_cpu);
    if (status == 0) {
        printf("long_hold_s %.9f\n", (double)long_hold_ns / 1e9);
        printf("short_hold_s %.9f\n", (double)short_hold_ns / 1e9);
        printf("long_contended_s %.9f\n", (double)long_contended_ns / 1e9);
        printf("short_contended_s %.9f\n", (double)short_contended_ns / 1e9);
        printf("long_contended_cpu_s %.9f\n", (double)long_contended_cpu_ns / 1e9);
        printf("short_contended_cpu_s %.9f\n", (double)short_contended_cpu_ns / 1e9);
        printf("rate_window_holds %d\n", RATE_WINDOW);
        print_span("fastest_window_s", fastest_window_ns);
        print_span("fastest_2_windows_s", fastest_2_windows_ns);
    }
    return status;
}
