/* sem_open and sem_close: a named semaphore lives in a file of the POSIX
 * shared memory directory (/dev/shm/sem.NAME), which glibc maps itself
 * through its internal mmap, so interpose/mmap.c never sees it. After a
 * successful sem_open the semaphore's address is entered in the table of
 * shared file mappings (blame/shared_keys.h) with the file's identity and
 * offset 0, so that every process of the tree that opens the same name,
 * exec'd or not, names the semaphore alike and shares its record
 * (blame/shared_objs.h). After a sem_close that unmapped it (glibc counts
 * a process's opens of one name and unmaps at the last close), the range
 * leaves the table.
 *
 * Invariants: the real functions are looked up once
 * (util/next_symbol.h); the results and errno are the real calls'. The
 * file is found by its name after the real call: a name unlinked and
 * created again by another process in between gives another file's
 * identity, and the semaphore then keeps a key of this process only (as
 * it did before the table knew named semaphores). Whether this call
 * created the semaphore is read from its file's absence before the call:
 * two processes that race to create one name with O_CREAT (no O_EXCL)
 * may both start its record, the second resetting it before any wait. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blame/shared_keys.h"
#include "blame/shared_objs.h"
#include "core/thread.h"
#include "util/common.h"
#include "util/next_symbol.h"

#define LB_SEM_DIR "/dev/shm/sem." /* glibc's: its shm directory and the "sem." prefix */

typedef sem_t *(*sem_open_fn)(const char *, int, ...);
typedef int (*sem_close_fn)(sem_t *);

LB_NEXT_SYMBOL(real_sem_open, "sem_open");
LB_NEXT_SYMBOL(real_sem_close, "sem_close");

/* name's file in path; false if it does not fit. */
static bool sem_path(const char *name, char path[PATH_MAX])
{
    while (*name == '/')
        name++;
    int n = snprintf(path, PATH_MAX, "%s%s", LB_SEM_DIR, name);
    return n > 0 && n < PATH_MAX;
}

/* The semaphore glibc mapped from path: its file enters the table, and
 * its record is made (reset, if this call created it) or found. */
static void named_sem_mapped(sem_t *sem, const char *path, bool created)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size < sizeof *sem)
        return;
    lb_shared_file_identified(sem, sizeof *sem, st.st_dev, st.st_ino, 0);
    if (!lb_self)
        return; /* before the library's start: the key only */
    if (created)
        lb_shared_register(sem, LB_OBJ_SEM, 0);
    else
        lb_shared_open(sem, LB_OBJ_SEM);
}

LB_EXPORT sem_t *sem_open(const char *name, int oflag, ...)
{
    sem_open_fn fn = (sem_open_fn)lb_next_symbol(&real_sem_open);
    mode_t mode = 0;
    unsigned value = 0;
    if (oflag & O_CREAT) {
        va_list ap;
        va_start(ap, oflag);
        mode = va_arg(ap, mode_t);
        value = va_arg(ap, unsigned);
        va_end(ap);
    }
    char path[PATH_MAX];
    bool named = sem_path(name, path);
    struct stat before;
    int saved_errno = errno;
    /* a file that was not there before the call is one this call made */
    bool existed = !named || !(oflag & O_CREAT) || stat(path, &before) == 0;
    errno = saved_errno;
    sem_t *sem = fn(name, oflag, mode, value);
    if (sem != SEM_FAILED && named) {
        saved_errno = errno;
        named_sem_mapped(sem, path, !existed);
        errno = saved_errno;
    }
    return sem;
}

LB_EXPORT int sem_close(sem_t *sem)
{
    sem_close_fn fn = (sem_close_fn)lb_next_symbol(&real_sem_close);
    int rc = fn(sem);
    if (rc == 0) {
        int saved_errno = errno;
        long page = sysconf(_SC_PAGESIZE);
        void *start = (void *)((uintptr_t)sem & ~(uintptr_t)(page - 1));
        /* msync fails with ENOMEM on an address no longer mapped: this
         * close was the process's last of the name */
        if (msync(start, (size_t)page, MS_ASYNC) != 0 && errno == ENOMEM)
            lb_shared_keys_unmapped(sem, sizeof *sem);
        errno = saved_errno;
    }
    return rc;
}
