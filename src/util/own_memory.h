/* Reading our own address space where the memory may already be gone
 * (a lock freed and unmapped by the program): process_vm_readv on our pid
 * returns an error instead of faulting. The pid is lb_own_pid's (no
 * getpid() a call; util/proc_numbers.h says which children it is not
 * exact in). Not for the signal handler's hot path (a system call); fine
 * in sweeps and at the final write. */
#ifndef LB_OWN_MEMORY_H
#define LB_OWN_MEMORY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <unistd.h>

#include "util/proc_numbers.h"

/* Copy len bytes at addr into out; false (out untouched or partial) if
 * any of them is unreadable. */
static inline bool lb_read_own(const void *addr, void *out, size_t len)
{
    struct iovec local = { out, len };
    struct iovec remote = { (void *)addr, len };
    return process_vm_readv(lb_own_pid(), &local, 1, &remote, 1, 0) == (ssize_t)len;
}

/* Copy into out as much of the len bytes at addr as is readable from
 * addr on, up to the first page that is not; returns how many bytes (0
 * also when the call is refused, as a sandbox may). process_vm_readv stops
 * at the first unreadable element of its list, and copies an element
 * whole or not at all: so one element a page. */
static inline size_t lb_read_own_prefix(const void *addr, void *out, size_t len)
{
    enum {
        PAGE = 4096,
        PIECES = 8
    };
    struct iovec local = { out, len }, remote[PIECES];
    uintptr_t at = (uintptr_t)addr, end = at + len;
    int n = 0;
    while (at < end && n < PIECES) {
        uintptr_t next = (at & ~(uintptr_t)(PAGE - 1)) + PAGE;
        remote[n++] = (struct iovec){ (void *)at, (next < end ? next : end) - at };
        at = next;
    }
    local.iov_len = at - (uintptr_t)addr; /* at most PIECES pages of it */
    ssize_t got = process_vm_readv(lb_own_pid(), &local, 1, remote, (unsigned long)n, 0);
    return got > 0 ? (size_t)got : 0;
}

/* One pointer-sized word at addr into *v; false if unreadable. */
static inline bool lb_read_own_word(uintptr_t addr, uintptr_t *v)
{
    return lb_read_own((const void *)addr, v, sizeof *v);
}

/* The same for writing: false, and nothing written, where addr is not
 * mapped writable. */
static inline bool lb_write_own(void *addr, const void *in, size_t len)
{
    struct iovec local = { (void *)in, len };
    struct iovec remote = { addr, len };
    return process_vm_writev(lb_own_pid(), &local, 1, &remote, 1, 0) == (ssize_t)len;
}
#endif
