/* Memory for a write after which the process's memory is discarded: the
 * exit write of a process whose profile waits in the run's spool.
 *
 * A fork child shares its parent's heap until it writes a page, and
 * malloc's free lists run through the whole heap: the first mallocs of a
 * child's exit write took a chunk here and unlinked a neighbour there,
 * and each page they wrote was copied (a page fault and a 4 KiB copy
 * each; 15 to 20 a child). Once a thread has turned scratch memory on,
 * what it allocates through these functions comes from anonymous mappings
 * of its own instead, in order, each page touched once as it fills; what
 * it frees there stays (the process ends).
 *
 * Contract: on a thread that has not turned it on (every thread of the
 * CLI, every thread of the library but the one writing its exit write),
 * allocations are malloc's, calloc's and realloc's. On the thread that
 * has, an allocation comes from the scratch mappings (16-byte aligned,
 * zeroed as fresh mappings are), falling back to malloc when the kernel
 * refuses or past LB_SCRATCH_MAX bytes. On any thread, a free of scratch
 * memory does nothing, a realloc of it copies it into a fresh block, and
 * malloc'd memory is freed and realloc'd by libc. Memory from these
 * functions is freed only through lb_scratch_free or lb_scratch_realloc.
 * One thread a process turns it on: the first that asks; it stays on for
 * the rest of the process. Not async-signal-safe (malloc may be called). */
#ifndef LB_COMMON_SCRATCH_H
#define LB_COMMON_SCRATCH_H
#include <stdbool.h>
#include <stddef.h>

/* Scratch memory a process maps at most: what a spooled write of a fork
 * child or a compiler needs many times over; a write larger than that
 * goes on with malloc (scratch memory is never reused, so a process ends
 * with at most this much more than it would have held). */
#define LB_SCRATCH_MAX ((size_t)32 << 20)

/* The size a mapper is asked for, at least (more for a larger block): an
 * area this size mapped ahead of the write serves its first chunk. */
#define LB_SCRATCH_CHUNK ((size_t)2 << 20)

/* Turns scratch memory on for the calling thread, its mappings made by
 * `map` (zeroed, readable and writable memory of at least `bytes`, never
 * unmapped, or NULL); false (nothing changed) where another thread of the
 * process has it. */
bool lb_scratch_on(void *(*map)(size_t bytes));
void *lb_scratch_malloc(size_t bytes);
void *lb_scratch_calloc(size_t n, size_t size);
void *lb_scratch_realloc(void *p, size_t bytes);
void lb_scratch_free(void *p);
#endif
