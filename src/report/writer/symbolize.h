/* Code address -> module, function, file:line, with elfutils' libdwfl
 * over this process's own mappings. Used once, at the final write.
 * Strings returned stay valid until lb_symbolizer_close. */
#ifndef LB_SYMBOLIZE_H
#define LB_SYMBOLIZE_H
#include <stdint.h>

typedef struct lb_symbol {
    const char *module;   /* module file, NULL if unknown */
    uintptr_t base;       /* module load address */
    const char *function; /* symbol (static ones included), NULL if unknown */
    const char *file;     /* DWARF source file, NULL without debug info */
    int line;             /* 0 without debug info */
} lb_symbol_t;

typedef struct lb_symbolizer lb_symbolizer_t;

/* NULL if libdwfl cannot read this process (lookups then yield unknowns
 * through dladdr only). */
lb_symbolizer_t *lb_symbolizer_open(void);
/* Never fails: unknown fields are NULL/0. Works with a NULL symbolizer. */
void lb_symbolize(lb_symbolizer_t *s, uintptr_t pc, lb_symbol_t *out);
void lb_symbolizer_close(lb_symbolizer_t *s);
#endif
