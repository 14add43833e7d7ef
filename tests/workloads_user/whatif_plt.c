/*
 * whatif_plt.c: a release site in a shared library, reached through the
 * PLT (libwhatif_plt.so's plt_update, tests/workloads_user/lib/
 * whatif_plt_lib.c). Two workers call plt_update 1500 times each and
 * work 20 us outside it. With $GT_LOG set, appends "site=plt_update
 * holds=N hold_ns=T" (the library's own count and timing) at exit.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gt_clock.h"

void plt_update(void);
void plt_holds(int64_t *n, int64_t *ns);

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1500; i++) {
        plt_update();
        gt_spin_ns(20000);
    }
    return NULL;
}

int main(void)
{
    pthread_t w[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&w[i], NULL, worker, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(w[i], NULL);
    int64_t n, ns;
    plt_holds(&n, &ns);
    printf("plt: %lld holds at plt_update\n", (long long)n);
    const char *log = getenv("GT_LOG");
    FILE *f = log ? fopen(log, "a") : NULL;
    if (f) {
        fprintf(f, "site=plt_update holds=%lld hold_ns=%lld\n", (long long)n, (long long)ns);
        fclose(f);
    }
    return 0;
}
