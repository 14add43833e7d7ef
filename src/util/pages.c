#include "util/pages.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

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

static size_t page_round(size_t bytes)
{
    return (bytes + LB_PAGE - 1) & ~(size_t)(LB_PAGE - 1);
}

/* The readable and writable bytes of a mapping for `bytes`, with its
 * guard page. */
static size_t mapped_len(size_t bytes)
{
    return page_round(bytes) + LB_PAGE;
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

/* Where to ask for a reservation of gigabytes: LB_FAR_GAP below the 1 GiB
 * region of the library's code, where the kernel's top-down placement
 * reaches only in a program that maps tens of gigabytes (the hint is
 * taken only where the range is free; else the kernel places it as any
 * other). Placed in line, it pushed every later mapping (the program's
 * thread stacks, lockblame's tables) gigabytes below the libraries, into
 * 1 GiB regions of their own: one more upper-level page table a process,
 * which a fork copies and a fork child's first write there allocates. */
#define LB_GIB     ((uintptr_t)1 << 30)
#define LB_FAR_GAP ((uintptr_t)64 << 30)
static void *far_hint(size_t span)
{
    uintptr_t here = (uintptr_t)&far_hint & ~(LB_GIB - 1);
    uintptr_t need = LB_FAR_GAP + ((span + LB_GIB - 1) & ~(LB_GIB - 1));
    return here > need ? (void *)(here - need) : NULL;
}

bool lb_pages_address_space_limited(void)
{
    struct rlimit as;
    return getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur != RLIM_INFINITY;
}

void *lb_pages_reserve_split(size_t below, size_t above)
{
    if (lb_pages_address_space_limited())
        return NULL;
    below = page_round(below);
    above = page_round(above);
    size_t span = LB_PAGE + below + above + LB_PAGE + LB_PAGE_TABLE_SPAN;
    char *p = lb_mmap(far_hint(span), span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                      -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    /* the lowest point leaves a guard page below the lower table; the
     * point chosen lies within LB_PAGE_TABLE_SPAN of it, so the upper
     * table and its guard page still fit */
    uintptr_t lowest = (uintptr_t)p + LB_PAGE + below;
    uintptr_t point = lb_pages_block_point(lowest, LB_PAGE_TABLE_SPAN / 2);
    if (mprotect((char *)point, above, PROT_READ | PROT_WRITE) != 0) {
        lb_munmap(p, span);
        return NULL;
    }
    return (void *)point;
}

bool lb_pages_open(void *p, size_t bytes)
{
    return mprotect(p, bytes, PROT_READ | PROT_WRITE) == 0;
}

void lb_pages_free(void *p, size_t bytes)
{
    if (p)
        lb_munmap(p, span_len(bytes));
}

/* Per-thread tables: a few size classes, each a stack of free blocks
 * (an array of their addresses: a block's own pages are not written when
 * it is freed, and a page its thread never touched stays unmapped until
 * the block is handed out again); a class with none carves a fresh block
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

/* The free stacks' first entries of each class, kept in lb_fork_written
 * with the counts (util/common.h): a fork child forgets its parent's free
 * blocks, so its first threads' exits push there, on the page the fork
 * made it write anyway, not on a page of .bss of their own (a fault each
 * fork child with an exiting thread took: a page zeroed or copied). */
#define LB_PAGES_RECYCLE_NEAR 8

/* The lock and what it guards: what every allocation touches (the lock,
 * the carving cursor, the classes' sizes and counts) on the struct's
 * first 2 cache lines, the slab list (read by a free that drops a block)
 * after them, then each class's first LB_PAGES_RECYCLE_NEAR free blocks;
 * the rest of the free stacks apart, outside lb_fork_written (which they
 * would take past a page): a fork child writes the struct (its lock, its
 * counts) at the fork, and the far stacks only when more of its threads
 * have exited than the near entries hold. */
static struct {
    lb_meta_lock_t lock;
    uint32_t slabs;                           /* slab[0..slabs) are mapped */
    char *cursor, *end;                       /* the last slab's free part, below its guard page */
    size_t len[LB_PAGES_RECYCLE_CLASSES];     /* mapped_len of each class; 0 = unused */
    uint32_t count[LB_PAGES_RECYCLE_CLASSES]; /* free blocks of each class */
    char *slab[LB_SLABS];                     /* each LB_SLAB_SPAN */
    uintptr_t near[LB_PAGES_RECYCLE_CLASSES][LB_PAGES_RECYCLE_NEAR]; /* free_slot's first */
} blocks LB_FORK_WRITTEN = { .lock = LB_META_LOCK_INIT };

/* The rest of each class's free stack (free_slot). */
static uintptr_t free_blocks[LB_PAGES_RECYCLE_CLASSES]
                            [LB_PAGES_RECYCLE_MAX - LB_PAGES_RECYCLE_NEAR];

/* Entry k of class i's free stack, entries 0..blocks.count[i] its free
 * blocks, under blocks.lock, each its address (page-aligned) | the pages
 * its last owner wrote (bit i: page i; LB_DIRTY_ALL: every page, or
 * unknown). */
static uintptr_t *free_slot(int i, uint32_t k)
{
    return k < LB_PAGES_RECYCLE_NEAR ? &blocks.near[i][k]
                                     : &free_blocks[i][k - LB_PAGES_RECYCLE_NEAR];
}

#define LB_DIRTY_ALL ((uintptr_t)LB_PAGE - 1)

/* Zero the pages of a block of `bytes` that dirty names (a page without
 * its bit is still zero): the rest are not touched, so a page the last
 * owner never wrote is not faulted in by the next one's zeroing. */
static void zero_dirty(char *p, size_t bytes, uintptr_t dirty)
{
    if (dirty == LB_DIRTY_ALL || bytes > (size_t)12 * LB_PAGE) {
        memset(p, 0, bytes);
        return;
    }
    for (size_t i = 0; dirty >> i && i * LB_PAGE < bytes; i++) { /* no bit beyond the block */
        if (dirty >> i & 1) {
            size_t at = i * LB_PAGE;
            memset(p + at, 0, bytes - at < LB_PAGE ? bytes - at : LB_PAGE);
        }
    }
}

static bool in_slab(const void *p)
{
    for (uint32_t i = 0; i < blocks.slabs; i++)
        if ((const char *)p >= blocks.slab[i] && (const char *)p < blocks.slab[i] + LB_SLAB_SPAN)
            return true;
    return false;
}

/* A fresh block of len bytes from the slabs, under blocks.lock; NULL
 * when the last slab is full (the caller maps one, outside the lock). */
static void *carve(size_t len)
{
    if ((size_t)(blocks.end - blocks.cursor) < len)
        return NULL;
    void *p = blocks.cursor;
    blocks.cursor += len;
    return p;
}

void *lb_pages_alloc_recycled(size_t bytes)
{
    size_t len = mapped_len(bytes);
    if (len > LB_SLAB_SPAN / 8)
        return lb_pages_alloc(bytes);
    void *p = NULL;
    uintptr_t dirty = 0;
    char *fresh = NULL;
    for (;;) {
        lb_meta_lock(&blocks.lock);
        for (int i = 0; i < LB_PAGES_RECYCLE_CLASSES; i++) {
            if (blocks.len[i] == len && blocks.count[i]) {
                uintptr_t e = *free_slot(i, --blocks.count[i]);
                p = (void *)(e & ~LB_DIRTY_ALL);
                dirty = e & LB_DIRTY_ALL;
                break;
            }
        }
        void *carved = p ? NULL : carve(len);
        if (!p && !carved && fresh && blocks.slabs < LB_SLABS) {
            /* install the slab mapped outside the lock */
            blocks.slab[blocks.slabs++] = fresh;
            blocks.cursor = fresh;
            blocks.end = fresh + LB_SLAB_SPAN - LB_PAGE;
            fresh = NULL;
            carved = carve(len);
        }
        lb_meta_unlock(&blocks.lock);
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
            zero_dirty(p, bytes, dirty);
            return p;
        }
        if (blocks.slabs == LB_SLABS)
            return lb_pages_alloc(bytes);
        /* No system call under the lock: map a slab, then retry. */
        fresh = lb_pages_reserve(LB_SLAB_SPAN - LB_PAGE);
        if (!fresh)
            return NULL;
    }
}

void lb_pages_free_recycled(void *p, size_t bytes)
{
    lb_pages_free_recycled_dirty(p, bytes, (uint32_t)LB_DIRTY_ALL);
}

void lb_pages_free_recycled_dirty(void *p, size_t bytes, uint32_t dirty_pages)
{
    if (!p)
        return;
    uintptr_t dirty = dirty_pages & LB_DIRTY_ALL;
    size_t len = mapped_len(bytes);
    if (len > LB_SLAB_SPAN / 8) {
        lb_munmap(p, span_len(bytes)); /* a mapping of its own (lb_pages_alloc_recycled) */
        return;
    }
    bool kept = false;
    lb_meta_lock(&blocks.lock);
    for (int i = 0; i < LB_PAGES_RECYCLE_CLASSES && !kept; i++) {
        if (blocks.len[i] == 0)
            blocks.len[i] = len;
        if (blocks.len[i] == len && blocks.count[i] < LB_PAGES_RECYCLE_MAX) {
            *free_slot(i, blocks.count[i]++) = (uintptr_t)p | dirty;
            kept = true;
        } else if (blocks.len[i] == len) {
            break; /* this size's stack is full */
        }
    }
    bool carved = !kept && in_slab(p);
    lb_meta_unlock(&blocks.lock);
    if (carved)
        madvise(p, len, MADV_DONTNEED); /* dropped: its pages back, its addresses unused */
    else if (!kept)
        lb_munmap(p, span_len(bytes));
}

#define LB_ARENA_CHUNK (1u << 20)

/* The lock and what it guards, on one cache line. */
static struct {
    lb_meta_lock_t lock;
    char *cursor; /* the current chunk's free part */
    size_t left;  /* its bytes */
    size_t total; /* bytes handed out (lb_arena_bytes) */
} arena LB_FORK_WRITTEN = { .lock = LB_META_LOCK_INIT };

/* `bytes` from the arena at a multiple of `align` (a power of two up to
 * a page: chunks are page-aligned). */
static void *arena_take(size_t bytes, size_t align)
{
    char *fresh = NULL;
    size_t fresh_size = 0;
    for (;;) {
        lb_meta_lock(&arena.lock);
        if (fresh) {
            size_t skip = (size_t)(-(uintptr_t)arena.cursor & (align - 1));
            if (bytes + skip > arena.left) {
                /* Install the chunk mapped outside the lock. The rest of
                 * the old chunk is abandoned (at most one allocation's
                 * worth). */
                arena.cursor = fresh;
                arena.left = fresh_size;
                fresh = NULL;
            }
        }
        size_t skip = (size_t)(-(uintptr_t)arena.cursor & (align - 1));
        if (arena.cursor && bytes + skip <= arena.left) {
            void *p = arena.cursor + skip;
            arena.cursor += skip + bytes;
            arena.left -= skip + bytes;
            arena.total += skip + bytes;
            lb_meta_unlock(&arena.lock);
            if (fresh) /* another thread refilled first */
                lb_pages_free(fresh, fresh_size);
            return p;
        }
        lb_meta_unlock(&arena.lock);
        /* No system call under the lock: map a chunk, then retry. */
        fresh_size = bytes > LB_ARENA_CHUNK ? bytes : LB_ARENA_CHUNK;
        fresh = lb_pages_alloc(fresh_size);
        if (!fresh)
            return NULL;
    }
}

void lb_pages_write_first(void *p, size_t bytes)
{
    uintptr_t at = (uintptr_t)p, end = at + bytes;
    for (unsigned n = 0; at < end && n < LB_WRITE_FIRST_PAGES; n++) {
        /* a locked add of 0, which changes nothing and writes: written
         * out, since a compiler may make an idempotent atomic a load */
        __asm__ volatile("lock addl $0, %0" : "+m"(*(uint32_t *)at) : : "memory");
        at = (at | (LB_PAGE - 1)) + 1; /* the next page's first word */
    }
}

/* Arena blocks are written before their owner reads them: a table found
 * empty by a look-up before its first insert (an object's blame, a
 * thread's wait note) would otherwise be read from the zero page first. */
static void *arena_take_written(size_t bytes, size_t align)
{
    void *p = arena_take(bytes, align);
    if (p)
        lb_pages_write_first(p, bytes);
    return p;
}

void *lb_arena_alloc(size_t bytes)
{
    return arena_take_written((bytes + 15) & ~(size_t)15, 16);
}

void *lb_arena_alloc_lines(size_t bytes)
{
    return arena_take_written((bytes + LB_CACHELINE - 1) & ~(size_t)(LB_CACHELINE - 1),
                              LB_CACHELINE);
}

size_t lb_arena_bytes(void)
{
    return __atomic_load_n(&arena.total, __ATOMIC_RELAXED);
}

void lb_arena_fork_prepare(void)
{
    lb_meta_lock(&arena.lock);
    lb_meta_lock(&blocks.lock);
}

void lb_arena_fork_done(bool child)
{
    if (child)
        for (int i = 0; i < LB_PAGES_RECYCLE_CLASSES; i++)
            LB_STORE_CHANGED(&blocks.count[i], 0u);
    lb_meta_unlock(&blocks.lock);
    lb_meta_unlock(&arena.lock);
}
