/* A root that forks children one after another, each of which records a
 * wait and ends, while the root watches the run's spool
 * (common/spool.h): for tests/integration/spool_bound.sh, which bounds
 * the spool with LOCKBLAME_SPOOL_MAX.
 * Every process (the root first) runs one episode: a thread holds a
 * mutex until the main thread waits for it in wait_for_holder (blocked,
 * as /proc says), then 5 ms more, so each process has 2 threads and one
 * contended wait at the same call path, on a busy machine too. Before each fork, and after the last child is reaped, the root
 * counts the records in $LOCKBLAME_OUTPUT-spool: the frames of the run's
 * log (*.lblog) and of the sealed logs (*.lbframes), and the records of
 * an earlier build (*.lbrec) (src/common/spool.h).
 *
 *   spool_cap N    prints "root PID", then "child I PID" for each child,
 *                  then "counts C0 C1 ... CN" (the records before child
 *                  I was forked, and after the last), "largest C" and
 *                  "children N"
 * Exit status 0, 1 on a failed call. */
#include <dirent.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gt.h"
#include "tree_procs.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int held;   /* the holder has the lock */
static int coming; /* the main thread is about to lock it */

/* Whether the process's main thread sleeps (state S: blocked). */
static bool main_blocked(void)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)getpid());
    FILE *f = fopen(path, "r");
    if (!f)
        return true; /* cannot tell: the 5 ms below will do */
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    return !p || p[1] != ' ' || p[2] == 'S' || p[2] == 'D';
}

/* Holds the lock until the main thread waits for it (on a busy machine
 * too), then 5 ms more. */
static void *holder(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    __atomic_store_n(&held, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&coming, __ATOMIC_ACQUIRE) || !main_blocked())
        usleep(200);
    usleep(5000);
    pthread_mutex_unlock(&lock);
    return NULL;
}

static __attribute__((noinline)) void wait_for_holder(void)
{
    __atomic_store_n(&coming, 1, __ATOMIC_RELEASE);
    pthread_mutex_lock(&lock);
    pthread_mutex_unlock(&lock);
}

static __attribute__((noinline)) void episode(void)
{
    pthread_t t;
    __atomic_store_n(&held, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&coming, 0, __ATOMIC_RELEASE);
    int rc = pthread_create(&t, NULL, holder, NULL);
    if (rc)
        gt_die("pthread_create", rc);
    while (!__atomic_load_n(&held, __ATOMIC_ACQUIRE))
        usleep(200);
    wait_for_holder();
    pthread_join(t, NULL);
}

/* The frames in the file dir/name: 24-byte headers ("LBFRAME1", the
 * record's length, a checksum) each followed by its record. */
static int frames(const char *dir, const char *name)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0; /* claimed or removed meanwhile */
    int n = 0;
    unsigned char header[24];
    while (fread(header, 1, sizeof header, f) == sizeof header &&
           memcmp(header, "LBFRAME1", 8) == 0) {
        uint64_t length;
        memcpy(&length, header + 8, sizeof length);
        n++;
        if (fseek(f, (long)length, SEEK_CUR) != 0)
            break;
    }
    fclose(f);
    return n;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The records in dir (0 when it is not there). */
static int records(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (ends_with(e->d_name, ".lbrec"))
            n++;
        else if (ends_with(e->d_name, ".lbframes") || ends_with(e->d_name, ".lblog"))
            n += frames(dir, e->d_name);
    closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    const char *db = getenv("LOCKBLAME_OUTPUT");
    int n = argc > 1 ? atoi(argv[1]) : 0;
    if (argc != 2 || n <= 0 || !db) {
        fprintf(stderr, "usage: LOCKBLAME_OUTPUT=DB spool_cap N\n");
        return 1;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s-spool", db);
    int *counts = calloc((size_t)n + 1, sizeof *counts);
    if (!counts)
        gt_die("calloc", ENOMEM);
    printf("root %d\n", (int)getpid());
    episode();
    int largest = 0;
    for (int i = 0; i <= n; i++) {
        counts[i] = records(dir);
        if (counts[i] > largest)
            largest = counts[i];
        if (i == n)
            break;
        pid_t pid = fork_or_die();
        if (pid == 0) {
            episode();
            printf("child %d %d\n", i, (int)getpid());
            return 0;
        }
        reap(pid);
    }
    printf("counts");
    for (int i = 0; i <= n; i++)
        printf(" %d", counts[i]);
    printf("\nlargest %d\nchildren %d\n", largest, n);
    free(counts);
    return 0;
}
