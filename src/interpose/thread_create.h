/* pthread_create with per-thread setup and teardown around the start
 * routine. Returns exactly what the real pthread_create returned. */
#ifndef LB_THREAD_CREATE_H
#define LB_THREAD_CREATE_H
#include <pthread.h>
#include <stdint.h>

int lb_thread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg,
                     uintptr_t site);
/* pthread_exit: ends the initial thread's record (lb_thread_detach), as
 * the trampoline's cleanup ends a started thread's, then exits the thread
 * with the real pthread_exit. */
__attribute__((noreturn)) void lb_thread_exit(void *ret);
#endif
