/* lockblame's own mappings, made by direct system calls.
 *
 * The library exports wrappers of mmap and munmap (interpose/mmap.c:
 * the program's shared file mappings name its process-shared objects), and
 * a call to mmap() from inside the library binds to that exported wrapper
 * like any other caller's. The library's own mappings (its pages, stacks,
 * perf rings, the tree's shared table) are not the program's, must not
 * pay the wrapper, and are made from the sampler's signal handler too:
 * they come here. Same contract as glibc's calls (MAP_FAILED or -1 with
 * errno); no state, safe in signal handlers. */
#ifndef LB_RAW_MMAP_H
#define LB_RAW_MMAP_H
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include "util/raw_syscall.h"

static inline void *lb_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    long p = lb_raw_syscall(SYS_mmap, (long)addr, (long)len, prot, flags, fd, (long)off);
    return p == -1 ? MAP_FAILED : (void *)p;
}

static inline int lb_munmap(void *addr, size_t len)
{
    return (int)lb_raw_syscall(SYS_munmap, (long)addr, (long)len, 0, 0, 0, 0);
}

/* mprotect and madvise have no wrapper to avoid, but a fork child that
 * called libc's would bind the call and fault in its page of libc's code
 * at its exit write (util/own_stack.c). */
static inline int lb_mprotect(void *addr, size_t len, int prot)
{
    return (int)lb_raw_syscall(SYS_mprotect, (long)addr, (long)len, prot, 0, 0, 0);
}

static inline int lb_madvise(void *addr, size_t len, int advice)
{
    return (int)lb_raw_syscall(SYS_madvise, (long)addr, (long)len, advice, 0, 0, 0);
}
#endif
