/* liblzma, opened when a module's names are in a compressed MiniDebugInfo
 * section (.gnu_debugdata): see util/lazy_lib.h for why and for the
 * failure contract, util/lazy_deps.h for where the stubs sit. Hidden stubs
 * with the names and prototypes of lzma.h; lb_lzma_open is the check
 * before them. */
#include "util/lazy_deps.h"

#include <lzma.h>

#include "util/lazy_lib.h"

static LB_LAZY_LIB(lzma_lib, "liblzma.so.5");

bool lb_lzma_open(void)
{
    char why[256];
    return lb_lazy_lib_open(&lzma_lib, why, sizeof why);
}

LB_LAZY_FN(lzma_lib, lzma_ret, lzma_stream_decoder,
           (lzma_stream * s, uint64_t memlimit, uint32_t flags), (s, memlimit, flags))
LB_LAZY_FN(lzma_lib, lzma_ret, lzma_code, (lzma_stream * s, lzma_action a), (s, a))
LB_LAZY_VOID(lzma_lib, lzma_end, (lzma_stream * s), (s))
