/* The DWARF scopes that hold an address, for inline chains (the writer's
 * symbolizer). Header-only: it calls libdw, which only some of the
 * programs that include common/ link (the library through its lazy
 * stubs). No state. */
#ifndef LB_COMMON_DWARF_SCOPES_H
#define LB_COMMON_DWARF_SCOPES_H
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdlib.h>

#define LB_DWARF_MAX_NESTING 64 /* namespaces and types around a function; inlined calls in one */

/* Can a DIE of this tag own functions without holding code itself? */
static inline bool lb_dwarf_holds_functions(int tag)
{
    return tag == DW_TAG_namespace || tag == DW_TAG_structure_type || tag == DW_TAG_class_type ||
           tag == DW_TAG_union_type || tag == DW_TAG_enumeration_type ||
           tag == DW_TAG_variant_part || tag == DW_TAG_variant;
}

/* The function among parent's descendants (through namespaces and types)
 * that holds pc, into *out. */
static inline bool lb_dwarf_function_in(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *out, int depth)
{
    Dwarf_Die child;
    if (depth > LB_DWARF_MAX_NESTING || dwarf_child(parent, &child) != 0)
        return false;
    do {
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_subprogram && dwarf_haspc(&child, pc) == 1) {
            *out = child;
            return true;
        }
        if (lb_dwarf_holds_functions(tag) && lb_dwarf_function_in(&child, pc, out, depth + 1))
            return true;
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

/* The child of parent that is an inlined call or block holding pc. */
static inline bool lb_dwarf_code_child(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *out)
{
    Dwarf_Die child;
    if (dwarf_child(parent, &child) != 0)
        return false;
    do {
        int tag = dwarf_tag(&child);
        if ((tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block) &&
            dwarf_haspc(&child, pc) == 1) {
            *out = child;
            return true;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

/* Like libdw's dwarf_getscopes(cu, pc, scopes): the DIEs of cu that hold
 * pc, innermost first (inlined calls and lexical blocks, then the
 * function), in *scopes (malloc'd, the caller frees it). libdw 0.188's
 * dwarf_getscopes finds none in rustc's DWARF, where every function sits
 * in namespaces and types; this walks them, and then the function's
 * inlined calls and blocks. Returns the count, 0 when no function of cu
 * holds pc (*scopes NULL), or -1 when memory runs out. */
static inline int lb_dwarf_scopes_walked(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die **scopes)
{
    Dwarf_Die chain[LB_DWARF_MAX_NESTING];
    int n = 0;
    *scopes = NULL;
    if (!lb_dwarf_function_in(cu, pc, &chain[0], 0))
        return 0;
    for (n = 1; n < LB_DWARF_MAX_NESTING && lb_dwarf_code_child(&chain[n - 1], pc, &chain[n]); n++)
        ;
    Dwarf_Die *out = malloc((size_t)n * sizeof *out);
    if (!out)
        return -1;
    for (int i = 0; i < n; i++) /* innermost first, as dwarf_getscopes */
        out[i] = chain[n - 1 - i];
    *scopes = out;
    return n;
}
#endif
