/*
 * trampoline_pool: threads that all start in one trampoline, which calls
 * each one's task through a pointer (lbzip2 and many C pools do this):
 * two threads run compress_task, one runs write_task, which waits on a
 * cond for their output. --by-thread must tell them apart by the task
 * each ran below the shared start routine.
 *
 * With "coordinator", main runs write_task itself instead of a third
 * thread: the waiting for the blocks is the initial thread's. With
 * "idle", a fourth thread starts in the trampoline with no task and waits
 * there until main ends it, without calling anything of the program: a
 * pool's idle helper (zstd's), with a little CPU time, less than a sample period.
 *
 * Usage: trampoline_pool [coordinator|idle]   (about 0.3 s)
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

struct task {
    void (*fn)(void);
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t produced = PTHREAD_COND_INITIALIZER;
static pthread_cond_t idle_end = PTHREAD_COND_INITIALIZER; /* "idle": the helper's own */
static int ending;
static int blocks, done;
static volatile uint64_t sink;

__attribute__((noinline)) static void compress_task(void)
{
    for (int b = 0; b < 20; b++) {
        for (uint64_t i = 0; i < 3000000; i++)
            sink += i * i;
        pthread_mutex_lock(&lock);
        blocks++;
        pthread_cond_signal(&produced);
        pthread_mutex_unlock(&lock);
    }
    pthread_mutex_lock(&lock);
    done++;
    pthread_cond_signal(&produced);
    pthread_mutex_unlock(&lock);
}

__attribute__((noinline)) static void write_task(void)
{
    pthread_mutex_lock(&lock);
    while (done < 2 || blocks > 0) {
        while (blocks == 0 && done < 2)
            pthread_cond_wait(&produced, &lock);
        if (blocks > 0)
            blocks--;
    }
    pthread_mutex_unlock(&lock);
}

/* the shared start routine; no task: wait, on a cond of its own (one it
 * shared with the writer could take the writer's wake-ups), until main
 * ends it */
__attribute__((noinline)) static void *trampoline(void *arg)
{
    struct task *task = arg;
    if (task->fn) {
        task->fn();
        return NULL;
    }
    for (uint64_t i = 0; i < 300000; i++) /* a little CPU, less than a sample period */
        sink += i;
    pthread_mutex_lock(&lock);
    while (!ending)
        pthread_cond_wait(&idle_end, &lock);
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(int argc, char **argv)
{
    struct task compress = { compress_task }, write = { write_task }, none = { NULL };
    int coordinator = argc > 1 && strcmp(argv[1], "coordinator") == 0;
    int idle = argc > 1 && strcmp(argv[1], "idle") == 0;
    pthread_t t[3], helper;
    if (idle)
        pthread_create(&helper, NULL, trampoline, &none);
    pthread_create(&t[1], NULL, trampoline, &compress);
    pthread_create(&t[2], NULL, trampoline, &compress);
    if (coordinator)
        write_task();
    else
        pthread_create(&t[0], NULL, trampoline, &write);
    for (int i = coordinator; i < 3; i++)
        pthread_join(t[i], NULL);
    if (idle) {
        pthread_mutex_lock(&lock);
        ending = 1;
        pthread_cond_signal(&idle_end);
        pthread_mutex_unlock(&lock);
        pthread_join(helper, NULL);
    }
    return 0;
}
