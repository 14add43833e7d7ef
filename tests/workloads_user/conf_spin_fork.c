/* pthread_spin_init/2-2: a process-private spin lock in shared memory,
 * locked by the parent before fork, then used by the child (undefined by
 * POSIX; glibc simply works on the shared word). The child's trylock
 * fails while the parent holds it and succeeds after the parent unlocks. */
#include "conf.h"

#include <sys/mman.h>
#include <sys/wait.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    pthread_spinlock_t *lock =
        mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CONF_EXPECT(lock != MAP_FAILED, "mmap");
    pthread_spin_init(lock, PTHREAD_PROCESS_PRIVATE);
    /* Used once unlocked and locked, so a profiler has seen it. */
    pthread_spin_lock(lock);
    pthread_spin_unlock(lock);
    int rc = pthread_spin_lock(lock);
    printf("parent lock: %d\n", rc);
    int to_child[2], to_parent[2];
    CONF_EXPECT(pipe(to_child) == 0 && pipe(to_parent) == 0, "pipe");
    pid_t pid = fork();
    if (pid == 0) {
        char c;
        int r1 = pthread_spin_trylock(lock);
        printf("child trylock while the parent holds it: %s\n", r1 == 0 ? "0" : strerror(r1));
        (void)!write(to_parent[1], "x", 1);
        (void)!read(to_child[0], &c, 1); /* parent has unlocked */
        int r2 = pthread_spin_trylock(lock);
        printf("child trylock after the parent unlocked: %s\n", r2 == 0 ? "0" : strerror(r2));
        if (r2 == 0)
            pthread_spin_unlock(lock);
        _exit(r1 == EBUSY && r2 == 0 ? 0 : 1);
    }
    char c;
    (void)!read(to_parent[0], &c, 1);
    rc = pthread_spin_unlock(lock);
    printf("parent unlock: %d\n", rc);
    (void)!write(to_child[1], "x", 1);
    int st = 0;
    waitpid(pid, &st, 0);
    CONF_EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status 0x%x", st);
    rc = pthread_spin_trylock(lock);
    printf("parent trylock after the child: %s\n", rc == 0 ? "0" : strerror(rc));
    return conf_exit_status();
}
