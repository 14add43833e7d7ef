/* See own_stack.h. A stack is mapped MAP_NORESERVE (untouched pages cost
 * nothing) in one mapping that starts PROT_NONE, its stack (and area)
 * made readable and writable by one mprotect: the page below the stack
 * is its guard, the page above an area its guard. The switch
 * (util/stack_switch.h) makes no system call and runs no libc code.
 *
 * The kept stack's reservation is a state word, kept.reserved: NULL (none
 * yet), LB_KEPT_UNAVAILABLE (being reserved, taken, or not reserved ahead),
 * or the reservation's base. Reserving moves it NULL -> UNAVAILABLE by one
 * CAS, so one thread maps, and then publishes the base with the sizes
 * written before it (release); it stays UNAVAILABLE, never tried again in
 * this process, where the kernel refuses or the reservation would be
 * charged while unused (reservation_charged).
 * Taking it moves it base -> UNAVAILABLE by one CAS: one caller at most
 * gets the mapping, any other maps its own. A fork child inherits the
 * word and the mapping as they are at the fork: the base only while
 * nobody in the parent took it, so the mapping is still untouched. */
#include "util/own_stack.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "util/common.h"
#include "util/pages.h"
#include "util/raw_mmap.h"
#include "util/read_head.h"
#include "util/stack_bounds.h"
#include "util/stack_switch.h"

#define LB_GUARD     4096u
/* Where in a 2 MiB block (one page-table page, util/pages.h) a kept
 * stack's top (its area's start) lies: the write's stack, tens of KiB
 * deep, grows down into the block's first 512 KiB, its scratch memory,
 * up to hundreds of KiB, up into the other 1.5 MiB. */
#define LB_BLOCK_TOP ((uintptr_t)512 << 10)

#define LB_KEPT_UNAVAILABLE ((char *)1)

/* The kept stack's reservation (the state word above, and the sizes it
 * was made for) and its area until lb_own_stack_area hands it out. A fork
 * child writes the line at its exit write (the claim, the area), on the
 * pages it writes anyway (util/common.h); a forking parent writes it at
 * its first fork only. */
static struct {
    char *reserved;
    size_t reserved_size, reserved_area;
    char *area;
    size_t area_size;
} kept LB_FORK_WRITTEN;

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

/* One stack's mapping: [slack][guard][stack][area][guard]. The slack,
 * under one block and only with an area, puts the stack's top at
 * LB_BLOCK_TOP in a block; it and whatever the top guard leaves over stay
 * PROT_NONE, mapped (a hole would take a later small mapping that goes
 * elsewhere natively: util/pages.c). Sizes are whole pages. */
typedef struct {
    char *base;
    size_t len;
    uintptr_t lo, top; /* the stack's bottom and top; the area starts at top */
} stack_map_t;

static stack_map_t stack_layout(char *base, size_t size, size_t area_size)
{
    size_t slack_max = area_size ? LB_PAGE_TABLE_SPAN - LB_GUARD : 0;
    stack_map_t m = { base, slack_max + LB_GUARD + size + (area_size ? area_size + LB_GUARD : 0), 0,
                      (uintptr_t)base + LB_GUARD + size };
    if (area_size)
        m.top = lb_pages_block_point(m.top, LB_BLOCK_TOP);
    m.lo = m.top - size;
    return m;
}

/* Maps a stack laid out so, untouched; false when the kernel refuses. */
static bool map_stack(size_t size, size_t area_size, stack_map_t *m)
{
    stack_map_t probe = stack_layout(NULL, size, area_size);
    char *base =
        lb_mmap(NULL, probe.len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED)
        return false;
    *m = stack_layout(base, size, area_size);
    if (lb_mprotect((char *)m->lo, size + area_size, PROT_READ | PROT_WRITE) != 0) {
        lb_munmap(base, m->len);
        return false;
    }
    return true;
}

/* The reservation, taken when it was made for these sizes; false when
 * there is none, it is another's, or it fits not. */
static bool take_reserved(size_t size, size_t area_size, stack_map_t *m)
{
    char *base = __atomic_load_n(&kept.reserved, __ATOMIC_ACQUIRE);
    if (!base || base == LB_KEPT_UNAVAILABLE || kept.reserved_size != size ||
        kept.reserved_area != area_size ||
        !__atomic_compare_exchange_n(&kept.reserved, &base, LB_KEPT_UNAVAILABLE, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return false;
    *m = stack_layout(base, size, area_size);
    return true;
}

/* fn on the stack m maps, with cancellation disabled and the stack's
 * bounds its own while it runs. */
static void run_on(const stack_map_t *m, void (*fn)(void *), void *arg)
{
    int cancel_state;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    lb_stack_bounds_t saved = lb_stack_bounds_push(m->lo, m->top);
    lb_stack_switch_call(fn, arg, m->top);
    lb_stack_bounds_pop(saved);
    pthread_setcancelstate(cancel_state, NULL);
}

int lb_call_on_own_stack(void (*fn)(void *), void *arg, size_t size, bool keep)
{
    stack_map_t m;
    if (!map_stack(page_up(size), 0, &m))
        return -1;
    run_on(&m, fn, arg);
    if (!keep)
        lb_munmap(m.base, m.len);
    return 0;
}

/* Whether a writable reservation held for the process's life would be
 * charged for: a limit that counts address space (RLIMIT_AS) or private
 * writable memory (RLIMIT_DATA), or strict overcommit
 * (vm.overcommit_memory 2: PostgreSQL's advice), which ignores
 * MAP_NORESERVE and charges the commit limit again at every fork, where a
 * stack mapped at the exit write is charged only while it runs. */
static bool reservation_charged(void)
{
    struct rlimit data;
    if (lb_pages_address_space_limited() || getrlimit(RLIMIT_DATA, &data) != 0 ||
        data.rlim_cur != RLIM_INFINITY)
        return true;
    char mode[8];
    return lb_read_head("/proc/sys/vm/overcommit_memory", mode, sizeof mode) > 0 && mode[0] == '2';
}

void *lb_kept_stack_reserve(size_t size, size_t area_size)
{
    size = page_up(size);
    area_size = page_up(area_size);
    char *base = __atomic_load_n(&kept.reserved, __ATOMIC_ACQUIRE);
    if (!base && __atomic_compare_exchange_n(&kept.reserved, &base, LB_KEPT_UNAVAILABLE, false,
                                             __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        stack_map_t m;
        if (reservation_charged() || !map_stack(size, area_size, &m))
            return NULL; /* stays unavailable: never tried again */
        kept.reserved_size = size;
        kept.reserved_area = area_size;
        __atomic_store_n(&kept.reserved, m.base, __ATOMIC_RELEASE);
        return (void *)m.top;
    }
    if (!base || base == LB_KEPT_UNAVAILABLE)
        return NULL;
    return (void *)stack_layout(base, kept.reserved_size, kept.reserved_area).top;
}

int lb_call_on_kept_stack(void (*fn)(void *), void *arg, size_t size, size_t area_size)
{
    size = page_up(size);
    area_size = page_up(area_size);
    stack_map_t m;
    if (!take_reserved(size, area_size, &m) && !map_stack(size, area_size, &m))
        return -1;
    if (area_size) {
        kept.area_size = area_size;
        __atomic_store_n(&kept.area, (char *)m.top, __ATOMIC_RELEASE);
        populate((char *)m.top - LB_KEPT_STACK_PAGES * LB_GUARD, LB_KEPT_STACK_PAGES);
    }
    run_on(&m, fn, arg);
    return 0;
}

void *lb_own_stack_area(size_t bytes)
{
    char *base = __atomic_load_n(&kept.area, __ATOMIC_ACQUIRE);
    if (!base || bytes > kept.area_size ||
        !__atomic_compare_exchange_n(&kept.area, &base, NULL, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return NULL;
    populate(base, LB_AREA_PAGES);
    return base;
}
