/* See stack_bounds.h.
 *
 * The main thread: glibc's pthread_getattr_np reads /proc/self/maps with
 * stdio and sscanf (about 100K instructions, a third of what a preloaded
 * short process costs lockblame at start-up); main_thread_bounds computes
 * the same range from the kernel's answers by address (PROCMAP_QUERY)
 * where it has that query, else from one raw read of the same file, as
 * glibc 2.36 does:
 * the top is the page after __libc_stack_end's, the size is the stack
 * rlimit less what the stack's mapping already holds above the top, cut to
 * pages and to the end of the mapping below. Other threads: glibc's call
 * reads no file for them, but mallocs (the thread's affinity mask), and a
 * thread's first malloc makes glibc give it an arena of its own (a 64 MiB
 * reservation, an mprotect; kept until the process ends), which a thread
 * of a program that never allocates does not pay natively. So the bounds
 * are read from the thread's descriptor instead, where glibc's call reads
 * them: the words stackblock, stackblock_size and guardsize (lo =
 * stackblock + guardsize, hi = stackblock + stackblock_size). Their place
 * in the descriptor (pthread_self()) is learnt once per process and
 * inherited by fork children: at the main thread's start from its own
 * descriptor, where glibc's start-up leaves stackblock 0, stackblock_size
 * __libc_stack_end and guardsize 0 (one such triple, or nothing is
 * learnt), so that a process which forks before creating a thread hands
 * the place on; otherwise by comparing one glibc call's answer with a
 * thread's words. Each thread's words are checked against its own stack
 * pointer and its descriptor's address (inside the block), and glibc's
 * call stays the answer wherever the check or the learning fails.
 *
 * Invariants: block_word is written once (CAS from LEARN_UNKNOWN) and read
 * relaxed; a descriptor is read only below the stack top glibc reported
 * (the learning from glibc's answer), copied through the kernel from the
 * main thread's descriptor (up to LB_DESCRIPTOR_WORDS, as far as its
 * memory goes: util/own_memory.h), or at the learnt word (inside the
 * descriptor). */
#include "util/stack_bounds.h"
#include "util/own_memory.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>

LB_TLS lb_stack_bounds_t lb_stack_bounds;

/* How far into a thread descriptor the learning looks (glibc 2.3x: the
 * stack block's words lie about 1.6 KiB in). */
#define LB_DESCRIPTOR_WORDS 512

extern void *__libc_stack_end; /* ld.so: the initial thread's stack at entry */

/* A mapping of /proc/self/maps: [from, to), and the end of the mapping
 * before it (below; 0 if none, or see query_below). */
typedef struct {
    uintptr_t from, to, below;
} mapping_t;

/* The mapping holding addr, read from the file fd (/proc/self/maps, at
 * its start): one raw read, the kernel formatting every mapping's line.
 * 0, or -1 if not found. */
static int read_mapping(int fd, uintptr_t addr, mapping_t *m)
{
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
                    m->from = field[0];
                    m->to = field[1];
                    m->below = last_to;
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
    return found;
}

/* PROCMAP_QUERY (Linux 6.11; declared here, which older headers lack):
 * one mapping of /proc/self/maps by address, a few microseconds, where
 * read_mapping has the kernel format every line (tens of microseconds in
 * a small image, more in a large one, paid by every exec'd image at its
 * start). */
struct lb_procmap_query {
    uint64_t size, query_flags, query_addr;
    uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
    uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
    uint64_t vma_name_addr, build_id_addr;
};
#define LB_PROCMAP_QUERY            _IOWR('f', 17, struct lb_procmap_query)
#define LB_PROCMAP_COVERING_OR_NEXT 0x10u
#define LB_QUERY_NO                 -2 /* no answer by query: read the file */
#define LB_QUERY_STEPS              8  /* mappings query_below steps over before it gives up */

/* The mapping holding addr (covering), or the first one above it: 0,
 * -1 if there is none, LB_QUERY_NO where the kernel has no such query. */
static int query(int fd, uintptr_t addr, bool covering, mapping_t *m)
{
    struct lb_procmap_query q = { .size = sizeof q,
                                  .query_flags = covering ? 0 : LB_PROCMAP_COVERING_OR_NEXT,
                                  .query_addr = addr };
    if (ioctl(fd, LB_PROCMAP_QUERY, &q) != 0)
        return errno == ENOENT ? -1 : LB_QUERY_NO;
    m->from = (uintptr_t)q.vma_start;
    m->to = (uintptr_t)q.vma_end;
    return 0;
}

/* m->below for a stack that may reach down to floor: the end of the last
 * mapping in [floor, m->from), floor if none lies there (the stack's
 * room is then floor's, whatever lies lower). 0, or LB_QUERY_NO when
 * the query steps over LB_QUERY_STEPS of them without reaching the
 * stack's, or fails. */
static int query_below(int fd, uintptr_t floor, mapping_t *m)
{
    m->below = floor;
    for (int step = 0; step < LB_QUERY_STEPS; step++) {
        mapping_t next;
        if (floor >= m->from)
            return 0;
        if (query(fd, floor, false, &next) != 0)
            return LB_QUERY_NO;
        if (next.from >= m->from)
            return 0;
        m->below = floor = next.to;
    }
    return LB_QUERY_NO;
}

int lb_stack_mapping_of(uintptr_t addr, uintptr_t *lo, uintptr_t *hi)
{
    int saved_errno = errno;
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    mapping_t m;
    int rc = fd < 0 ? -1 : query(fd, addr, true, &m);
    if (rc == LB_QUERY_NO)
        rc = read_mapping(fd, addr, &m);
    if (fd >= 0)
        close(fd);
    if (rc == 0) {
        *lo = m.from;
        *hi = m.to;
    }
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
    if (getrlimit(RLIMIT_STACK, &rl) != 0)
        return -1;
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    mapping_t m;
    int rc = query(fd, end, true, &m);
    if (rc == 0) {
        uintptr_t room = (uintptr_t)rl.rlim_cur - (m.to - top);
        rc = query_below(fd, room < top ? top - room : 0, &m);
    }
    if (rc == LB_QUERY_NO)
        rc = read_mapping(fd, end, &m);
    close(fd);
    if (rc != 0)
        return -1;
    uintptr_t size = (uintptr_t)rl.rlim_cur - (m.to - top);
    size &= ~(page - 1);
    if (size > top - m.below)
        size = top - m.below;
    *lo = top - size;
    *hi = top;
    return 0;
}

/* glibc's answer for the calling thread (not the main thread). */
static int glibc_bounds(uintptr_t *lo, uintptr_t *hi)
{
    pthread_attr_t a;
    if (pthread_getattr_np(pthread_self(), &a) != 0)
        return -1;
    void *stack_lo = NULL;
    size_t size = 0;
    int rc = pthread_attr_getstack(&a, &stack_lo, &size) == 0 && stack_lo && size ? 0 : -1;
    pthread_attr_destroy(&a);
    *lo = (uintptr_t)stack_lo;
    *hi = (uintptr_t)stack_lo + size;
    return rc;
}

enum {
    LEARN_UNKNOWN = -1,
    LEARN_FAILED = -2
};
/* The index of stackblock among the descriptor's words (then
 * stackblock_size and guardsize), or LEARN_*. */
static int block_word = LEARN_UNKNOWN;

/* Once per process, from a thread whose bounds glibc gave: the one word
 * index whose three words give exactly those bounds, or LEARN_FAILED. */
static void learn_block_word(uintptr_t lo, uintptr_t hi)
{
    if (__atomic_load_n(&block_word, __ATOMIC_RELAXED) != LEARN_UNKNOWN)
        return;
    const uintptr_t *w = (const uintptr_t *)pthread_self();
    int found = LEARN_FAILED;
    for (int i = 0; (uintptr_t)&w[i + 3] <= hi && i < LB_DESCRIPTOR_WORDS; i++) {
        if (w[i] && w[i] + w[i + 1] == hi && w[i] + w[i + 2] == lo) {
            if (found != LEARN_FAILED) {
                found = LEARN_FAILED; /* two candidates: trust neither */
                break;
            }
            found = i;
        }
    }
    int unknown = LEARN_UNKNOWN;
    __atomic_compare_exchange_n(&block_word, &unknown, found, false, __ATOMIC_RELAXED,
                                __ATOMIC_RELAXED);
}

/* Once per process, at the main thread's start: the one word index whose
 * three words are glibc's initial-thread values (0, __libc_stack_end, 0),
 * or nothing learnt. */
static void learn_block_word_from_main(void)
{
    if (__atomic_load_n(&block_word, __ATOMIC_RELAXED) != LEARN_UNKNOWN || !__libc_stack_end)
        return;
    /* a copy, as far as the descriptor's memory goes: glibc's struct
     * pthread is shorter than LB_DESCRIPTOR_WORDS (2368 bytes in 2.36),
     * and the main thread's lies where the loader allocated it, which may
     * be the end of a mapping */
    uintptr_t w[LB_DESCRIPTOR_WORDS];
    int words = (int)(lb_read_own_prefix((const void *)pthread_self(), w, sizeof w) / sizeof *w);
    const uintptr_t end = (uintptr_t)__libc_stack_end;
    int found = LEARN_UNKNOWN;
    for (int i = 0; i + 2 < words; i++) {
        if (w[i + 1] == end && w[i] == 0 && w[i + 2] == 0) {
            if (found != LEARN_UNKNOWN)
                return; /* two candidates: trust neither, learn from glibc later */
            found = i;
        }
    }
    int unknown = LEARN_UNKNOWN;
    if (found != LEARN_UNKNOWN)
        __atomic_compare_exchange_n(&block_word, &unknown, found, false, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED);
}

/* The calling thread's bounds from its descriptor's words, once learnt:
 * 0, or -1 when unknown or implausible (the stack pointer outside them). */
static int descriptor_bounds(uintptr_t *lo, uintptr_t *hi)
{
    int i = __atomic_load_n(&block_word, __ATOMIC_RELAXED);
    if (i < 0)
        return -1;
    const uintptr_t *w = (const uintptr_t *)pthread_self();
    uintptr_t block = w[i], size = w[i + 1], guard = w[i + 2];
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    if (!block || guard >= size || size > UINTPTR_MAX - block || sp < block + guard ||
        sp >= block + size || (uintptr_t)w < block + guard || (uintptr_t)w >= block + size)
        return -1;
    *lo = block + guard;
    *hi = block + size;
    return 0;
}

void lb_stack_bounds_init(bool may_be_main)
{
    int saved_errno = errno;
    uintptr_t lo, hi;
    if (may_be_main && gettid() == getpid() && main_thread_bounds(&lo, &hi) == 0) {
        learn_block_word_from_main();
        lb_stack_bounds.hi = hi;
        lb_stack_bounds.lo = lo;
        errno = saved_errno;
        return;
    }
    if (descriptor_bounds(&lo, &hi) == 0 || glibc_bounds(&lo, &hi) == 0) {
        lb_stack_bounds.hi = hi;
        lb_stack_bounds.lo = lo;
        learn_block_word(lo, hi);
    }
    errno = saved_errno;
}
