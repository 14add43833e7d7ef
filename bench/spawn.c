/* Run a command, pass its stdout through, and time it from outside:
 *
 *   spawn [NAME=VALUE...] PROG [ARGS...]
 *     prints the child's stdout, then
 *       spawn_wall_s W     fork to reaped exit (CLOCK_MONOTONIC)
 *       spawn_exit_ms E    if the child printed "end_mono_ns T" (its last
 *                          instruction in main): T to reaped exit
 *       spawn_status S     the exit status (or 128+signal)
 *
 * The NAME=VALUE pairs are set in the child only, so LD_PRELOAD given that
 * way profiles the program and not this timer. The child's stderr is left
 * alone. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

int main(int argc, char **argv)
{
    int first = 1;
    while (first < argc && strchr(argv[first], '=') && argv[first][0] != '=' &&
           argv[first][0] != '/' && argv[first][0] != '.')
        first++;
    if (first >= argc) {
        fprintf(stderr, "usage: %s [NAME=VALUE...] PROG [ARGS...]\n", argv[0]);
        return 2;
    }
    int fds[2];
    if (pipe(fds) < 0)
        return 1;
    long long t0 = bench_now_ns();
    pid_t pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0) {
        for (int i = 1; i < first; i++)
            putenv(argv[i]);
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execvp(argv[first], argv + first);
        perror("spawn: exec");
        _exit(127);
    }
    close(fds[1]);
    static char buf[1 << 16];
    size_t len = 0;
    ssize_t r;
    while ((r = read(fds[0], buf + len, sizeof buf - 1 - len)) > 0) {
        fwrite(buf + len, 1, (size_t)r, stdout);
        len += (size_t)r;
        if (len >= sizeof buf - 1)
            len = 0; /* only the tail matters */
    }
    int status;
    waitpid(pid, &status, 0);
    long long t1 = bench_now_ns();
    buf[len] = '\0';
    printf("spawn_wall_s %.6f\n", (double)(t1 - t0) / 1e9);
    const char *p = strstr(buf, "end_mono_ns ");
    if (p)
        printf("spawn_exit_ms %.3f\n", (double)(t1 - atoll(p + 12)) / 1e6);
    printf("spawn_status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    return 0;
}
