#include "util/pages.h"

#include <stdbool.h>
#include <sys/mman.h>

#include "util/meta_lock.h"

/* Every mapping ends in one PROT_NONE page. The kernel places new
 * mappings top-down, so a thread's tables, mapped when it starts, land
 * directly below its stack; a program thread on a stack without a guard
 * page (guardsize 0) that overflows must fault there, as it would on the
 * unmapped page below natively, instead of writing into our tables. */
#define LB_PAGE 4096u

static size_t mapped_len(size_t bytes)
{
    return ((bytes + LB_PAGE - 1) & ~(size_t)(LB_PAGE - 1)) + LB_PAGE;
}

static void *map_with_top_guard(size_t bytes, int extra_flags)
{
    size_t len = mapped_len(bytes);
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | extra_flags,
                   -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    mprotect(p + len - LB_PAGE, LB_PAGE, PROT_NONE);
    return p;
}

void *lb_pages_alloc(size_t bytes)
{
    return map_with_top_guard(bytes, 0);
}

void *lb_pages_reserve(size_t bytes)
{
    return map_with_top_guard(bytes, MAP_NORESERVE);
}

void *lb_pages_reserve_once(void **slot, size_t bytes)
{
    void *current = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (current)
        return current;
    void *fresh = lb_pages_reserve(bytes);
    if (!fresh)
        return NULL;
    if (!__atomic_compare_exchange_n(slot, &current, fresh, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        lb_pages_free(fresh, bytes);
        return current;
    }
    return fresh;
}

void lb_pages_free(void *p, size_t bytes)
{
    if (p)
        munmap(p, mapped_len(bytes));
}

#define LB_ARENA_CHUNK (1u << 20)

static lb_meta_lock_t arena_lock = LB_META_LOCK_INIT;
static char *arena_cursor;
static size_t arena_left;
static size_t arena_total;

void *lb_arena_alloc(size_t bytes)
{
    bytes = (bytes + 15) & ~(size_t)15;
    char *fresh = NULL;
    size_t fresh_size = 0;
    for (;;) {
        lb_meta_lock(&arena_lock);
        if (bytes > arena_left && fresh) {
            /* Install the chunk mapped outside the lock. The rest of the
             * old chunk is abandoned (at most one allocation's worth). */
            arena_cursor = fresh;
            arena_left = fresh_size;
            fresh = NULL;
        }
        if (bytes <= arena_left) {
            void *p = arena_cursor;
            arena_cursor += bytes;
            arena_left -= bytes;
            arena_total += bytes;
            lb_meta_unlock(&arena_lock);
            if (fresh) /* another thread refilled first */
                lb_pages_free(fresh, fresh_size);
            return p;
        }
        lb_meta_unlock(&arena_lock);
        /* No system call under the lock: map a chunk, then retry. */
        fresh_size = bytes > LB_ARENA_CHUNK ? bytes : LB_ARENA_CHUNK;
        fresh = lb_pages_alloc(fresh_size);
        if (!fresh)
            return NULL;
    }
}

size_t lb_arena_bytes(void)
{
    return __atomic_load_n(&arena_total, __ATOMIC_RELAXED);
}

void lb_arena_fork_prepare(void)
{
    lb_meta_lock(&arena_lock);
}

void lb_arena_fork_done(void)
{
    lb_meta_unlock(&arena_lock);
}
