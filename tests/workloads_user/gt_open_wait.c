/*
 * gt_open_wait: a wait still in progress at exit (docs/DESIGN.md rule 4), built
 * -O2 -g. A helper thread waits on a condition variable that nobody ever
 * signals; main computes for DURATION_MS and returns while the helper still
 * waits. The profile, taken at exit, must count the helper's open wait in
 * the waiters' measure (wait_s) as it does in the accrual, so that
 * blame + hand-off + unattributed = wait.
 *
 * Ground truth: "open_wait_min_s", the time from just before the helper's
 * cond wait to just before main returns (the profile is taken after that),
 * and the cond's address.
 *
 * Usage: gt_open_wait [DURATION_MS]   (default 500)
 */
#include "gt.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static atomic_llong wait_start;

static void *helper(void *arg)
{
    pthread_mutex_lock(&m);
    atomic_store(&wait_start, (long long)gt_now());
    for (;;)
        pthread_cond_wait(&never, &m); /* never signalled */
    return arg;
}

int main(int argc, char **argv)
{
    int ms = argc > 1 ? atoi(argv[1]) : 500;
    if (ms < 1) {
        fprintf(stderr, "usage: %s [DURATION_MS]\n", argv[0]);
        return 2;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, helper, NULL))
        gt_die("pthread_create", EAGAIN);
    pthread_detach(t);
    while (!atomic_load(&wait_start))
        sched_yield();
    gt_spin_until(gt_now() + (int64_t)ms * 1000000);
    /* The helper holds no lock while it waits: main may take m. */
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
    int64_t end = gt_now();
    FILE *out = stdout;
    const char *gt = getenv("GROUND_TRUTH");
    if (gt && *gt && !(out = fopen(gt, "w")))
        gt_die(gt, errno);
    fprintf(out,
            "{\"workload\": \"gt_open_wait\", \"object\": \"cond\", \"object_address\": %llu,"
            " \"open_wait_min_s\": %.9f}\n",
            (unsigned long long)(uintptr_t)&never, (double)(end - atomic_load(&wait_start)) / 1e9);
    if (out != stdout)
        fclose(out);
    return 0;
}
