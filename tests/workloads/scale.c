/*
 * scale: lock and thread churn at scale, natively or under LD_PRELOAD
 * (lock and thread churn at scale). Each mode prints one "result" line with its figures
 * (time, peak RSS from VmHWM) and exits 1 if the work went wrong.
 *
 *   scale locks N LIVE init|calloc [EVERY]
 *       N distinct mutexes, LIVE alive at once in a ring: each one is
 *       allocated, set up, locked (trylock and lock; every EVERYth one,
 *       default 64, 0 = none, contended by a helper thread), unlocked, and later
 *       retired when its slot comes round again.
 *         init:   malloc + pthread_mutex_init ... pthread_mutex_destroy + free
 *         calloc: calloc (a zeroed mutex is PTHREAD_MUTEX_INITIALIZER) ...
 *                 free without destroy (what many programs do)
 *   scale threads N
 *       N threads alive at once (64 KiB stacks), each taking one contended
 *       mutex and waiting at a barrier until all N have started
 *   scale churn N
 *       N short-lived threads created and joined one after another, each
 *       taking a mutex the main thread also takes
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long vm_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    size_t n = strlen(key);
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, n) == 0 && line[n] == ':') {
            kb = atol(line + n + 1);
            break;
        }
    }
    if (f)
        fclose(f);
    return kb;
}

/* ---- locks ---- */

/* A helper thread that contends on the mutex it is handed. */
static pthread_mutex_t *_Atomic handed;
static atomic_int helper_stop, helper_done;
static atomic_long helper_errors;

static void *helper(void *arg)
{
    while (!atomic_load(&helper_stop)) {
        pthread_mutex_t *m = atomic_exchange(&handed, NULL);
        if (!m)
            continue;
        if (pthread_mutex_lock(m) || pthread_mutex_unlock(m))
            atomic_fetch_add(&helper_errors, 1);
        atomic_store(&helper_done, 1);
    }
    return NULL;
}

static int mode_locks(long n, long live, int use_calloc, long every)
{
    pthread_mutex_t **ring = calloc((size_t)live, sizeof *ring);
    pthread_t h;
    pthread_create(&h, NULL, helper, NULL);
    long errors = 0;
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        long k = i % live;
        if (ring[k]) {
            if (!use_calloc && pthread_mutex_destroy(ring[k]))
                errors++;
            free(ring[k]);
        }
        pthread_mutex_t *m;
        if (use_calloc) {
            m = calloc(1, sizeof *m);
        } else {
            m = malloc(sizeof *m);
            if (m && pthread_mutex_init(m, NULL))
                errors++;
        }
        if (!m) {
            printf("out of memory at lock %ld\n", i);
            return 1;
        }
        ring[k] = m;
        if (pthread_mutex_trylock(m) || pthread_mutex_unlock(m))
            errors++;
        if (every > 0 && i % every == 0) {
            /* Hold it while the helper blocks on it: a contended acquisition. */
            if (pthread_mutex_lock(m))
                errors++;
            atomic_store(&helper_done, 0);
            atomic_store(&handed, m);
            for (volatile int spin = 0; spin < 200; spin++)
                ;
            if (pthread_mutex_unlock(m))
                errors++;
            while (!atomic_load(&helper_done))
                sched_yield();
        } else if (pthread_mutex_lock(m) || pthread_mutex_unlock(m)) {
            errors++;
        }
    }
    double t = now_s() - t0;
    atomic_store(&helper_stop, 1);
    pthread_join(h, NULL);
    errors += atomic_load(&helper_errors);
    long hwm = vm_kb("VmHWM"), rss = vm_kb("VmRSS");
    for (long k = 0; k < live; k++) {
        if (ring[k] && !use_calloc)
            pthread_mutex_destroy(ring[k]);
        free(ring[k]);
    }
    free(ring);
    printf("result locks n=%ld live=%ld mode=%s contended_every=%ld time_s=%.3f vmhwm_kb=%ld"
           " vmrss_kb=%ld errors=%ld\n",
           n, live, use_calloc ? "calloc" : "init", every, t, hwm, rss, errors);
    return errors != 0;
}

/* ---- threads alive at once ---- */

static pthread_mutex_t shared_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t all_started;
static volatile long shared_count;

static void *live_thread(void *arg)
{
    pthread_mutex_lock(&shared_m);
    long c = shared_count;
    for (volatile int spin = 0; spin < 2000; spin++)
        ;
    shared_count = c + 1;
    pthread_mutex_unlock(&shared_m);
    pthread_barrier_wait(&all_started);
    return NULL;
}

static int mode_threads(long n)
{
    pthread_t *t = calloc((size_t)n, sizeof *t);
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 64 * 1024);
    pthread_barrier_init(&all_started, NULL, (unsigned)n + 1);
    double t0 = now_s();
    long created = 0;
    for (long i = 0; i < n; i++) {
        int rc = pthread_create(&t[i], &a, live_thread, NULL);
        if (rc) {
            printf("pthread_create failed at thread %ld: %s\n", i, strerror(rc));
            return 1;
        }
        created++;
    }
    pthread_barrier_wait(&all_started); /* all n alive here */
    long hwm_live = vm_kb("VmHWM");
    for (long i = 0; i < created; i++)
        pthread_join(t[i], NULL);
    double secs = now_s() - t0;
    printf("result threads n=%ld count=%ld time_s=%.3f vmhwm_kb=%ld\n", n, shared_count, secs,
           hwm_live);
    return shared_count != n;
}

/* ---- short-lived threads in turn ---- */

static void *short_thread(void *arg)
{
    pthread_mutex_lock(&shared_m);
    shared_count++;
    pthread_mutex_unlock(&shared_m);
    return NULL;
}

static int mode_churn(long n)
{
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        pthread_t t;
        int rc = pthread_create(&t, NULL, short_thread, NULL);
        if (rc) {
            printf("pthread_create failed at thread %ld: %s\n", i, strerror(rc));
            return 1;
        }
        pthread_mutex_lock(&shared_m); /* sometimes contended with the new thread */
        shared_count++;
        pthread_mutex_unlock(&shared_m);
        pthread_join(t, NULL);
    }
    double t = now_s() - t0;
    printf("result churn n=%ld count=%ld time_s=%.3f vmhwm_kb=%ld vmrss_kb=%ld\n", n, shared_count,
           t, vm_kb("VmHWM"), vm_kb("VmRSS"));
    return shared_count != 2 * n;
}

int main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "locks") == 0)
        return mode_locks(atol(argv[2]), atol(argv[3]), strcmp(argv[4], "calloc") == 0,
                          argc > 5 ? atol(argv[5]) : 64);
    if (argc >= 3 && strcmp(argv[1], "threads") == 0)
        return mode_threads(atol(argv[2]));
    if (argc >= 3 && strcmp(argv[1], "churn") == 0)
        return mode_churn(atol(argv[2]));
    fprintf(stderr, "usage: %s locks N LIVE init|calloc | threads N | churn N\n", argv[0]);
    return 2;
}
