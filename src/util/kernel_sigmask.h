/* The signal mask as the kernel takes it in lockblame's direct
 * rt_sigprocmask calls (util/raw_syscall.h): one bit per signal, signal s
 * at bit s - 1, LB_KERNEL_SIGMASK_BYTES long. Built and read without
 * libc's sigset functions, which a fork child would bind, or fault in
 * the pages of, on its first call. */
#ifndef LB_KERNEL_SIGMASK_H
#define LB_KERNEL_SIGMASK_H
#include <signal.h>
#include <stdint.h>

#define LB_KERNEL_SIGMASK_BYTES (_NSIG / 8)
_Static_assert(LB_KERNEL_SIGMASK_BYTES == sizeof(uint64_t), "the kernel's signal mask is 64 bits");

/* signo's bit in such a mask; 0 for a number no signal has. */
static inline uint64_t lb_sig_bit(int signo)
{
    return signo >= 1 && signo <= 64 ? (uint64_t)1 << (signo - 1) : 0;
}
#endif
