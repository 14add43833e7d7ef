/* Code address -> module, function, file:line, with elfutils' libdwfl
 * over this process's own mappings. Used once, at the final write, for
 * the addresses the run's symbol cache does not name (symcache.h).
 * Strings returned stay valid until lb_symbolizer_close. */
#ifndef LB_SYMBOLIZE_H
#define LB_SYMBOLIZE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/module_names.h" /* lb_symbol_t */
#include "report/writer/modmap.h"

typedef struct lb_symbolizer lb_symbolizer_t;

/* NULL without memory. libdw and the process's maps are read at the
 * first lookup that needs them; if libdwfl cannot read this process,
 * lookups yield unknowns through dladdr only. */
lb_symbolizer_t *lb_symbolizer_open(void);
/* The process's modules as the writer read them (modmap.h), which must
 * outlive s: the module of a cut marker's address (marker_frames.h) is
 * then named from them, without loading libdw. */
void lb_symbolizer_use_modules(lb_symbolizer_t *s, const lb_modmap_t *modules);
/* pc lies in a module of those (lb_symbolizer_use_modules) that was not
 * unloaded since: its code is mapped. */
bool lb_symbolizer_maps(const lb_symbolizer_t *s, uintptr_t pc);
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
