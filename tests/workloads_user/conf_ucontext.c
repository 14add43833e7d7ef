/* Coroutines on stacks the program switches itself (makecontext /
 * swapcontext, malloc'd 16 KiB and 64 KiB stacks) taking a mutex that
 * threads on ordinary stacks contend for, so lock, unlock and their
 * blame hand-off run on a coroutine stack. The scheduler swaps coroutines
 * while they hold no lock. */
#include "conf.h"

#include <ucontext.h>

#define COROS   4
#define ROUNDS  300
#define WORKERS 2

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long counter;

typedef struct {
    ucontext_t sched, coro[COROS];
    int finished;
} sched_t;

static __thread sched_t *cur_sched;
static __thread int cur_coro;

static void spin_a_little(void)
{
    for (volatile int i = 0; i < 1000; i++)
        ;
}

static void coro_body(void)
{
    for (int r = 0; r < ROUNDS; r++) {
        errno = 4242;
        int rc = pthread_mutex_lock(&m);
        CONF_EXPECT(rc == 0 && errno == 4242, "lock rc %d errno %d", rc, errno);
        counter++;
        spin_a_little();
        rc = pthread_mutex_unlock(&m);
        CONF_EXPECT(rc == 0 && errno == 4242, "unlock rc %d errno %d", rc, errno);
        swapcontext(&cur_sched->coro[cur_coro], &cur_sched->sched);
    }
    cur_sched->finished++;
    /* returning resumes uc_link: the scheduler */
}

static void run_coroutines(void)
{
    sched_t *s = calloc(1, sizeof *s);
    CONF_EXPECT(s != NULL, "calloc");
    cur_sched = s;
    void *stacks[COROS];
    for (int i = 0; i < COROS; i++) {
        size_t size = i % 2 ? 65536 : 16384;
        stacks[i] = malloc(size);
        getcontext(&s->coro[i]);
        s->coro[i].uc_stack.ss_sp = stacks[i];
        s->coro[i].uc_stack.ss_size = size;
        s->coro[i].uc_link = &s->sched;
        makecontext(&s->coro[i], coro_body, 0);
    }
    /* Round-robin until all are done; a finished coroutine returns to
     * sched through uc_link and is not resumed again. */
    int done[COROS] = { 0 };
    int left = COROS;
    while (left > 0) {
        for (int i = 0; i < COROS; i++) {
            if (done[i])
                continue;
            int before = s->finished;
            cur_coro = i;
            swapcontext(&s->sched, &s->coro[i]);
            if (s->finished != before) {
                done[i] = 1;
                left--;
            }
        }
    }
    for (int i = 0; i < COROS; i++)
        free(stacks[i]);
    free(s);
}

static void *worker(void *arg)
{
    (void)arg;
    run_coroutines();
    return NULL;
}

int main(void)
{
    pthread_t t[WORKERS];
    for (int i = 0; i < WORKERS; i++) {
        int rc = pthread_create(&t[i], NULL, worker, NULL);
        CONF_EXPECT(rc == 0, "create rc %d", rc);
    }
    run_coroutines(); /* the main thread runs coroutines too */
    for (int i = 0; i < WORKERS; i++)
        pthread_join(t[i], NULL);
    long want = (long)(WORKERS + 1) * COROS * ROUNDS;
    CONF_EXPECT(counter == want, "counter %ld, expected %ld", counter, want);
    printf("%d threads x %d coroutines x %d rounds: counter %ld\n", WORKERS + 1, COROS, ROUNDS,
           counter);
    return conf_exit_status();
}
