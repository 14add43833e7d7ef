/* Tail-called releases: see tailcall.h for the contract.
 *
 * Runs only at the final write, single-threaded, with malloc allowed. */
#include "report/writer/tailcall.h"

#include <stdlib.h>
#include <string.h>

#include "util/call_dest.h"
#include "util/own_memory.h"

#define LB_TAIL_MAX_FUNC (256 * 1024) /* larger "functions" are not scanned */
#define LB_TAIL_DEPTH    3            /* F may tail-jump to G that jumps to the entry */

/* lb_through_plt(addr), from the memo where it was followed before. Only
 * for the stub a recorded call went through: its slot was bound before
 * the call ran, and stays so (a stub a scan meets may not be bound yet). */
static uintptr_t through_plt(lb_plt_memo_t *memo, uintptr_t addr)
{
    unsigned n = memo ? memo->n : 0;
    for (unsigned i = 0; i < n; i++)
        if (memo->stub[i] == addr)
            return memo->dest[i];
    uintptr_t dest = lb_through_plt(addr);
    if (memo && n < sizeof memo->stub / sizeof memo->stub[0]) {
        memo->stub[n] = addr;
        memo->dest[n] = dest;
        memo->n = n + 1;
    }
    return dest;
}

/* Jumps in [lo, hi) that leave the function: returns the first whose
 * destination is a release entry (directly, or through a function that
 * itself tail-jumps to one, up to depth), else 0. */
static uintptr_t find_jump(lb_symbolizer_t *s, uintptr_t fn, lb_release_entry_fn is_entry,
                           int depth)
{
    uintptr_t lo, hi;
    if (!lb_symbol_range(s, fn, &lo, &hi) || lo != fn || hi <= lo || hi - lo > LB_TAIL_MAX_FUNC)
        return 0;
    size_t n = hi - lo;
    uint8_t *code = calloc(1, n + 8);
    if (!code || !lb_read_own((const void *)lo, code, n)) {
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
            if (!lb_read_own_word(lo + i + 6 + (intptr_t)disp, &dest))
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
        dest = lb_through_plt(dest);
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
    return onward ? find_jump(s, onward, is_entry, depth - 1) : 0;
}

uintptr_t lb_tailcall_jump(lb_symbolizer_t *s, uintptr_t call_pc, lb_release_entry_fn is_entry,
                           lb_plt_memo_t *memo)
{
#if defined(__x86_64__)
    if (!s || call_pc < 16)
        return 0;
    /* the call ran (the path recorded its return): in a module still
     * mapped, its bytes are read in place */
    uintptr_t fn =
        lb_symbolizer_maps(s, call_pc) ? lb_call_dest_ran(call_pc + 1) : lb_call_dest(call_pc + 1);
    if (!fn)
        return 0;
    fn = through_plt(memo, fn);
    if (is_entry(fn))
        return 0; /* a direct call: the caller is the site */
    return find_jump(s, fn, is_entry, LB_TAIL_DEPTH);
#else
    (void)s;
    (void)call_pc;
    (void)is_entry;
    (void)memo;
    return 0;
#endif
}
