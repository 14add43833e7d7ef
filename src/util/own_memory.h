/* Reading our own address space where the memory may already be gone
 * (a lock freed and unmapped by the program): process_vm_readv on our pid
 * returns an error instead of faulting. Not for the signal handler's hot
 * path (a system call); fine in sweeps and at the final write. */
#ifndef LB_OWN_MEMORY_H
#define LB_OWN_MEMORY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <unistd.h>

/* Copy len bytes at addr into out; false (out untouched or partial) if
 * any of them is unreadable. */
static inline bool lb_read_own(const void *addr, void *out, size_t len)
{
    struct iovec local = { out, len };
    struct iovec remote = { (void *)addr, len };
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len;
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
    return process_vm_writev(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len;
}
#endif
