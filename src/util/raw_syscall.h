/* lockblame's own system calls, issued directly (x86-64 `syscall`).
 *
 * The library exports a wrapper of libc's syscall() (interpose/syscall.c),
 * and a call to syscall() from inside the library binds to that exported
 * wrapper like any other caller's. The library's own calls (its futex
 * waits and wakes on a monitored mutex, reading /sys and /proc files, the
 * sampler's perf_event_open and rt_sigtimedwait) must not be counted as
 * the program's futex waits, nor pay the wrapper, nor depend on the real
 * syscall() being resolved: they come here instead. Also the wrapper's own
 * forwarding while the real syscall() is not resolved yet (bootstrap).
 *
 * lb_raw_syscall follows glibc's syscall() contract exactly: the kernel's
 * result, or -1 with errno set to the error. No state; safe in signal
 * handlers (errno is the only thing it writes). */
#ifndef LB_RAW_SYSCALL_H
#define LB_RAW_SYSCALL_H
#include <errno.h>

static inline long lb_raw_syscall(long number, long a1, long a2, long a3, long a4, long a5, long a6)
{
    long ret;
    register long r10 __asm__("r10") = a4;
    register long r8 __asm__("r8") = a5;
    register long r9 __asm__("r9") = a6;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(number), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    if ((unsigned long)ret > -4096UL) {
        errno = (int)-ret;
        return -1;
    }
    return ret;
}
#endif
