/* Tail-called releases: see tailcall.h for the contract.
 *
 * Runs in a write (the final one, or a time window's), on one thread,
 * with malloc allowed. */
#include "report/writer/tailcall.h"

#include <stdlib.h>
#include <string.h>

#include "common/scratch.h"
#include "util/call_dest.h"

#define LB_TAIL_MAX_FUNC (256 * 1024) /* larger "functions" are not scanned */
#define LB_TAIL_DEPTH    3            /* F may tail-jump to G that jumps to the entry */

/* The copies cache's reads go through: its room taken at the first; NULL
 * without a cache (each read a system call of its own, as also where no
 * room could be had). */
static lb_own_blocks_t *blocks_of(lb_tailcall_cache_t *cache)
{
    if (!cache)
        return NULL;
    if (!cache->blocks.room)
        cache->blocks.room = lb_scratch_malloc((size_t)LB_OWN_BLOCKS_KEPT * LB_OWN_BLOCK);
    return &cache->blocks;
}

void lb_tailcall_cache_forget_blocks(lb_tailcall_cache_t *cache)
{
    lb_own_blocks_forget(&cache->blocks);
}

void lb_tailcall_cache_forget_stubs(lb_tailcall_cache_t *cache)
{
    lb_own_blocks_forget(&cache->blocks);
    cache->n = 0;
}

void lb_tailcall_cache_free(lb_tailcall_cache_t *cache)
{
    lb_scratch_free(cache->blocks.room);
    memset(cache, 0, sizeof *cache);
}

/* Where addr leads through a PLT stub (lb_through_plt), not on from a
 * release entry, which is no stub: one that forwards in one jump through
 * a pointer looks like one, and followed on would lead past the entry
 * (tests/unit/report_symbolize.c); and one read fewer where a stub leads
 * to one. */
static uintptr_t through_plt(lb_own_blocks_t *blocks, uintptr_t addr, lb_release_entry_fn is_entry)
{
    uintptr_t dest = lb_plt_hop(blocks, addr);
    return dest == addr || is_entry(dest) ? dest : lb_plt_hop(blocks, dest);
}

/* through_plt for the stub a recorded call went through, from the cache
 * where it was followed before. Only for such a stub: its slot was bound
 * before the call ran, and stays so (a stub a scan meets may not be
 * bound yet). */
static uintptr_t through_call_plt(lb_tailcall_cache_t *cache, uintptr_t addr,
                                  lb_release_entry_fn is_entry)
{
    unsigned n = cache ? cache->n : 0;
    for (unsigned i = 0; i < n; i++)
        if (cache->stub[i] == addr)
            return cache->dest[i];
    uintptr_t dest = through_plt(blocks_of(cache), addr, is_entry);
    if (cache && n < sizeof cache->stub / sizeof cache->stub[0]) {
        cache->stub[n] = addr;
        cache->dest[n] = dest;
        cache->n = n + 1;
    }
    return dest;
}

/* Jumps in [lo, hi) that leave the function: returns the first whose
 * destination is a release entry (directly, or through a function that
 * itself tail-jumps to one, up to depth), else 0. */
static uintptr_t find_jump(lb_symbolizer_t *s, lb_own_blocks_t *blocks, uintptr_t fn,
                           lb_release_entry_fn is_entry, int depth)
{
    uintptr_t lo, hi;
    if (!lb_symbol_range(s, fn, &lo, &hi) || lo != fn || hi <= lo || hi - lo > LB_TAIL_MAX_FUNC)
        return 0;
    size_t n = hi - lo;
    uint8_t *code = calloc(1, n + 8);
    if (!code || !lb_own_blocks_read(blocks, lo, code, n)) {
        free(code);
        return 0;
    }
    uintptr_t onward = 0; /* first jump into another function */
    for (size_t i = 0; i + 5 <= n; i++) {
        size_t len;
        uintptr_t dest;
        int32_t disp;
        if (code[i] == 0xe9) { /* jmp rel32 */
            len = 5;
        } else if (code[i] == 0x0f && (code[i + 1] & 0xf0) == 0x80 && i + 6 <= n) {
            len = 6; /* jcc rel32 */
        } else if (code[i] == 0xff && code[i + 1] == 0x25 && i + 6 <= n) {
            memcpy(&disp, &code[i + 2], sizeof disp); /* jmp *disp(%rip) */
            if (!lb_own_blocks_read(blocks, lo + i + 6 + (intptr_t)disp, &dest, sizeof dest))
                continue;
            len = 0;
        } else {
            continue;
        }
        if (len) {
            memcpy(&disp, &code[i + len - 4], sizeof disp);
            dest = lo + i + len + (intptr_t)disp;
        }
        if (dest >= lo && dest < hi)
            continue; /* a branch inside the function */
        dest = through_plt(blocks, dest, is_entry);
        if (is_entry(dest)) {
            free(code);
            return lo + i;
        }
        if (!onward && depth > 0) {
            uintptr_t g_lo, g_hi;
            if (lb_symbol_range(s, dest, &g_lo, &g_hi) && g_lo == dest)
                onward = dest;
        }
    }
    free(code);
    return onward ? find_jump(s, blocks, onward, is_entry, depth - 1) : 0;
}

uintptr_t lb_tailcall_jump(lb_symbolizer_t *s, uintptr_t call_pc, lb_release_entry_fn is_entry,
                           lb_tailcall_cache_t *cache)
{
#if defined(__x86_64__)
    if (!s || call_pc < 16)
        return 0;
    /* the call ran (the path recorded its return): in a module still
     * mapped, its bytes are read in place */
    lb_own_blocks_t *blocks = blocks_of(cache);
    uintptr_t fn = lb_symbolizer_maps(s, call_pc) ? lb_call_dest_ran(blocks, call_pc + 1)
                                                  : lb_call_dest(blocks, call_pc + 1);
    if (!fn)
        return 0;
    fn = through_call_plt(cache, fn, is_entry);
    if (is_entry(fn))
        return 0; /* a direct call: the caller is the site */
    return find_jump(s, blocks, fn, is_entry, LB_TAIL_DEPTH);
#else
    (void)s;
    (void)call_pc;
    (void)is_entry;
    (void)cache;
    return 0;
#endif
}
