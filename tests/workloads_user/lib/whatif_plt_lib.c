/*
 * whatif_plt_lib.c: libwhatif_plt.so, the library whatif_gt's plt program
 * calls. Its plt_update holds one mutex for the CPU work its caller asks
 * for (gt_work) and releases it by a tail jump to pthread_mutex_unlock (at -O2 the
 * unlock ends the function), so the release returns into whatif_gt,
 * which called plt_update through its PLT: the release site is a
 * function of another module, reached through a stub. The caller names
 * the hold's length, so that whatif_gt_fixed shortens it with no second
 * build of the library. The library counts and times its holds.
 */
#include <pthread.h>
#include <stdint.h>

#include "gt_clock.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t holds, hold_ns; /* under lock */

__attribute__((visibility("default"))) void plt_update(int64_t work_ns)
{
    pthread_mutex_lock(&lock);
    int64_t t = gt_now();
    gt_work(work_ns);
    holds++;
    hold_ns += gt_now() - t;
    pthread_mutex_unlock(&lock);
}

__attribute__((visibility("default"))) void plt_holds(int64_t *n, int64_t *ns)
{
    *n = holds;
    *ns = hold_ns;
}
