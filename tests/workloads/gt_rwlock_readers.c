/*
 * gt_rwlock_readers: ground truth for rwlock blame shared by readers that
 * hold together (docs/DESIGN.md rule 3: while k threads hold X together, each is
 * blamed 1/k of what accrues).
 *
 * Three readers A, B, C and one writer follow a fixed schedule in rounds of
 * 6 ms (times from the start of the round; the threads sleep to absolute
 * times, so holding costs no CPU):
 *   A  rdlock at 0.0, holds until 4.0, unlocks at reader_a_release
 *   B  rdlock at 0.5, holds until 3.0, unlocks at reader_b_release
 *   W  wrlock at 1.5: waits until all readers have left (~4.0), holds
 *      0.2 ms, unlocks at writer_release_site
 *   C  rdlock at 2.0, while W waits (glibc's default rwlock prefers
 *      readers, so C gets in), holds until 3.5, unlocks at reader_c_release
 * So while W waits, 2, then 3, then 2, then 1 readers hold together. A and
 * B took the lock while nobody waited; C took it while W waited.
 * Per round, ideally: A 0.25+0.333+0.25+0.5 = 1.333 ms, B 0.25+0.333 =
 * 0.583 ms, C 0.333+0.25 = 0.583 ms of W's 2.5 ms wait.
 *
 * Ground truth: every thread logs each lock call [just before, just after
 * it returns] as a wait and each hold [acquired, just before the unlock] at
 * its release site; gt_sweep_holders splits w(t) over the k holders at t.
 *
 * Usage: gt_rwlock_readers [ROUNDS]   (default 150: about 0.9 s)
 */
#include "gt.h"

enum {
    SITE_A,
    SITE_B,
    SITE_C,
    SITE_WRITER,
    N_SITES
};
static const char *const site_names[N_SITES] = { "reader_a_release", "reader_b_release",
                                                 "reader_c_release", "writer_release_site" };

#define US        1000
#define PERIOD_NS (6000 * US)
/* Per thread (index = site): when it locks and when it unlocks, in ns from
 * the start of the round; the writer's unlock is relative to its acquire. */
static const int64_t lock_at[N_SITES] = { 0, 500 * US, 2000 * US, 1500 * US };
static const int64_t unlock_at[N_SITES] = { 4000 * US, 3000 * US, 3500 * US, 200 * US };

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static int64_t start_ns;
static long rounds;

__attribute__((noipa)) void reader_a_release(void);
__attribute__((noipa)) void reader_b_release(void);
__attribute__((noipa)) void reader_c_release(void);
__attribute__((noipa)) void writer_release_site(void);

#define RELEASE(what)                                        \
    do {                                                     \
        int rc_ = pthread_rwlock_unlock(&rw);                \
        if (rc_)                                             \
            gt_die("pthread_rwlock_unlock (" what ")", rc_); \
    } while (0)

void reader_a_release(void)
{
    RELEASE("reader a");
}
void reader_b_release(void)
{
    RELEASE("reader b");
}
void reader_c_release(void)
{
    RELEASE("reader c");
}
void writer_release_site(void)
{
    RELEASE("writer");
}

static void (*const release[N_SITES])(void) = { reader_a_release, reader_b_release,
                                                reader_c_release, writer_release_site };

static struct gt_log *logs;

static void *worker(void *arg)
{
    int site = (int)(intptr_t)arg;
    struct gt_log *lg = &logs[site];
    int writer = site == SITE_WRITER;
    gt_gate_arrive();
    for (long r = 0; r < rounds; r++) {
        int64_t round = start_ns + r * PERIOD_NS;
        gt_sleep_until(round + lock_at[site]);
        int64_t t0 = gt_now();
        int rc = writer ? pthread_rwlock_wrlock(&rw) : pthread_rwlock_rdlock(&rw);
        int64_t t1 = gt_now();
        if (rc)
            gt_die(writer ? "pthread_rwlock_wrlock" : "pthread_rwlock_rdlock", rc);
        gt_log_add(lg, t0, t1, -1);
        gt_sleep_until(writer ? t1 + unlock_at[site] : round + unlock_at[site]);
        gt_log_add(lg, t1, gt_now(), site);
        release[site]();
    }
    return NULL;
}

int main(int argc, char **argv)
{
    rounds = argc > 1 ? atol(argv[1]) : 150;
    if (rounds < 1) {
        fprintf(stderr, "usage: %s [ROUNDS]\n", argv[0]);
        return 2;
    }
    logs = gt_alloc(N_SITES, sizeof *logs);
    for (int i = 0; i < N_SITES; i++)
        gt_log_init(&logs[i], 2 * (size_t)rounds + 8);
    pthread_t tids[N_SITES];
    for (int i = 0; i < N_SITES; i++) {
        int rc = pthread_create(&tids[i], NULL, worker, (void *)(intptr_t)i);
        if (rc)
            gt_die("pthread_create", rc);
    }
    /* Round 0 starts 1 ms after the gate opens. */
    int64_t t0 = gt_gate_open(N_SITES, &start_ns, 1000 * US);
    for (int i = 0; i < N_SITES; i++) {
        int rc = pthread_join(tids[i], NULL);
        if (rc)
            gt_die("pthread_join", rc);
    }
    double duration = (double)(gt_now() - t0) / 1e9;

    struct gt_result res = {
        .workload = "gt_rwlock_readers",
        .object = "rwlock",
        .addresses = { &rw },
        .naddresses = 1,
        .threads = N_SITES,
        .duration_s = duration,
        .nsites = N_SITES,
    };
    for (int s = 0; s < N_SITES; s++)
        res.site_names[s] = site_names[s];
    int max_k = gt_sweep_holders(&res, logs, N_SITES);
    gt_write_json(&res);
    fprintf(stderr, "gt_rwlock_readers: at most %d holders at once\n", max_k);
    if (max_k < 3) {
        fprintf(stderr, "gt_rwlock_readers: the three readers never held together\n");
        return 1;
    }
    return 0;
}
