#include "util/pages.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "util/common.h"
#include "util/fork_pages.h"
#include "util/meta_lock.h"
#include "util/raw_mmap.h"

/* Every mapping ends in one PROT_NONE page. The kernel places new
 * mappings top-down, so a thread's tables (or the slab they are carved
 * from), mapped when it starts, land directly below its stack; a program
 * thread on a stack without a guard page (guardsize 0) that overflows
 * must fault there, as it would on the unmapped page below natively,
 * instead of writing into our tables.
 *
 * And every mapping spans at least LB_MAP_MIN_SPAN of address space (the
 * rest PROT_NONE, which commits no memory): small enough mappings would
 * fill the small holes ld.so leaves among the libraries (its cache file,
 * mapped and unmapped while the program loads), where the program's own
 * first mappings, a thread stack among them, go natively; the program's
 * stack then lands lower, on a library's writable data, and readable
 * memory is found below a stack that has none natively. */
#define LB_PAGE         4096u
#define LB_MAP_MIN_SPAN ((size_t)2 << 20)

/* The readable and writable bytes of a mapping for `bytes`, with its
 * guard page. */
static size_t mapped_len(size_t bytes)
{
    return ((bytes + LB_PAGE - 1) & ~(size_t)(LB_PAGE - 1)) + LB_PAGE;
}

/* The address space a mapping for `bytes` takes. */
static size_t span_len(size_t bytes)
{
    size_t len = mapped_len(bytes);
    return len < LB_MAP_MIN_SPAN ? LB_MAP_MIN_SPAN : len;
}

static void *map_with_top_guard(size_t bytes, int extra_flags)
{
    size_t len = mapped_len(bytes), span = span_len(bytes);
    char *p = lb_mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | extra_flags, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    if (mprotect(p, len - LB_PAGE, PROT_READ | PROT_WRITE) != 0) {
        lb_munmap(p, span);
        return NULL;
    }
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

void *lb_pages_map_shared(size_t bytes, int fd)
{
    size_t span = span_len(bytes);
    char *p = lb_mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    if (lb_mmap(p, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
        lb_munmap(p, span);
        return NULL;
    }
    return p;
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
        lb_munmap(p, span_len(bytes));
}

/* Per-thread tables: a few size classes, each a stack of free blocks
 * linked through their first word; a class with none carves a fresh block
 * from a slab. A slab is one mapping (LB_SLAB_SPAN of address space,
 * MAP_NORESERVE, its top page the guard) from which blocks are carved in
 * order, each mapped_len(bytes) long: one mmap for dozens of threads'
 * tables, where a mapping each (mmap, mprotect, a page table of its own
 * and the span's minimum) cost a thread starting in a fresh process, a
 * fork child's above all, ~40 us a table beyond its pages on the VM
 * measured. A carved block is never unmapped: past LB_PAGES_RECYCLE_MAX
 * free blocks of its class its pages are given back (MADV_DONTNEED) and
 * the block dropped; a block too large for a slab is a mapping of its
 * own, unmapped when freed. A fork child forgets its parent's free
 * blocks: zeroing one would copy each of its pages from the parent, where
 * a fresh block touches only what the thread uses. The lock is held for a
 * handful of instructions, never across a system call. */
#define LB_PAGES_RECYCLE_CLASSES 8
#define LB_PAGES_RECYCLE_MAX     64
#define LB_SLAB_SPAN             ((size_t)8 << 20)
#define LB_SLABS                 64

static lb_meta_lock_t recycle_lock LB_FORK_WRITTEN = LB_META_LOCK_INIT;
static struct {
    size_t len; /* mapped_len of this class; 0 = unused class */
    void *head; /* free blocks, linked through their first word */
    uint32_t count;
} recycled[LB_PAGES_RECYCLE_CLASSES] LB_FORK_WRITTEN;
static struct {
    char *base[LB_SLABS]; /* the slabs mapped, each LB_SLAB_SPAN */
    uint32_t n;
    char *cursor, *end; /* the last slab's free part, below its guard page */
} slabs LB_FORK_WRITTEN;

static bool in_slab(const void *p)
{
    for (uint32_t i = 0; i < slabs.n; i++)
        if ((const char *)p >= slabs.base[i] && (const char *)p < slabs.base[i] + LB_SLAB_SPAN)
            return true;
    return false;
}

/* A fresh block of len bytes from the slabs, under recycle_lock; NULL
 * when the last slab is full (the caller maps one, outside the lock). */
static void *carve(size_t len)
{
    if ((size_t)(slabs.end - slabs.cursor) < len)
        return NULL;
    void *p = slabs.cursor;
    slabs.cursor += len;
    return p;
}

void *lb_pages_alloc_recycled(size_t bytes)
{
    size_t len = mapped_len(bytes);
    if (len > LB_SLAB_SPAN / 8)
        return lb_pages_alloc(bytes);
    void *p = NULL;
    char *fresh = NULL;
    for (;;) {
        lb_meta_lock(&recycle_lock);
        for (int i = 0; i < LB_PAGES_RECYCLE_CLASSES; i++) {
            if (recycled[i].len == len && recycled[i].head) {
                p = recycled[i].head;
                recycled[i].head = *(void **)p;
                recycled[i].count--;
                break;
            }
        }
        void *carved = p ? NULL : carve(len);
        if (!p && !carved && fresh && slabs.n < LB_SLABS) {
            /* install the slab mapped outside the lock */
            slabs.base[slabs.n++] = fresh;
            slabs.cursor = fresh;
            slabs.end = fresh + LB_SLAB_SPAN - LB_PAGE;
            fresh = NULL;
            carved = carve(len);
        }
        lb_meta_unlock(&recycle_lock);
        if (fresh) /* another thread installed one first, or none is needed */
            lb_munmap(fresh, LB_SLAB_SPAN);
        if (carved)
            return carved; /* never written: zero */
        if (p) {
            /* Zero it as a fresh block is, with stores: the tables are
             * tens of KB, already faulted in by their last thread.
             * (madvise(MADV_DONTNEED) flushes the TLB of every CPU
             * running the process: an IPI each, which on a VM cost more
             * than the mmap it saved.) */
            memset(p, 0, bytes);
            return p;
        }
        if (slabs.n == LB_SLABS)
            return lb_pages_alloc(bytes);
        /* No system call under the lock: map a slab, then retry. */
        fresh = lb_pages_reserve(LB_SLAB_SPAN - LB_PAGE);
        if (!fresh)
            return NULL;
    }
}

void lb_pages_free_recycled(void *p, size_t bytes)
{
    if (!p)
        return;
    size_t len = mapped_len(bytes);
    if (len > LB_SLAB_SPAN / 8) {
        lb_munmap(p, span_len(bytes)); /* a mapping of its own (lb_pages_alloc_recycled) */
        return;
    }
    bool kept = false;
    lb_meta_lock(&recycle_lock);
    for (int i = 0; i < LB_PAGES_RECYCLE_CLASSES && !kept; i++) {
        if (recycled[i].len == 0)
            recycled[i].len = len;
        if (recycled[i].len == len && recycled[i].count < LB_PAGES_RECYCLE_MAX) {
            *(void **)p = recycled[i].head;
            recycled[i].head = p;
            recycled[i].count++;
            kept = true;
        } else if (recycled[i].len == len) {
            break; /* this size's stack is full */
        }
    }
    bool carved = !kept && in_slab(p);
    lb_meta_unlock(&recycle_lock);
    if (carved)
        madvise(p, len, MADV_DONTNEED); /* dropped: its pages back, its addresses unused */
    else if (!kept)
        lb_munmap(p, span_len(bytes));
}

#define LB_ARENA_CHUNK (1u << 20)

static lb_meta_lock_t arena_lock LB_FORK_WRITTEN = LB_META_LOCK_INIT;
static char *arena_cursor LB_FORK_WRITTEN;
static size_t arena_left LB_FORK_WRITTEN;
static size_t arena_total LB_FORK_WRITTEN;

/* `bytes` from the arena at a multiple of `align` (a power of two up to
 * a page: chunks are page-aligned). */
static void *arena_take(size_t bytes, size_t align)
{
    char *fresh = NULL;
    size_t fresh_size = 0;
    for (;;) {
        lb_meta_lock(&arena_lock);
        if (fresh) {
            size_t skip = (size_t)(-(uintptr_t)arena_cursor & (align - 1));
            if (bytes + skip > arena_left) {
                /* Install the chunk mapped outside the lock. The rest of
                 * the old chunk is abandoned (at most one allocation's
                 * worth). */
                arena_cursor = fresh;
                arena_left = fresh_size;
                fresh = NULL;
            }
        }
        size_t skip = (size_t)(-(uintptr_t)arena_cursor & (align - 1));
        if (arena_cursor && bytes + skip <= arena_left) {
            void *p = arena_cursor + skip;
            arena_cursor += skip + bytes;
            arena_left -= skip + bytes;
            arena_total += skip + bytes;
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

void *lb_arena_alloc(size_t bytes)
{
    return arena_take((bytes + 15) & ~(size_t)15, 16);
}

void *lb_arena_alloc_lines(size_t bytes)
{
    return arena_take((bytes + LB_CACHELINE - 1) & ~(size_t)(LB_CACHELINE - 1), LB_CACHELINE);
}

size_t lb_arena_bytes(void)
{
    return __atomic_load_n(&arena_total, __ATOMIC_RELAXED);
}

void lb_arena_fork_prepare(void)
{
    lb_meta_lock(&arena_lock);
    lb_meta_lock(&recycle_lock);
}

void lb_arena_fork_done(bool child)
{
    if (child)
        for (int i = 0; i < LB_PAGES_RECYCLE_CLASSES; i++) {
            LB_STORE_CHANGED(&recycled[i].head, NULL);
            LB_STORE_CHANGED(&recycled[i].count, 0u);
        }
    lb_meta_unlock(&recycle_lock);
    lb_meta_unlock(&arena_lock);
}
