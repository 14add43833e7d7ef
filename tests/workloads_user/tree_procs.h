/* Forking and reaping for the process-tree workloads (spool_tree.c,
 * names_tree.c): a fork that flushes stdout first, so that no child
 * prints its parent's buffered lines again, and a reap that ends the
 * program (status 1, one line naming the child) unless the child exited 0. */
#ifndef TREE_PROCS_H
#define TREE_PROCS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gt.h"

__attribute__((unused)) static pid_t fork_or_die(void)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        gt_die("fork", errno);
    return pid;
}

__attribute__((unused)) static void reap(pid_t pid)
{
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "%s: child %d failed\n", program_invocation_short_name, (int)pid);
        exit(1);
    }
}

#endif
