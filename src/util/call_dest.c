/* Call destinations decoded from our own code (call_dest.h). Every read
 * goes through lb_read_own, a wrong guess never faults, but the call
 * bytes lb_call_dest_ran reads in place: code that ran and is mapped. */
#include "util/call_dest.h"

#include <string.h>

#include "util/own_memory.h"

uintptr_t lb_through_plt(uintptr_t addr)
{
    for (int hop = 0; hop < 2; hop++) {
        uint8_t b[11];
        if (!lb_read_own((const void *)addr, b, sizeof b))
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
        if (!lb_read_own_word(slot, &dest) || dest == 0)
            return addr;
        addr = dest;
    }
    return addr;
}

/* The call ending at ra, from its bytes b (the 6 before ra). */
static uintptr_t decode_call(uintptr_t ra, const uint8_t b[6])
{
    int32_t disp;
    if (b[1] == 0xe8) { /* call rel32 */
        memcpy(&disp, &b[2], sizeof disp);
        return ra + (intptr_t)disp;
    }
    if (b[0] == 0xff && b[1] == 0x15) { /* call *disp(%rip) (-fno-plt) */
        uintptr_t dest;
        memcpy(&disp, &b[2], sizeof disp);
        return lb_read_own_word(ra + (intptr_t)disp, &dest) ? dest : 0;
    }
    return 0;
}

uintptr_t lb_call_dest(uintptr_t ra)
{
    uint8_t b[6];
    return lb_read_own((const void *)(ra - 6), b, sizeof b) ? decode_call(ra, b) : 0;
}

uintptr_t lb_call_dest_ran(uintptr_t ra)
{
    enum {
        PAGE = 4096
    };
    if (ra < 6 || (ra - 6) / PAGE != (ra - 1) / PAGE)
        return lb_call_dest(ra);
    uint8_t b[6];
    memcpy(b, (const void *)(ra - 6), sizeof b);
    return decode_call(ra, b);
}
