/* Source lines from DWARF through libdwfl: the file:line at a code address
 * and the chain of inlined calls there. Shared by the writer (its
 * symbolizer over the profiled process's modules) and the CLI (frames
 * named at report time from a debug file debuginfod served). Depends on
 * libdw only; strings returned live as long as the module's Dwfl. */
#ifndef LB_COMMON_DWARF_SOURCE_H
#define LB_COMMON_DWARF_SOURCE_H
#include <elfutils/libdwfl.h>

#define LB_MAX_INLINE 8

/* One source-level frame at an address: the function whose code it is,
 * and the line being executed in it (for an inlined call, the outer
 * frame's line is the call site). */
typedef struct lb_source_frame {
    const char *function; /* NULL if unknown */
    const char *file;     /* NULL without debug info */
    int line;             /* 0 without debug info */
} lb_source_frame_t;

/* The source position of pc (an address in mod's address space) and the
 * inlined calls there, innermost first: inline_frames[0] is the deepest
 * inlined function at its own line; *file and *line end up the outermost
 * (real) function's, which for inlined code is the call site of the
 * outermost inlined call. *n_inline is how many (0: not inlined, at most
 * LB_MAX_INLINE). Code that no function of its compile unit holds (crt
 * files without debug info) gets no file and line. Never fails: without
 * DWARF everything stays NULL/0. */
void lb_dwarf_source(Dwfl_Module *mod, Dwarf_Addr pc, const char **file, int *line, int *n_inline,
                     lb_source_frame_t inline_frames[LB_MAX_INLINE]);
#endif
