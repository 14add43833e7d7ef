/* pthread_join / pthread_timedjoin_np with join blame. Returns what the
 * real call returned. */
#ifndef LB_JOIN_OPS_H
#define LB_JOIN_OPS_H
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

int lb_thread_join(pthread_t thread, void **ret, const struct timespec *abstime, bool timed,
                   uintptr_t site);
#endif
