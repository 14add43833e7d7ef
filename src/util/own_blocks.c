/* Blocks of this process's memory copied whole (contract in own_blocks.h). */
#include "util/own_blocks.h"

#include <string.h>

#include "util/own_memory.h"

_Static_assert(4096 % LB_OWN_BLOCK == 0, "a block lies inside one page");

/* The copy of the block at block, made now if there is none; NULL when
 * the block cannot be read. */
static const uint8_t *block_copy(lb_own_blocks_t *b, uintptr_t block)
{
    for (unsigned i = 0; i < LB_OWN_BLOCKS_KEPT; i++)
        if (b->block[i] == block)
            return b->room + (size_t)i * LB_OWN_BLOCK;
    unsigned slot = b->next;
    uint8_t *copy = b->room + (size_t)slot * LB_OWN_BLOCK;
    b->block[slot] = 0;
    if (!lb_read_own((const void *)block, copy, LB_OWN_BLOCK))
        return NULL;
    b->block[slot] = block;
    b->next = (slot + 1) % LB_OWN_BLOCKS_KEPT;
    return copy;
}

bool lb_own_blocks_read(lb_own_blocks_t *b, uintptr_t addr, void *out, size_t len)
{
    uintptr_t first = addr & ~(uintptr_t)(LB_OWN_BLOCK - 1);
    if (!b || !b->room || len == 0 || addr + len < addr ||
        addr + len - first > 2 * (size_t)LB_OWN_BLOCK || first == 0)
        return lb_read_own((const void *)addr, out, len);
    uint8_t *to = out;
    while (len) {
        uintptr_t block = addr & ~(uintptr_t)(LB_OWN_BLOCK - 1);
        size_t at = addr - block, n = LB_OWN_BLOCK - at < len ? LB_OWN_BLOCK - at : len;
        const uint8_t *copy = block_copy(b, block);
        if (!copy)
            return false;
        memcpy(to, copy + at, n);
        to += n;
        addr += n;
        len -= n;
    }
    return true;
}

void lb_own_blocks_forget(lb_own_blocks_t *b)
{
    memset(b->block, 0, sizeof b->block);
    b->next = 0;
}
