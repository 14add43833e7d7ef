#include "report/writer/symindex.h"

#include <gelf.h>
#include <stdlib.h>

typedef struct sym_entry {
    uintptr_t lo, size;
    const char *name; /* owned by libdwfl's module */
    int rank;         /* 0 global, 1 weak, 2 local: lower is preferred */
} sym_entry_t;

typedef struct symindex {
    size_t n;
    sym_entry_t *e; /* sorted by lo, then rank */
} symindex_t;

/* A module whose symbols could not be indexed: ask libdwfl. */
static symindex_t no_index;

static int rank_of(const GElf_Sym *sym)
{
    switch (GELF_ST_BIND(sym->st_info)) {
    case STB_GLOBAL: return 0;
    case STB_WEAK: return 1;
    default: return 2;
    }
}

static int by_address(const void *a, const void *b)
{
    const sym_entry_t *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return x->rank - y->rank;
}

static symindex_t *build(Dwfl_Module *mod)
{
    int count = dwfl_module_getsymtab(mod);
    if (count <= 1)
        return &no_index;
    symindex_t *ix = calloc(1, sizeof *ix);
    sym_entry_t *e = ix ? malloc((size_t)count * sizeof *e) : NULL;
    if (!e) {
        free(ix);
        return &no_index;
    }
    size_t n = 0;
    for (int i = 1; i < count; i++) {
        GElf_Sym sym;
        GElf_Addr addr = 0;
        GElf_Word shndx = 0;
        const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);
        int type = GELF_ST_TYPE(sym.st_info);
        if (!name || !*name || addr == 0 || sym.st_shndx == SHN_UNDEF ||
            (type != STT_FUNC && type != STT_GNU_IFUNC))
            continue;
        e[n++] = (sym_entry_t){ (uintptr_t)addr, (uintptr_t)sym.st_size, name, rank_of(&sym) };
    }
    if (n == 0) {
        free(e);
        free(ix);
        return &no_index;
    }
    qsort(e, n, sizeof *e, by_address);
    ix->n = n;
    ix->e = e;
    return ix;
}

static symindex_t *index_of(Dwfl_Module *mod)
{
    void **slot = NULL;
    dwfl_module_info(mod, &slot, NULL, NULL, NULL, NULL, NULL, NULL);
    if (!slot)
        return &no_index;
    if (!*slot)
        *slot = build(mod);
    return *slot;
}

lb_symindex_answer_t lb_symindex_find(Dwfl_Module *mod, uintptr_t pc, const char **name,
                                      uintptr_t *lo, uintptr_t *hi)
{
    const symindex_t *ix = index_of(mod);
    if (ix->n == 0)
        return LB_SYMINDEX_NONE;
    /* The last entry with lo <= pc, then back to the first of that address
     * (the preferred binding sorts first). */
    size_t a = 0, b = ix->n;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (ix->e[mid].lo <= pc)
            a = mid + 1;
        else
            b = mid;
    }
    if (a == 0)
        return LB_SYMINDEX_MISS;
    size_t at = a - 1;
    while (at > 0 && ix->e[at - 1].lo == ix->e[at].lo)
        at--;
    /* Among the symbols starting there, the first (best ranked) that
     * covers pc; a sizeless one covers up to the next symbol's start. */
    uintptr_t next = a < ix->n ? ix->e[a].lo : UINTPTR_MAX;
    for (size_t i = at; i < ix->n && ix->e[i].lo == ix->e[at].lo; i++) {
        const sym_entry_t *s = &ix->e[i];
        uintptr_t end = s->size ? s->lo + s->size : next;
        if (pc < end) {
            *name = s->name;
            *lo = s->lo;
            *hi = end;
            return LB_SYMINDEX_HIT;
        }
    }
    return LB_SYMINDEX_MISS;
}

static int release_one(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
                       void *arg)
{
    symindex_t *ix = *userdata;
    if (ix && ix != &no_index) {
        free(ix->e);
        free(ix);
    }
    *userdata = NULL;
    return DWARF_CB_OK;
}

void lb_symindex_release_all(Dwfl *dwfl)
{
    if (dwfl)
        dwfl_getmodules(dwfl, release_one, NULL, 0);
}
