/* mmap and munmap: the program's shared mappings of files, whose
 * process-shared objects are named across the tree by file and offset
 * (blame/shared_keys.h). Forwarded unchanged; the bookkeeping runs after
 * a successful shared file mapping and after an unmapping, never for an
 * anonymous or private one (malloc's own mappings do not come here:
 * glibc maps through its internal call, and lockblame through
 * util/raw_mmap.h).
 *
 * Invariants: the real functions are looked up once
 * (util/next_symbol.h); errno and the results are the real calls'. */
#include <errno.h>
#include <sys/mman.h>

#include "blame/shared_keys.h"
#include "blame/shared_objs.h"
#include "util/common.h"
#include "util/next_symbol.h"

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*munmap_fn)(void *, size_t);

LB_NEXT_SYMBOL(real_mmap, "mmap");
LB_NEXT_SYMBOL(real_munmap, "munmap");

static void *mapped(void *p, size_t len, int flags, int fd, off_t off)
{
    if (p != MAP_FAILED && fd >= 0 && (flags & MAP_SHARED) && !(flags & MAP_ANONYMOUS)) {
        int saved_errno = errno;
        lb_shared_file_mapped(p, len, fd, off);
        errno = saved_errno;
    }
    return p;
}

LB_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    mmap_fn fn = (mmap_fn)lb_next_symbol(&real_mmap);
    return mapped(fn(addr, len, prot, flags, fd, off), len, flags, fd, off);
}

LB_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return mmap(addr, len, prot, flags, fd, off);
}

LB_EXPORT int munmap(void *addr, size_t len)
{
    munmap_fn fn = (munmap_fn)lb_next_symbol(&real_munmap);
    int rc = fn(addr, len);
    if (rc == 0) {
        int saved_errno = errno;
        lb_shared_keys_unmapped(addr, len);
        errno = saved_errno;
    }
    return rc;
}
