/* Blocks of this process's memory copied whole, for a run of reads that
 * fall on a few of them: the write's tail-call look-ups read the PLT
 * stubs, GOT slots and code of neighbouring call sites, where each read
 * through lb_read_own (util/own_memory.h) is a system call. A read through
 * these copies costs one process_vm_readv a block. A block is
 * LB_OWN_BLOCK bytes at a multiple of its size, inside one page, and
 * protection is per page, so a block copies whole or not at all, and a
 * read through the copies succeeds exactly where lb_read_own of the same
 * bytes would, giving the bytes as they were when their block was copied:
 * for memory that does not change while the copies are used (code; GOT
 * slots bound before). A block that could not be read is not kept (each
 * read of it asks the kernel again); a read of more than two blocks goes
 * to lb_read_own whole. Blocks, not pages: the copies are written into
 * memory a fork child's exit write has not touched, a page fault each
 * page, and the stubs or slots of a few call sites lie within a block.
 *
 * One thread uses a set at a time; the caller provides its room (or none:
 * every read is then lb_read_own's). No malloc, no locks. */
#ifndef LB_UTIL_OWN_BLOCKS_H
#define LB_UTIL_OWN_BLOCKS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LB_OWN_BLOCK       512
#define LB_OWN_BLOCKS_KEPT 16 /* copies kept; the oldest gives way */

typedef struct lb_own_blocks {
    uint8_t *room;                       /* LB_OWN_BLOCKS_KEPT blocks of the caller's, or NULL */
    uintptr_t block[LB_OWN_BLOCKS_KEPT]; /* the block whose copy slot i holds; 0: none */
    unsigned next;                       /* the slot the next copy takes */
} lb_own_blocks_t;

/* Copy len bytes at addr into out, through b's copies (b NULL or without
 * room: lb_read_own); false (out untouched or partial) if any of them is
 * unreadable. */
bool lb_own_blocks_read(lb_own_blocks_t *b, uintptr_t addr, void *out, size_t len);
/* Drops b's copies (its room stays): later reads copy the blocks anew. */
void lb_own_blocks_forget(lb_own_blocks_t *b);
/* How many blocks b holds a copy of. */
static inline unsigned lb_own_blocks_held(const lb_own_blocks_t *b)
{
    unsigned n = 0;
    for (unsigned i = 0; i < LB_OWN_BLOCKS_KEPT; i++)
        n += b->block[i] != 0;
    return n;
}
#endif
