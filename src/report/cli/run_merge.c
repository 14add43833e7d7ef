/* See run_merge.h. */
#include "report/cli/run_merge.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/frame_names.h"
#include "common/idle_cpu.h"
#include "common/spool.h"
#include "report/cli/pending.h"

/* How often the merger looks at the spool; how many pending files (of
 * up to LB_SPOOL_LOG_RECORDS records each) make a batch, the most one
 * transaction adds, or how long the oldest of fewer waits for one: a
 * batch costs its transaction and its statements, whatever it adds, and
 * its CPU is taken from the program's. Fewer are taken at once when the
 * CPUs run may use (its affinity mask) left at least
 * LB_RUN_MERGE_IDLE_CPUS of CPU unused since the last look, and no CPU
 * quota holds them (common/idle_cpu.h): that time costs the program
 * nothing, and what the merger adds then is not left for the program's
 * end, which waits for it (a make whose last jobs leave a CPU idle; a
 * server that waits for its clients). */
#define LB_RUN_MERGE_EVERY_MS         100
#define LB_RUN_MERGE_FILES            4
#define LB_RUN_MERGE_BATCH            (LB_RUN_MERGE_FILES * LB_SPOOL_LOG_RECORDS)
#define LB_RUN_MERGE_LATEST_NS        1000000000ull
#define LB_RUN_MERGE_IDLE_CPUS        0.5
#define LB_RUN_MERGE_LOOK_ALWAYS_CPUS 64

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stop;    /* under lock */
    bool started; /* main thread only */
    pthread_t thread;
    char *path, *run_key;
    /* the merger thread's: the CPUs it may use, their times at the last
     * look, and whether a quota rules the idle ones out */
    cpu_set_t allowed;
    lb_cpu_times_t looked;
    bool looked_valid, idle_unusable, look_always;
} merger = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Wait up to ms or until stopped: whether to go on. */
static bool wait_or_stop(long ms)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&merger.lock);
    while (!merger.stop && pthread_cond_timedwait(&merger.wake, &merger.lock, &until) == 0)
        ;
    bool go_on = !merger.stop;
    pthread_mutex_unlock(&merger.lock);
    return go_on;
}

static bool stopped(void)
{
    pthread_mutex_lock(&merger.lock);
    bool stop = merger.stop;
    pthread_mutex_unlock(&merger.lock);
    return stop;
}

/* Whether the CPUs run may use went partly unused since the last look
 * (false at the first look, under a quota, or where /proc/stat cannot be
 * read). */
static bool cpu_was_idle(void)
{
    lb_cpu_times_t now;
    if (merger.idle_unusable || !lb_cpu_times_read(&merger.allowed, &now)) {
        merger.looked_valid = false;
        return false;
    }
    bool idle =
        merger.looked_valid && lb_cpu_idle_between(&merger.looked, &now) >= LB_RUN_MERGE_IDLE_CPUS;
    merger.looked = now;
    merger.looked_valid = true;
    return idle;
}

/* Whether the spool holds a batch's worth of pending files, or one that
 * has waited long enough, or any while CPU went unused since the last
 * look. /proc/stat is read at every look where the machine has at most
 * LB_RUN_MERGE_LOOK_ALWAYS_CPUS CPUs (~20 us on 2), so that the interval
 * before a file is sealed counts (a make's last jobs leave a CPU idle for
 * less than two looks); on more, where the file grows with the CPUs and
 * idle ones are the rule, only while a file waits, the first look with
 * one starting the interval. */
static bool batch_ready(void)
{
    uint64_t oldest_age;
    unsigned files = lb_spool_sealed(merger.path, merger.run_key, &oldest_age);
    if (!files) {
        if (merger.look_always)
            cpu_was_idle();
        else
            merger.looked_valid = false;
        return false;
    }
    return files >= LB_RUN_MERGE_FILES || oldest_age >= LB_RUN_MERGE_LATEST_NS || cpu_was_idle();
}

/* Until stopped, or until a batch fails: what it could not add waits for
 * the final merge, which says why. */
static void *merge_loop(void *arg)
{
    (void)arg;
    sqlite3 *db = NULL;
    bool failed = false;
    lb_frame_names_keep(true); /* module files read once for the whole run */
    /* (the kernel writes every CPU's line of /proc/stat, whatever the mask) */
    merger.look_always = sysconf(_SC_NPROCESSORS_CONF) <= LB_RUN_MERGE_LOOK_ALWAYS_CPUS;
    merger.idle_unusable =
        sched_getaffinity(0, sizeof merger.allowed, &merger.allowed) != 0 || lb_cpu_quota_limited();
    while (!failed && wait_or_stop(LB_RUN_MERGE_EVERY_MS))
        while (batch_ready() &&
               lb_cli_merge_sealed(&db, merger.path, merger.run_key, LB_RUN_MERGE_BATCH, &failed) &&
               !stopped())
            ;
    if (failed)
        lb_frame_names_keep(false); /* kept for the final merge otherwise */
    sqlite3_close(db);
    return NULL;
}

void lb_run_merge_start(const char *path, const char *run_key)
{
    if (!run_key || !lb_spool_key_ok(run_key))
        return;
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0)
        return;
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC); /* wait_or_stop's deadlines */
    int made = pthread_cond_init(&merger.wake, &attr);
    pthread_condattr_destroy(&attr);
    if (made != 0)
        return;
    merger.path = strdup(path);
    merger.run_key = strdup(run_key);
    sigset_t all, before;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &before); /* the thread starts with every signal blocked */
    merger.started = merger.path && merger.run_key &&
                     pthread_create(&merger.thread, NULL, merge_loop, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &before, NULL);
    if (!merger.started) {
        pthread_cond_destroy(&merger.wake);
        free(merger.path);
        free(merger.run_key);
        merger.path = merger.run_key = NULL;
    }
}

void lb_run_merge_stop(void)
{
    if (!merger.started)
        return;
    pthread_mutex_lock(&merger.lock);
    merger.stop = true;
    pthread_cond_signal(&merger.wake);
    pthread_mutex_unlock(&merger.lock);
    pthread_join(merger.thread, NULL);
    pthread_cond_destroy(&merger.wake);
    merger.started = false;
    free(merger.path);
    free(merger.run_key);
    merger.path = merger.run_key = NULL;
}

void lb_run_merge_release(void)
{
    lb_frame_names_keep(false);
}
