/* See dwarf_source.h. */
#include "common/dwarf_source.h"
#include "common/dwarf_scopes.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdlib.h>

/* Name of a subprogram or inlined-subroutine DIE (through its abstract
 * origin); prefers the linkage (mangled) name, as the symbol table does. */
static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    const char *name = NULL;
    if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr))
        name = dwarf_formstring(&attr);
    if (!name && dwarf_attr_integrate(die, DW_AT_name, &attr))
        name = dwarf_formstring(&attr);
    return name;
}

/* The chain of inlined calls at pc (innermost first), from the CU's
 * scopes. Frame i's line is where it is executing; the caller's line is
 * inline DIE i's DW_AT_call_line. */
static void inline_chain(Dwfl_Module *mod, Dwarf_Addr pc, const char **file_io, int *line_io,
                         int *n_inline, lb_source_frame_t *frames)
{
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = dwfl_module_addrdie(mod, pc, &bias);
    Dwarf_Die *scopes = NULL;
    int n = cu ? dwarf_getscopes(cu, pc - bias, &scopes) : 0;
    if (n == 0 && cu) /* (rustc's DWARF: common/dwarf_scopes.h) */
        n = lb_dwarf_scopes_walked(cu, pc - bias, &scopes);
    bool has_function = false;
    for (int i = 0; i < n; i++)
        has_function |= dwarf_tag(&scopes[i]) == DW_TAG_subprogram;
    if (n > 0 && !has_function) {
        /* At some addresses (a tail jump at the end of inlined code, a
         * call in a cold block split off the function) the outer inlined
         * calls' ranges do not cover pc, and dwarf_getscopes returns only
         * the innermost instance (or a block in it) and the CU. The DIE
         * tree still nests every level: take the chain from there. */
        Dwarf_Die *nested = NULL;
        int m = dwarf_getscopes_die(&scopes[0], &nested);
        if (m > n) {
            free(scopes);
            scopes = nested;
            n = m;
        } else {
            free(nested);
        }
    }
    Dwarf_Files *files = NULL;
    size_t nfiles = 0;
    if (n > 0 && dwarf_getsrcfiles(cu, &files, &nfiles) != 0)
        files = NULL;
    const char *file = *file_io;
    int line = *line_io;
    /* For code inlined into a function, libdw may give only the inlined
     * instance(s) and the CU, without the enclosing subprogram: that is
     * code of a function too (the symbol table names it). */
    bool in_function = false;
    for (int i = 0; i < n; i++)
        in_function |= dwarf_tag(&scopes[i]) == DW_TAG_subprogram ||
                       dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine;
    if (!in_function) {
        /* No function of this CU holds pc (e.g. _start, from crt files
         * without debug info): libdw's line is a neighbour's, not ours. */
        *file_io = NULL;
        *line_io = 0;
        free(scopes);
        return;
    }
    for (int i = 0; i < n && *n_inline < LB_MAX_INLINE; i++) {
        if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
            continue;
        lb_source_frame_t *f = &frames[(*n_inline)++];
        f->function = die_name(&scopes[i]);
        f->file = file;
        f->line = line;
        Dwarf_Attribute attr;
        Dwarf_Word value;
        file = NULL;
        line = 0;
        if (dwarf_attr(&scopes[i], DW_AT_call_file, &attr) && dwarf_formudata(&attr, &value) == 0 &&
            files)
            file = dwarf_filesrc(files, value, NULL, NULL);
        if (dwarf_attr(&scopes[i], DW_AT_call_line, &attr) && dwarf_formudata(&attr, &value) == 0)
            line = (int)value;
    }
    if (*n_inline) { /* the real function executes the outermost call */
        *file_io = file;
        *line_io = line;
    }
    free(scopes);
}

void lb_dwarf_source(Dwfl_Module *mod, Dwarf_Addr pc, const char **file, int *line, int *n_inline,
                     lb_source_frame_t inline_frames[LB_MAX_INLINE])
{
    *file = NULL;
    *line = 0;
    *n_inline = 0;
    Dwfl_Line *source = dwfl_module_getsrc(mod, pc);
    if (source) {
        int lineno = 0;
        *file = dwfl_lineinfo(source, NULL, &lineno, NULL, NULL, NULL);
        *line = lineno;
    }
    inline_chain(mod, pc, file, line, n_inline, inline_frames);
}
