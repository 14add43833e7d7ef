/* A plugin whose threads contend on a mutex: loaded by tests/dl/host.c,
 * which runs it and unloads it (dlclose) before exiting
 * (tests/integration/dlclose_names.sh). */
#include <pthread.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long sink;
__attribute__((noinline)) static void plugin_hold(void)
{
    pthread_mutex_lock(&m);
    for (unsigned long i = 0; i < 2000000; i++)
        sink += i;
    pthread_mutex_unlock(&m);
}
static void *plugin_thread(void *a)
{
    for (int i = 0; i < 40; i++)
        plugin_hold();
    return a;
}
void plugin_run(void)
{
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], 0, plugin_thread, 0);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], 0);
}
