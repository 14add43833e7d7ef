/* Frames that lockblame itself puts into a call path, as pcs no code
 * has: the sampler stores them (src/sampler/unwind.c), the writer names
 * them (src/report/writer/symbolize.c), and the CLI reads them back by
 * name as runtime frames, never a release site (common/runtime_frames.h).
 * Their names start with '['.
 *
 *   LB_SIGNAL_FRAME_PC(N)  "[signal SIGNAME]": the kernel's signal frame
 *                          of signal N ("[signal]": N = 0, not known);
 *                          below it in the path is the code the signal
 *                          interrupted, above it the handler.
 *   LB_CUT_FRAME_PC(pc)    "[unknown: no unwind info in MODULE]": the walk
 *                          stopped at pc, in code without unwind
 *                          information that no frame-pointer step could
 *                          pass either; the path's callers above it are
 *                          not known. It is the path's outermost frame.
 *
 * Neither kind of pc is a canonical x86-64 address, so no code has one:
 * signal markers lie in the last page of the address space, cut markers
 * are the pc where the walk stopped (below 2^47) with bit 56 set. Both
 * keep their top four bits apart from every code address's, as the
 * writer's frame keys shift pcs left by four. Header-only; depends on
 * nothing. */
#ifndef LB_COMMON_MARKER_FRAMES_H
#define LB_COMMON_MARKER_FRAMES_H
#include <stdbool.h>
#include <stdint.h>

#define LB_MARKER_FRAME_BASE      ((uintptr_t)0xfffffffffffff000u)
#define LB_SIGNAL_FRAME_PC(signo) (LB_MARKER_FRAME_BASE + 0x100u + (uintptr_t)((signo)&0xff))

#define LB_CUT_FRAME_TAG    ((uintptr_t)1 << 56)
#define LB_CUT_FRAME_PC(pc) ((uintptr_t)(pc) | LB_CUT_FRAME_TAG)

/* pc is a marker frame of lockblame's. */
static inline bool lb_marker_frame_pc(uintptr_t pc)
{
    return pc >= LB_MARKER_FRAME_BASE || (pc >> 56) == 1;
}

/* pc is a cut marker; *where: the pc at which the walk stopped. */
static inline bool lb_cut_frame_marker(uintptr_t pc, uintptr_t *where)
{
    if ((pc >> 56) != 1)
        return false;
    *where = pc & (LB_CUT_FRAME_TAG - 1);
    return true;
}

/* pc is a signal-frame marker; *signo: its signal, 0 if not known. */
static inline bool lb_signal_frame_marker(uintptr_t pc, int *signo)
{
    if (pc < LB_SIGNAL_FRAME_PC(0) || pc > LB_SIGNAL_FRAME_PC(0xff))
        return false;
    *signo = (int)(pc - LB_SIGNAL_FRAME_PC(0));
    return true;
}
#endif
