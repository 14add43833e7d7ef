/* See stack_bounds.h. */
#include "util/stack_bounds.h"

#include <errno.h>
#include <pthread.h>

LB_TLS lb_stack_bounds_t lb_stack_bounds;

void lb_stack_bounds_init(void)
{
    int saved_errno = errno;
    pthread_attr_t a;
    if (pthread_getattr_np(pthread_self(), &a) == 0) {
        void *lo = NULL;
        size_t size = 0;
        if (pthread_attr_getstack(&a, &lo, &size) == 0 && lo && size) {
            lb_stack_bounds.hi = (uintptr_t)lo + size;
            lb_stack_bounds.lo = (uintptr_t)lo;
        }
        pthread_attr_destroy(&a);
    }
    errno = saved_errno;
}
