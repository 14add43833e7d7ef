#include "util/pages.h"

#include <sys/mman.h>

#include "util/spin.h"

void *lb_pages_alloc(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void *lb_pages_reserve(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void lb_pages_free(void *p, size_t bytes)
{
    if (p)
        munmap(p, bytes);
}

#define LB_ARENA_CHUNK (1u << 20)

static lb_spin_t arena_lock = LB_SPIN_INIT;
static char *arena_cursor;
static size_t arena_left;
static size_t arena_total;

void *lb_arena_alloc(size_t bytes)
{
    bytes = (bytes + 15) & ~(size_t)15;
    char *fresh = NULL;
    size_t fresh_size = 0;
    for (;;) {
        lb_spin_lock(&arena_lock);
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
            lb_spin_unlock(&arena_lock);
            if (fresh) /* another thread refilled first */
                lb_pages_free(fresh, fresh_size);
            return p;
        }
        lb_spin_unlock(&arena_lock);
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
    lb_spin_lock(&arena_lock);
}

void lb_arena_fork_done(void)
{
    lb_spin_unlock(&arena_lock);
}
