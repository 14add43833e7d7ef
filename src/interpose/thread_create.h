/* pthread_create with per-thread setup and teardown around the start
 * routine. Returns exactly what the real pthread_create returned. */
#ifndef LB_THREAD_CREATE_H
#define LB_THREAD_CREATE_H
#include <pthread.h>
#include <stdint.h>

int lb_thread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg,
                     uintptr_t site);
#endif
