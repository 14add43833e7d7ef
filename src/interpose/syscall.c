/* libc's syscall(), exported so that the futex waits and wakes that
 * runtimes make through it (C++20 waits and std::future in libstdc++ and
 * its headers, Rust std, GLib) are seen: SYS_futex goes to
 * locks/futex_ops.c, every other number is forwarded untouched after one
 * compare.
 *
 * Like glibc's own syscall(), it reads six long arguments whatever the
 * caller passed (the extra ones are whatever the registers and the stack
 * hold; the kernel ignores those the call does not take) and returns the
 * real call's result with its errno.
 *
 * lockblame's own system calls never come here (util/raw_syscall.h).
 * Bootstrap: a call before lockblame's constructor, or inside dlsym on
 * the resolving thread, is forwarded without monitoring (futex_ops.c: no
 * thread record yet, or the real syscall() not resolved yet: the system
 * call itself). */
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h> /* (its prototype) */

#include "locks/futex_ops.h"
#include "util/common.h"

LB_EXPORT long syscall(long number, ...)
{
    va_list ap;
    va_start(ap, number);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (lb_unlikely(number == SYS_futex))
        return lb_futex_call(a, LB_CALLER());
    return lb_syscall_forward(number, a);
}
