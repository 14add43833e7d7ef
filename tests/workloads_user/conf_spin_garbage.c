/* A spin lock whose memory holds 0x41414141 (never initialised) behaves
 * as glibc makes it behave: trylock says EBUSY (only the value 1 is
 * "unlocked" on x86-64), unlock makes it a valid unlocked lock, after
 * which lock/trylock work. The program computes no expectation of its
 * own for the undefined part; the driver compares with native. */
#include "conf.h"

int main(void)
{
    static pthread_spinlock_t locks[4];
    int results[8], n = 0;
    for (int i = 0; i < 4; i++)
        memset((void *)&locks[i], 0x41, sizeof locks[i]);
    results[n++] = pthread_spin_trylock(&locks[0]);
    results[n++] = pthread_spin_trylock(&locks[0]);
    results[n++] = pthread_spin_unlock(&locks[1]);
    results[n++] = pthread_spin_trylock(&locks[1]);
    results[n++] = pthread_spin_trylock(&locks[1]);
    results[n++] = pthread_spin_unlock(&locks[1]);
    results[n++] = pthread_spin_lock(&locks[1]);
    results[n++] = pthread_spin_unlock(&locks[1]);
    printf("garbage trylock, trylock: %s, %s\n", strerror(results[0]), strerror(results[1]));
    printf("after unlock: trylock %s, trylock %s, unlock %d, lock %d, unlock %d\n",
           strerror(results[3]), strerror(results[4]), results[5], results[6], results[7]);
    printf("unlock of garbage: %d\n", results[2]);
    return conf_exit_status();
}
