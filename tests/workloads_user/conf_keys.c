/* pthread_key_create/speculative/5-1: the program can create
 * PTHREAD_KEYS_MAX keys, even after lockblame has unwound (contended
 * locks with blame to hand on, on several threads). */
#include "conf.h"

#include <limits.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long counter;

static void *contend(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2000; i++) {
        pthread_mutex_lock(&m);
        for (volatile int k = 0; k < 200; k++)
            ;
        counter++;
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, contend, NULL);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    static pthread_key_t keys[PTHREAD_KEYS_MAX + 1];
    int n = 0, rc = 0;
    while (n < PTHREAD_KEYS_MAX + 1 && (rc = pthread_key_create(&keys[n], NULL)) == 0)
        n++;
    CONF_EXPECT(n >= PTHREAD_KEYS_MAX, "only %d keys created (PTHREAD_KEYS_MAX %d): %s", n,
                PTHREAD_KEYS_MAX, strerror(rc));
    printf("keys created: %s%d (PTHREAD_KEYS_MAX %d)\n", n >= PTHREAD_KEYS_MAX ? "at least " : "",
           n >= PTHREAD_KEYS_MAX ? PTHREAD_KEYS_MAX : n, PTHREAD_KEYS_MAX);
    printf("counter %ld\n", counter);
    return conf_exit_status();
}
