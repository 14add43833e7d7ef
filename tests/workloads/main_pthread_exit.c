/*
 * main_pthread_exit: the main thread leaves by pthread_exit while a worker
 * runs on, and the process ends when the worker returns (exit status 0).
 *
 * main registers a thread-key destructor (it locks a mutex and prints a
 * line: a pthread call after the thread's end) and an atexit handler,
 * starts the worker, computes (spins) for MAIN_MS (default 50 ms), then
 * calls pthread_exit with a value. The worker joins main, checks that
 * value, sleeps WORKER_MS (default 300 ms) more and returns.
 *
 * Ground truth, written by the worker to TRUTH_FILE when it is named:
 * "main_s after_s", main's run from its entry to its pthread_exit call
 * and the worker's from that call to its return (CLOCK_MONOTONIC). Its
 * standard output is the same at every run, traced or not.
 *
 * Usage: main_pthread_exit [TRUTH_FILE [MAIN_MS [WORKER_MS]]]
 */
#include "gt.h"

static int64_t main_entry_ns, main_exit_ns, worker_ns;
static const char *truth_path;
static pthread_t main_thread;
static pthread_key_t key;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

static void key_destructor(void *value)
{
    pthread_mutex_lock(&print_lock);
    printf("main's key destructor ran with %d\n", *(int *)value);
    pthread_mutex_unlock(&print_lock);
}

static void at_exit(void)
{
    printf("atexit handler ran\n");
}

static void *worker(void *arg)
{
    void *main_ret = NULL;
    int rc = pthread_join(main_thread, &main_ret);
    if (rc)
        gt_die("pthread_join", rc);
    int64_t exited = __atomic_load_n(&main_exit_ns, __ATOMIC_ACQUIRE);
    gt_sleep_until(exited + worker_ns);
    int64_t end = gt_now();
    pthread_mutex_lock(&print_lock);
    printf("worker joined main: %ld\n", (long)(intptr_t)main_ret);
    pthread_mutex_unlock(&print_lock);
    if (truth_path) {
        FILE *f = fopen(truth_path, "w");
        if (!f)
            gt_die(truth_path, errno);
        fprintf(f, "%.6f %.6f\n", (double)(exited - main_entry_ns) / 1e9,
                (double)(end - exited) / 1e9);
        fclose(f);
    }
    return arg;
}

int main(int argc, char **argv)
{
    main_entry_ns = gt_now();
    truth_path = argc > 1 ? argv[1] : NULL;
    int64_t main_ns = (argc > 2 ? atoll(argv[2]) : 50) * 1000000;
    worker_ns = (argc > 3 ? atoll(argv[3]) : 300) * 1000000;
    static int key_value = 7;
    int rc = pthread_key_create(&key, key_destructor);
    if (rc)
        gt_die("pthread_key_create", rc);
    pthread_setspecific(key, &key_value);
    atexit(at_exit);
    main_thread = pthread_self();
    pthread_t t;
    rc = pthread_create(&t, NULL, worker, NULL);
    if (rc)
        gt_die("pthread_create", rc);
    pthread_detach(t);
    gt_spin_until(main_entry_ns + main_ns);
    printf("main calls pthread_exit\n");
    fflush(stdout);
    __atomic_store_n(&main_exit_ns, gt_now(), __ATOMIC_RELEASE);
    pthread_exit((void *)(intptr_t)42);
}
