/* Process-tree workloads for tests/integration/process_trees.sh (and
 * run_daemon.sh), built by that script the way users build (-O2 -g). Each mode prints what it did,
 * so the test compares the database with the program's own account.
 *
 *   contend          two threads contend on a mutex, then exit(0)
 *   _exit STATUS     contend, then _exit(STATUS) (no atexit, no destructors)
 *   segv             contend, then write to an unmapped page
 *   server N         fork N workers that contend; they and the parent all
 *                    exit at the same moment (a pipe closing releases them);
 *                    prints "workers N"
 *   exec             contend, then exec itself in contend mode: two images
 *                    of one process, both recorded
 *   closestderr FILE close stderr, open FILE (it gets fd 2), write one line
 *                    into it, contend
 *   idle             does nothing at all (records nothing)
 *   daemon GO DONE [contend|nowait]
 *                    daemonizes: forks, and the parent (after it contended,
 *                    with "contend") prints "daemon PID" (the child's) and
 *                    exits 0 once the child runs; with "nowait" at once, as
 *                    memcached -d does, and the child stopped (SIGSTOP,
 *                    most likely before it ran at all: SIGCONT goes on);
 *                    the child
 *                    (a new session, its standard descriptors on
 *                    /dev/null) waits for the file GO (60 s at most),
 *                    contends, and last writes its pid into DONE (renamed
 *                    into place, whole)
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long shared;

static void *contend(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20000; i++) {
        pthread_mutex_lock(&lock);
        for (int k = 0; k < 300; k++)
            shared++;
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

static void contend_a_while(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, contend, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
}

/* Workers wait for the pipe to close, so every process exits together. */
static int server(int n)
{
    int go[2];
    if (pipe(go) != 0)
        return 1;
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0)
            return 1;
        if (pid == 0) {
            close(go[1]);
            contend_a_while();
            char c;
            while (read(go[0], &c, 1) > 0)
                ;
            exit(0);
        }
    }
    close(go[0]);
    contend_a_while();
    printf("workers %d\n", n);
    fflush(stdout);
    close(go[1]); /* all workers return from read now; we exit with them */
    return 0;
}

/* The daemon's child: see the header. */
static void daemon_child(const char *go, const char *done)
{
    setsid();
    int null = open("/dev/null", O_RDWR);
    for (int fd = 0; null >= 0 && fd < 3; fd++)
        dup2(null, fd);
    for (int i = 0; i < 6000 && access(go, F_OK) != 0; i++)
        usleep(10000);
    contend_a_while();
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", done);
    FILE *f = fopen(tmp, "w");
    if (f) {
        fprintf(f, "%d\n", (int)getpid());
        fclose(f);
        rename(tmp, done);
    }
}

static int daemonize(const char *go, const char *done, bool parent_contends, bool nowait)
{
    int ready[2];
    if (pipe(ready) != 0)
        return 1;
    if (parent_contends)
        contend_a_while();
    pid_t pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0) {
        close(ready[0]);
        close(ready[1]); /* the parent's read returns: this process runs */
        daemon_child(go, done);
        return 0;
    }
    close(ready[1]);
    if (nowait)
        kill(pid, SIGSTOP);
    char c;
    while (!nowait && read(ready[0], &c, 1) > 0)
        ;
    printf("daemon %d\n", (int)pid);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "contend")) {
        contend_a_while();
        printf("contended %lu\n", shared);
        return 0;
    }
    if (!strcmp(mode, "_exit") && argc > 2) {
        contend_a_while();
        printf("contended %lu\n", shared);
        fflush(stdout);
        _exit(atoi(argv[2]));
    }
    if (!strcmp(mode, "segv")) {
        contend_a_while();
        fflush(stdout);
        /* A page we just unmapped: page 0 may be mappable here. */
        int *volatile gone =
            mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        munmap((void *)gone, 4096);
        *gone = 1;
        return 0;
    }
    if (!strcmp(mode, "server") && argc > 2)
        return server(atoi(argv[2]));
    if (!strcmp(mode, "exec")) {
        contend_a_while();
        printf("contended %lu\n", shared);
        fflush(stdout);
        execl("/proc/self/exe", argv[0], "contend", (char *)NULL);
        perror("execl");
        return 1;
    }
    if (!strcmp(mode, "closestderr") && argc > 2) {
        close(2);
        int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dprintf(fd, "mine fd=%d\n", fd);
        contend_a_while();
        return 0;
    }
    if (!strcmp(mode, "idle"))
        return 0;
    if (!strcmp(mode, "daemon") && argc > 3)
        return daemonize(argv[2], argv[3], argc > 4 && !strcmp(argv[4], "contend"),
                         argc > 4 && !strcmp(argv[4], "nowait"));
    fprintf(stderr,
            "usage: %s contend|_exit N|segv|server N|exec|closestderr FILE|idle|"
            "daemon GO DONE [contend|nowait]\n",
            argv[0]);
    return 2;
}
