/* Code address -> module, function, file:line, with elfutils' libdwfl
 * over this process's own mappings. Used once, at the final write, for
 * the addresses the run's symbol cache does not name (symcache.h).
 * Strings returned stay valid until lb_symbolizer_close. */
#ifndef LB_SYMBOLIZE_H
#define LB_SYMBOLIZE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/dwarf_source.h" /* lb_source_frame_t, LB_MAX_INLINE */

typedef struct lb_symbol {
    const char *module;   /* module file, NULL if unknown */
    uintptr_t base;       /* module load address */
    const char *function; /* symbol (static ones included), NULL if unknown */
    const char *file;     /* DWARF source file, NULL without debug info */
    int line;             /* 0 without debug info */
    /* Inlined frames at this address, innermost first; inline[0] is the
     * deepest inlined function. n_inline = 0 when the code is not inlined.
     * The outermost (real) function is function/file/line above, with
     * line set to the call site of the outermost inlined call. */
    int n_inline;
    lb_source_frame_t inline_frames[LB_MAX_INLINE];
} lb_symbol_t;

typedef struct lb_symbolizer lb_symbolizer_t;

/* NULL without memory. libdw and the process's maps are read at the
 * first lookup that needs them; if libdwfl cannot read this process,
 * lookups yield unknowns through dladdr only. */
lb_symbolizer_t *lb_symbolizer_open(void);
/* Never fails: unknown fields are NULL/0. Works with a NULL symbolizer. */
void lb_symbolize(lb_symbolizer_t *s, uintptr_t pc, lb_symbol_t *out);
/* The bounds [*lo, *hi) of the symbol (function) holding pc, from the
 * symbol table; false when pc is in no sized symbol. */
bool lb_symbol_range(lb_symbolizer_t *s, uintptr_t pc, uintptr_t *lo, uintptr_t *hi);
/* The GNU build id of the module holding pc, as lowercase hex in
 * hex[size]; false (and hex "") when it has none or is unknown. */
bool lb_symbol_build_id(lb_symbolizer_t *s, uintptr_t pc, char *hex, size_t size);
/* Where the names of every address in the module holding pc come from its
 * function symbols alone (no DWARF is read for it: a runtime library, or
 * a module without debug information, and it has function symbols, so
 * lb_symbolize names a pc by the symbol holding it or not at all): visits
 * them as lb_symindex_each does, with starts relative to the module's
 * start, names without their version suffix; returns true. False when
 * the module's names need more than that, pc lies in no mapped module, or
 * a symbol starts below the module's start (the callee then ignores what
 * it was given). */
typedef void (*lb_function_visit_fn)(void *ctx, uintptr_t offset, uintptr_t size, const char *name);
bool lb_symbol_functions(lb_symbolizer_t *s, uintptr_t pc, lb_function_visit_fn visit, void *ctx);
void lb_symbolizer_close(lb_symbolizer_t *s);
#endif
