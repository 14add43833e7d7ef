/*
 * cond_release_counts: where a mutex's releases are counted. A consumer
 * takes ITEMS items from a one-slot box, waiting for each on a condition
 * variable in wait_for_item() (a cond wait releases the box's mutex there)
 * and unlocking in take_item(); the producer fills the box in put_item().
 * The workload counts its own calls and prints them:
 *   "cond_waits N"  pthread_cond_wait calls in wait_for_item
 *   "put_waits N"   those in put_item (the box still full)
 *   "take_unlocks N", "put_unlocks N"  pthread_mutex_unlock calls
 * Built -O2 -g like a user's program; the three functions stay out of
 * line so that each call site has a function of its own.
 *
 * Usage: cond_release_counts [ITEMS]   (default 2000)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t box_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t box_changed = PTHREAD_COND_INITIALIZER;
static int full;
static long cond_waits, put_waits, take_unlocks, put_unlocks;

__attribute__((noinline)) static void wait_for_item(void)
{
    while (!full) {
        cond_waits++;
        pthread_cond_wait(&box_changed, &box_lock);
    }
}

__attribute__((noinline)) static void take_item(void)
{
    pthread_mutex_lock(&box_lock);
    wait_for_item();
    full = 0;
    pthread_cond_signal(&box_changed);
    take_unlocks++;
    pthread_mutex_unlock(&box_lock);
}

__attribute__((noinline)) static void put_item(void)
{
    pthread_mutex_lock(&box_lock);
    while (full) {
        put_waits++;
        pthread_cond_wait(&box_changed, &box_lock);
    }
    full = 1;
    pthread_cond_signal(&box_changed);
    put_unlocks++;
    pthread_mutex_unlock(&box_lock);
}

static long items = 2000;

static void *consumer(void *arg)
{
    for (long i = 0; i < items; i++)
        take_item();
    return arg;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        items = atol(argv[1]);
    if (items < 1) {
        fprintf(stderr, "usage: %s [ITEMS]\n", argv[0]);
        return 2;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, consumer, NULL))
        return 1;
    for (long i = 0; i < items; i++)
        put_item();
    pthread_join(t, NULL);
    printf("cond_waits %ld\nput_waits %ld\ntake_unlocks %ld\nput_unlocks %ld\n", cond_waits,
           put_waits, take_unlocks, put_unlocks);
    return 0;
}
