/*
 * mutex_init_reused: pthread_mutex_init on memory that held other data
 * (heap reused for a mutex, as a C++ program's objects do): every word of
 * the mutex first set to a pattern, then the init, a lock/unlock from two
 * threads, a destroy. lockblame keeps its own state in two words of a
 * mutex, so a pattern that looks like its tags there must not be taken
 * for one, whether lockblame runs, is disabled (LOCKBLAME_DISABLE=1) or
 * not loaded. Prints one line per pattern; exit status 0.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *lock_once(void *arg)
{
    pthread_mutex_t *m = arg;
    pthread_mutex_lock(m);
    pthread_mutex_unlock(m);
    return NULL;
}

int main(void)
{
    /* values of a tagged word: an lb_mon's offset with the tag bit, the
     * counted tag, and plain stale data */
    static const uint64_t patterns[] = { 1, 0x41, 0x10001, 2, 6, 0xffff, 0x7f0000001001 };
    for (size_t p = 0; p < sizeof patterns / sizeof patterns[0]; p++) {
        pthread_mutex_t *m = malloc(sizeof *m);
        if (!m)
            return 1;
        for (size_t w = 0; w < sizeof *m / sizeof(uint64_t); w++)
            ((uint64_t *)m)[w] = patterns[p];
        pthread_mutex_init(m, NULL);
        pthread_t t;
        if (pthread_create(&t, NULL, lock_once, m) != 0)
            return 1;
        lock_once(m);
        pthread_join(t, NULL);
        int rc = pthread_mutex_destroy(m);
        printf("pattern %#llx: destroy %d\n", (unsigned long long)patterns[p], rc);
        free(m);
    }
    return 0;
}
