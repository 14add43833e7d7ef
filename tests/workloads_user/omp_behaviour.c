/* omp_behaviour: what the OpenMP entry points return and do, printed, so
 * that a run under lockblame can be compared with a native one (gcc
 * -fopenmp -O2 -g). Every line is deterministic: results of omp_test_lock
 * and omp_test_nest_lock in fixed orders (the threads take turns through
 * barriers), nest depths, counters updated inside critical sections
 * and locks by threads that contend for them, and sections' results. */
#include <omp.h>
#include <stdio.h>

#define NTHREADS 4
#define ROUNDS   2000

static omp_lock_t lock;
static omp_nest_lock_t nest;
static long in_critical, in_named, in_lock, in_nest;

int main(void)
{
    omp_init_lock(&lock);
    omp_init_nest_lock(&nest);
    int r[8] = { 0 };
#pragma omp parallel num_threads(2)
    {
        int me = omp_get_thread_num();
        if (me == 0) {
#pragma omp parallel num_threads(2) /* nested: a team of one, by default */
            {
#pragma omp barrier
                r[7] = omp_get_num_threads();
            }
            omp_set_nest_lock(&nest);
            omp_set_nest_lock(&nest);
            r[0] = omp_test_nest_lock(&nest); /* 3: the owner nests */
            r[1] = omp_test_lock(&lock);      /* 1: free */
        }
#pragma omp barrier
        if (me == 1) {
            r[2] = omp_test_nest_lock(&nest); /* 0: thread 0 owns it */
            r[3] = omp_test_lock(&lock);      /* 0: held */
        }
#pragma omp barrier
        if (me == 0) {
            omp_unset_nest_lock(&nest);
            omp_unset_nest_lock(&nest);
            omp_unset_nest_lock(&nest); /* free again */
            omp_unset_lock(&lock);
        }
#pragma omp barrier
        if (me == 1) {
            r[4] = omp_test_nest_lock(&nest); /* 1 */
            r[5] = omp_test_nest_lock(&nest); /* 2 */
            omp_unset_nest_lock(&nest);
            omp_unset_nest_lock(&nest);
            r[6] = omp_test_lock(&lock); /* 1 */
            omp_unset_lock(&lock);
        }
    }
    printf("tests: %d %d %d %d %d %d %d, nested team %d\n", r[0], r[1], r[2], r[3], r[4], r[5],
           r[6], r[7]);

    long sum = 0;
#pragma omp parallel num_threads(NTHREADS) reduction(+ : sum)
    {
        for (int i = 0; i < ROUNDS; i++) {
#pragma omp critical
            in_critical++;
#pragma omp critical(named)
            in_named++;
            omp_set_lock(&lock);
            in_lock++;
            omp_unset_lock(&lock);
            omp_set_nest_lock(&nest);
            omp_set_nest_lock(&nest);
            in_nest++;
            omp_unset_nest_lock(&nest);
            omp_unset_nest_lock(&nest);
        }
#pragma omp barrier
#pragma omp for schedule(dynamic, 7)
        for (int i = 0; i < 1000; i++)
            sum += i;
    }
    printf("counts: %ld %ld %ld %ld, sum %ld\n", in_critical, in_named, in_lock, in_nest, sum);

    int done[4] = { 0 };
#pragma omp parallel sections num_threads(2)
    {
#pragma omp section
        done[0] = 1;
#pragma omp section
        done[1] = 2;
    }
#pragma omp parallel num_threads(2)
    {
#pragma omp sections
        {
#pragma omp section
            done[2] = 3;
#pragma omp section
            done[3] = 4;
        }
    }
    printf("sections: %d %d %d %d\n", done[0], done[1], done[2], done[3]);
    omp_destroy_lock(&lock);
    omp_destroy_nest_lock(&nest);
    return 3; /* an exit status of its own, which must come through */
}
