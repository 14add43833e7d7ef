/* Dual-representation spin locks (thesis Algorithms 6.2-6.5): the logic
 * behind the exported pthread_spin_* wrappers. */
#ifndef LB_SPIN_OPS_H
#define LB_SPIN_OPS_H
#include <pthread.h>
#include <stdint.h>

int lb_spinlock_init(pthread_spinlock_t *lock, int pshared);
int lb_spinlock_destroy(pthread_spinlock_t *lock);
int lb_spinlock_lock(pthread_spinlock_t *lock, uintptr_t site);
int lb_spinlock_trylock(pthread_spinlock_t *lock, uintptr_t site);
int lb_spinlock_unlock(pthread_spinlock_t *lock, uintptr_t site);
#endif
