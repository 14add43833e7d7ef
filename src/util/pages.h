/* Memory that never comes from malloc: anonymous mappings, usable from the
 * signal handler (mmap is a plain system call on Linux), and a bump arena
 * for small records that live until the process ends.
 * Failure contract: every function returns NULL when the kernel refuses
 * memory, and leaves nothing half-allocated. */
#ifndef LB_PAGES_H
#define LB_PAGES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Zeroed, readable and writable pages; NULL on failure. */
void *lb_pages_alloc(size_t bytes);
/* The same for per-thread tables, which come and go with threads: carved
 * from a few large mappings, and a freed block kept (up to 64 of each
 * size) and handed to the next thread zeroed with memset, instead of
 * mmap + mprotect + munmap, each taking the process's mmap lock and the
 * last two flushing every CPU's TLB. Takes a lock of its own: never from
 * a signal handler, which uses lb_pages_alloc. */
void *lb_pages_alloc_recycled(size_t bytes);
void lb_pages_free_recycled(void *p, size_t bytes);
/* The same for a block whose owner wrote only the pages dirty_pages
 * names (bit i: the block's page i): the next owner's zeroing leaves the
 * others alone, never faulting in a page no owner wrote. */
void lb_pages_free_recycled_dirty(void *p, size_t bytes, uint32_t dirty_pages);
/* Make a page's first touch a write: a locked add of 0 to a word of each
 * page of [p, p + bytes) (at most LB_WRITE_FIRST_PAGES of them, from the
 * first), which changes no value and is safe beside other threads' use.
 * A page first read is mapped to the zero page (or, in a fork child, to
 * the parent's copy); the write that follows then replaces that mapping
 * and flushes the TLB of every CPU running the process: an interrupt to
 * each, which on the VMs measured makes the pair cost 14-16 us in a
 * process with threads on two CPUs, a write first 2 us. p and bytes are
 * multiples of 4. */
#define LB_WRITE_FIRST_PAGES 8u
void lb_pages_write_first(void *p, size_t bytes);
/* Reserve address space without committing memory (MAP_NORESERVE). */
void *lb_pages_reserve(size_t bytes);
/* fd's first `bytes` (a perf event's ring), shared, readable and writable,
 * at the bottom of a span of its own like every other mapping here; NULL
 * when the kernel refuses. Freed with lb_pages_free(p, bytes). */
void *lb_pages_map_shared(size_t bytes, int fd);
void lb_pages_free(void *p, size_t bytes);
/* What one page-table page maps: a 2 MiB block. On the VM measured (a
 * hypervisor that shadows the guest's page tables) a fork child's first
 * write in a block no page-table page maps yet costs 40-80 us, one where
 * a page-table page exists 13-19 us, and one in a 1 GiB region of its own
 * ~110 us: memory a process touches together goes on one block. */
#define LB_PAGE_TABLE_SPAN ((uintptr_t)2 << 20)

/* The lowest address at or above `lowest` that lies `offset` bytes into
 * its 2 MiB block (offset < LB_PAGE_TABLE_SPAN): at most one block up. */
static inline uintptr_t lb_pages_block_point(uintptr_t lowest, uintptr_t offset)
{
    return lowest + ((offset - (lowest & (LB_PAGE_TABLE_SPAN - 1))) & (LB_PAGE_TABLE_SPAN - 1));
}

/* Two reservations in one mapping that grow apart from a point, which is
 * returned: `above` bytes over it, readable and writable, and `below`
 * bytes under it (a table indexed downward from the point), PROT_NONE
 * until lb_pages_open makes them usable, each with PROT_NONE beyond its
 * end; never freed. The point lies mid-way through a 2 MiB block, so that
 * the first entries of both tables share one page-table page (pages.c).
 * NULL where the process's address space is limited (RLIMIT_AS): the
 * lower table's address space would be taken at once, where a table of
 * its own takes it only when first used. */
void *lb_pages_reserve_split(size_t below, size_t above);
/* Whether the process's address space is limited (RLIMIT_AS): then a
 * reservation is made only when it is first used, never ahead. */
bool lb_pages_address_space_limited(void);
/* [p, p + bytes) of a reservation made readable and writable (what a
 * reservation's mprotect would have made it); false when the kernel
 * refuses. */
bool lb_pages_open(void *p, size_t bytes);
/* The reservation published in *slot, reserving `bytes` on first use
 * (racing first users may each reserve; one CAS publishes a winner and the
 * others release theirs). NULL while the kernel refuses. Lock-free. */
void *lb_pages_reserve_once(void **slot, size_t bytes);
/* Zeroed, 16-byte aligned, never freed; thread-safe, not async-signal-safe.
 * Each page of the block is written once before it is returned
 * (lb_pages_write_first), so that its owner's first read finds it
 * mapped. */
void *lb_arena_alloc(size_t bytes);
/* The same on whole cache lines of its own (aligned, size rounded up):
 * for per-thread state written on lock paths, which would otherwise share
 * a line with the neighbouring allocation, often another thread's. */
void *lb_arena_alloc_lines(size_t bytes);
/* Bytes handed out by lb_arena_alloc so far (for the memory figures). */
size_t lb_arena_bytes(void);
/* fork: hold the arena's and the recycler's locks across fork so the child
 * never inherits them held; a child forgets its parent's free per-thread
 * blocks (child true). */
void lb_arena_fork_prepare(void);
void lb_arena_fork_done(bool child);
#endif
