/* See stack_bounds.h.
 *
 * The main thread: glibc's pthread_getattr_np reads /proc/self/maps with
 * stdio and sscanf (about 100K instructions, a third of what a preloaded
 * short process costs lockblame at start-up); main_thread_bounds computes
 * the same range from one raw read of the same file, as glibc 2.36 does:
 * the top is the page after __libc_stack_end's, the size is the stack
 * rlimit less what the stack's mapping already holds above the top, cut to
 * pages and to the end of the mapping below. Other threads: glibc's call,
 * which reads no file for them. */
#include "util/stack_bounds.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

LB_TLS lb_stack_bounds_t lb_stack_bounds;

extern void *__libc_stack_end; /* ld.so: the initial thread's stack at entry */

/* The mapping of /proc/self/maps holding addr: *from, *to, and the end of
 * the mapping before it (*below, 0 if none). 0, or -1 if not found. */
static int mapping_of(uintptr_t addr, uintptr_t *from, uintptr_t *to, uintptr_t *below)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[4096];
    uintptr_t field[2] = { 0, 0 }, last_to = 0;
    int which = 0;       /* 0: start, 1: end, 2: rest of the line */
    bool digits = false; /* a hex digit seen in the current field */
    int found = -1;
    ssize_t n;
    while (found != 0 && (n = read(fd, buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < n && found != 0; i++) {
            if (which >= 2) { /* past the range: on to the line's end */
                const char *nl = memchr(buf + i, '\n', (size_t)(n - i));
                if (!nl)
                    break;
                i = nl - buf;
            }
            char c = buf[i];
            if (c == '\n') {
                if (which == 2 && field[0] <= addr && addr < field[1]) {
                    *from = field[0];
                    *to = field[1];
                    *below = last_to;
                    found = 0;
                }
                last_to = which == 2 ? field[1] : last_to;
                field[0] = field[1] = 0;
                which = 0;
                digits = false;
            } else if (which < 2) {
                int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
                if (v >= 0) {
                    field[which] = field[which] << 4 | (uintptr_t)v;
                    digits = true;
                } else if (digits && ((which == 0 && c == '-') || (which == 1 && c == ' '))) {
                    which++;
                    digits = false;
                } else {
                    which = 3; /* not a mapping line: skip it */
                }
            }
        }
    }
    close(fd);
    return found;
}

int lb_stack_mapping_of(uintptr_t addr, uintptr_t *lo, uintptr_t *hi)
{
    int saved_errno = errno;
    uintptr_t below;
    int rc = mapping_of(addr, lo, hi, &below);
    errno = saved_errno;
    return rc;
}

static int main_thread_bounds(uintptr_t *lo, uintptr_t *hi)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t end = (uintptr_t)__libc_stack_end;
    /* glibc's rounding, which is "up" even for an end on a page
     * boundary (1 run in 256 or so, by the stack's random offset: the
     * unit test's equality failed then) */
    uintptr_t top = (end & ~(page - 1)) + page;
    struct rlimit rl;
    uintptr_t from, to, below;
    if (getrlimit(RLIMIT_STACK, &rl) != 0 || mapping_of(end, &from, &to, &below) != 0)
        return -1;
    uintptr_t size = (uintptr_t)rl.rlim_cur - (to - top);
    size &= ~(page - 1);
    if (size > top - below)
        size = top - below;
    *lo = top - size;
    *hi = top;
    return 0;
}

void lb_stack_bounds_init(void)
{
    int saved_errno = errno;
    uintptr_t lo, hi;
    if (gettid() == getpid() && main_thread_bounds(&lo, &hi) == 0) {
        lb_stack_bounds.hi = hi;
        lb_stack_bounds.lo = lo;
        errno = saved_errno;
        return;
    }
    pthread_attr_t a;
    if (pthread_getattr_np(pthread_self(), &a) == 0) {
        void *stack_lo = NULL;
        size_t size = 0;
        if (pthread_attr_getstack(&a, &stack_lo, &size) == 0 && stack_lo && size) {
            lb_stack_bounds.hi = (uintptr_t)stack_lo + size;
            lb_stack_bounds.lo = (uintptr_t)stack_lo;
        }
        pthread_attr_destroy(&a);
    }
    errno = saved_errno;
}
