/* See own_stack.h. The stack is mapped MAP_NORESERVE (untouched pages cost
 * nothing) in one mapping that starts PROT_NONE, its stack (and area)
 * made readable and writable by one mprotect: the page below the stack
 * is its guard, the page above an area its guard. The switch
 * (util/stack_switch.h) makes no system call and runs no libc code: every
 * process that writes its profile makes it once. */
#include "util/own_stack.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>

#include "util/common.h"
#include "util/pages.h"
#include "util/raw_mmap.h"
#include "util/stack_bounds.h"
#include "util/stack_switch.h"

#define LB_GUARD     4096u
/* Where in a 2 MiB block (one page-table page, util/pages.h) a kept
 * stack's top (its area's start) lies: the write's stack, tens of KiB
 * deep, grows down into the block's first 512 KiB, its scratch memory,
 * up to hundreds of KiB, up into the other 1.5 MiB. */
#define LB_BLOCK_TOP ((uintptr_t)512 << 10)

/* The kept stack's area until lb_own_stack_area hands it out (every
 * process's exit write sets it: on the pages a fork child writes anyway,
 * util/common.h). */
static struct {
    char *base;
    size_t size;
} area LB_FORK_WRITTEN;

/* The pages a final write touches first, mapped in one call each: the
 * stack's top (its deepest frames reach tens of KiB) and the area's start
 * (a recording fork child's scratch memory, 5 pages). On the VM measured
 * 4 pages populated cost 22 us, touched one by one 41 us (a fault each).
 * Best effort: a kernel without MADV_POPULATE_WRITE (before 5.14) leaves
 * them to their faults. */
#define LB_KEPT_STACK_PAGES 4u
#define LB_AREA_PAGES       6u
static void populate(char *p, unsigned pages)
{
#ifdef MADV_POPULATE_WRITE
    int saved_errno = errno;
    lb_madvise(p, (size_t)pages * LB_GUARD, MADV_POPULATE_WRITE);
    errno = saved_errno;
#else
    (void)p;
    (void)pages;
#endif
}

static size_t page_up(size_t n)
{
    return (n + LB_GUARD - 1) & ~(size_t)(LB_GUARD - 1);
}

/* fn on a stack of `size` with `area_size` bytes above its top (0: none,
 * and no slack), unmapped after unless `keep`. */
static int call_on(void (*fn)(void *), void *arg, size_t size, size_t area_size, bool keep)
{
    size = page_up(size);
    area_size = page_up(area_size);
    /* [slack][guard][stack][area][guard]: the slack, under one block,
     * puts the stack's top at LB_BLOCK_TOP in a block; it and whatever
     * the top guard leaves over stay PROT_NONE, mapped (a hole would take
     * a later small mapping that goes elsewhere natively: util/pages.c) */
    size_t slack_max = area_size ? LB_PAGE_TABLE_SPAN - LB_GUARD : 0;
    size_t len = slack_max + LB_GUARD + size + (area_size ? area_size + LB_GUARD : 0);
    char *base = lb_mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED)
        return -1;
    uintptr_t top = (uintptr_t)base + LB_GUARD + size;
    if (area_size)
        top = lb_pages_block_point(top, LB_BLOCK_TOP);
    char *lo = (char *)(top - size);
    if (lb_mprotect(lo, size + area_size, PROT_READ | PROT_WRITE) != 0) {
        lb_munmap(base, len);
        return -1;
    }
    if (area_size) {
        area.size = area_size;
        __atomic_store_n(&area.base, (char *)top, __ATOMIC_RELEASE);
        populate((char *)top - LB_KEPT_STACK_PAGES * LB_GUARD, LB_KEPT_STACK_PAGES);
    }
    int cancel_state;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    lb_stack_bounds_t saved = lb_stack_bounds_push((uintptr_t)lo, top);
    lb_stack_switch_call(fn, arg, top);
    lb_stack_bounds_pop(saved);
    pthread_setcancelstate(cancel_state, NULL);
    if (!keep)
        lb_munmap(base, len);
    return 0;
}

int lb_call_on_own_stack(void (*fn)(void *), void *arg, size_t size, bool keep)
{
    return call_on(fn, arg, size, 0, keep);
}

int lb_call_on_kept_stack(void (*fn)(void *), void *arg, size_t size, size_t area_size)
{
    return call_on(fn, arg, size, area_size, true);
}

void *lb_own_stack_area(size_t bytes)
{
    char *base = __atomic_load_n(&area.base, __ATOMIC_ACQUIRE);
    if (!base || bytes > area.size ||
        !__atomic_compare_exchange_n(&area.base, &base, NULL, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return NULL;
    populate(base, LB_AREA_PAGES);
    return base;
}
