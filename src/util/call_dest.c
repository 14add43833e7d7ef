/* Call destinations decoded from our own code (call_dest.h). Every read
 * goes through lb_own_blocks_read, a wrong guess never faults, but the call
 * bytes lb_call_dest_ran reads in place: code that ran and is mapped. */
#include "util/call_dest.h"

#include <string.h>

uintptr_t lb_plt_hop(lb_own_blocks_t *blocks, uintptr_t addr)
{
    uint8_t b[11];
    if (!lb_own_blocks_read(blocks, addr, b, sizeof b))
        return addr;
    size_t i = 0;
    if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
        i = 4;
    if (b[i] == 0xf2)
        i++;
    if (b[i] != 0xff || b[i + 1] != 0x25)
        return addr;
    int32_t disp;
    memcpy(&disp, &b[i + 2], sizeof disp);
    uintptr_t slot = addr + i + 6 + (intptr_t)disp, dest;
    if (!lb_own_blocks_read(blocks, slot, &dest, sizeof dest) || dest == 0)
        return addr;
    return dest;
}

uintptr_t lb_through_plt(lb_own_blocks_t *blocks, uintptr_t addr)
{
    uintptr_t dest = lb_plt_hop(blocks, addr);
    return dest == addr ? addr : lb_plt_hop(blocks, dest);
}

/* The call ending at ra, from its bytes b (the 6 before ra). */
static uintptr_t decode_call(lb_own_blocks_t *blocks, uintptr_t ra, const uint8_t b[6])
{
    int32_t disp;
    if (b[1] == 0xe8) { /* call rel32 */
        memcpy(&disp, &b[2], sizeof disp);
        return ra + (intptr_t)disp;
    }
    if (b[0] == 0xff && b[1] == 0x15) { /* call *disp(%rip) (-fno-plt) */
        uintptr_t dest;
        memcpy(&disp, &b[2], sizeof disp);
        return lb_own_blocks_read(blocks, ra + (intptr_t)disp, &dest, sizeof dest) ? dest : 0;
    }
    return 0;
}

uintptr_t lb_call_dest(lb_own_blocks_t *blocks, uintptr_t ra)
{
    uint8_t b[6];
    return lb_own_blocks_read(blocks, ra - 6, b, sizeof b) ? decode_call(blocks, ra, b) : 0;
}

uintptr_t lb_call_dest_ran(lb_own_blocks_t *blocks, uintptr_t ra)
{
    enum {
        PAGE = 4096
    };
    if (ra < 6 || (ra - 6) / PAGE != (ra - 1) / PAGE)
        return lb_call_dest(blocks, ra);
    uint8_t b[6];
    memcpy(b, (const void *)(ra - 6), sizeof b);
    return decode_call(blocks, ra, b);
}
