/* Futex words that programs wait on and wake through libc's syscall()
 * (C++20's atomic waits, latch, barrier, counting_semaphore and
 * std::future; Rust std's Mutex, Condvar, RwLock, Barrier and thread
 * parking; GLib's GMutex, GCond and everything built on them).
 *
 * A word's waits accrue on its lb_mon (kind futex, keyed by the word's
 * address in the object map, so that a wake blames only the waits on its
 * own word), and a wake takes the idleness accrued since the previous
 * wake on that word, as a condition variable's signal does (docs/DESIGN.md
 * rule 3). Every function returns what the real syscall() returned, with
 * errno as it left it. */
#ifndef LB_FUTEX_OPS_H
#define LB_FUTEX_OPS_H
#include <stdint.h>

/* syscall(SYS_futex, a[0] .. a[5]) called from site: waits
 * (FUTEX_WAIT, FUTEX_WAIT_BITSET) are timed, wakes (FUTEX_WAKE,
 * FUTEX_WAKE_BITSET) blamed, every other operation forwarded untouched. */
long lb_futex_call(const long a[6], uintptr_t site);
/* The real syscall(number, a[0] .. a[5]): libc's (or the next
 * interposer's), or while that is not resolved yet the system call itself
 * (util/raw_syscall.h). */
long lb_syscall_forward(long number, const long a[6]);
#endif
