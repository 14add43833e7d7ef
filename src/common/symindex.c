#include "common/symindex.h"

#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/symindex_cache.h"

typedef lb_symentry_t sym_entry_t;

typedef struct symindex {
    size_t n;
    sym_entry_t *e; /* sorted by lo, then rank */
    char *names;    /* the cached file the names point into (freed with
                     * the index), or NULL: libdwfl's module owns them */
} symindex_t;

/* A module whose symbols could not be indexed: ask libdwfl. */
static symindex_t no_index;

static int rank_of(const GElf_Sym *sym)
{
    switch (GELF_ST_BIND(sym->st_info)) {
    case STB_GLOBAL:
        return 0;
    case STB_WEAK:
        return 1;
    default:
        return 2;
    }
}

static int by_address(const void *a, const void *b)
{
    const sym_entry_t *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return x->rank - y->rank;
}

/* Sort e[0..n) by (lo, rank), stably, as qsort with by_address would.
 * A big module (gcc's cc1: ~30K function symbols) made qsort 40% of a
 * writing process's instructions (~800 a symbol: callback and 32-byte
 * moves); here each entry becomes one 64-bit key, (lo - min) above
 * (rank, position), sorted by 4 LSD radix passes of 11 bits over the key's
 * bits 22-63, and the entries are gathered in key order. Falls back to
 * qsort where the key cannot hold them (a span over 2^40 bytes, or over
 * 2^22 symbols). Returns false only when memory runs out (e unchanged). */
#define SORT_POS_BITS 20                  /* position in e (n < 2^20) ... */
#define SORT_LOW_BITS (SORT_POS_BITS + 2) /* ... below 2 bits of rank */
#define SORT_DIGIT    11
static bool sort_by_address(sym_entry_t *e, size_t n)
{
    uintptr_t min = UINTPTR_MAX, max = 0;
    for (size_t i = 0; i < n; i++) {
        min = e[i].lo < min ? e[i].lo : min;
        max = e[i].lo > max ? e[i].lo : max;
    }
    if (n >= ((size_t)1 << SORT_POS_BITS) || max - min >= ((uint64_t)1 << (64 - SORT_LOW_BITS))) {
        qsort(e, n, sizeof *e, by_address);
        return true;
    }
    uint64_t *keys =
        malloc(2 * n * sizeof *keys); /* two halves: a pass reads one, writes the other */
    sym_entry_t *out = malloc(n * sizeof *out);
    if (!keys || !out) {
        free(keys);
        free(out);
        return false;
    }
    uint64_t *key = keys, *tmp = keys + n;
    for (size_t i = 0; i < n; i++)
        key[i] = ((uint64_t)(e[i].lo - min) << SORT_LOW_BITS) |
                 ((uint64_t)e[i].rank << SORT_POS_BITS) | i;
    for (unsigned shift = SORT_POS_BITS; shift < 64; shift += SORT_DIGIT) {
        static size_t count[1u << SORT_DIGIT]; /* (16 KiB: not on the writer's stack) */
        memset(count, 0, sizeof count);
        for (size_t i = 0; i < n; i++)
            count[(key[i] >> shift) & ((1u << SORT_DIGIT) - 1)]++;
        size_t sum = 0;
        for (size_t d = 0; d < (1u << SORT_DIGIT); d++) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            tmp[count[(key[i] >> shift) & ((1u << SORT_DIGIT) - 1)]++] = key[i];
        uint64_t *swap = key;
        key = tmp;
        tmp = swap;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = e[key[i] & (((uint64_t)1 << SORT_POS_BITS) - 1)];
    memcpy(e, out, n * sizeof *e);
    free(keys);
    free(out);
    return true;
}

static bool indexed_type(const GElf_Sym *sym)
{
    int type = GELF_ST_TYPE(sym->st_info);
    return type == STT_FUNC || type == STT_GNU_IFUNC;
}

/* A module's own symbol table, where it is the one libdwfl reads: the
 * main file's .symtab, else its .dynsym, holding the `count` entries
 * libdwfl counts (so no separate debug file's table and no
 * MiniDebugInfo's), in an executable or shared object. */
typedef struct own_table {
    bool loadable; /* an executable or shared object */
    Elf *elf;
    GElf_Addr bias;
    GElf_Shdr sh;
    Elf_Data *data;
} own_table_t;

static bool find_own_table(Dwfl_Module *mod, int count, own_table_t *t)
{
    t->bias = 0;
    t->elf = dwfl_module_getelf(mod, &t->bias);
    GElf_Ehdr eh;
    t->loadable =
        t->elf && gelf_getehdr(t->elf, &eh) && (eh.e_type == ET_EXEC || eh.e_type == ET_DYN);
    if (!t->loadable)
        return false;
    Elf_Scn *table = NULL, *dynamic = NULL;
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(t->elf, scn));) {
        if (!gelf_getshdr(scn, &t->sh))
            return false;
        if (t->sh.sh_type == SHT_SYMTAB)
            table = scn;
        else if (t->sh.sh_type == SHT_DYNSYM)
            dynamic = scn;
    }
    table = table ? table : dynamic;
    t->data = table && gelf_getshdr(table, &t->sh) ? elf_getdata(table, NULL) : NULL;
    return t->data && t->sh.sh_entsize != 0 && t->sh.sh_size / t->sh.sh_entsize == (uint64_t)count;
}

/* The function symbols of the own table t (find_own_table) into e[],
 * read through libelf, where no symbol is in a special section. The
 * entries are those dwfl_module_getsym_info gives, names included (the
 * same string table), at a tenth of the instructions: cc1's 28,902
 * dynamic symbols cost ~17M through libdwfl. The entries added, or -1
 * where the table is not such (libdwfl reads it). */
static long read_own_table(const own_table_t *t, int count, sym_entry_t *e)
{
    long n = 0;
    for (int i = 1; i < count; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(t->data, i, &sym))
            return -1;
        if (sym.st_shndx == SHN_UNDEF || !indexed_type(&sym))
            continue;
        if (sym.st_shndx >= SHN_LORESERVE)
            return -1; /* absolute, common, an index elsewhere: libdwfl's rules */
        const char *name = elf_strptr(t->elf, t->sh.sh_link, sym.st_name);
        uintptr_t addr = (uintptr_t)(sym.st_value + t->bias);
        if (!name || !*name || addr == 0)
            continue;
        e[n++] = (sym_entry_t){ addr, (uintptr_t)sym.st_size, name, rank_of(&sym) };
    }
    return n;
}

/* Whether mod's index may come from the cache, or go there, and under
 * which key: a module with a build id (the same file, hence the same
 * symbols) whose table libdwfl counts more than
 * LB_SYMINDEX_CACHE_MIN_SYMBOLS entries, loaded at a bias (an executable
 * or shared object: its addresses are the file's plus the bias). The
 * key's table says where the entries come from: the own table (own,
 * find_own_table), else what libdwfl assembles (a separate debug file's
 * .symtab, MiniDebugInfo's), with the count it gives; a stripped copy of
 * a program keeps the build id but not its .symtab, and a debug file
 * installed later changes libdwfl's table: the key tells them apart; an
 * own table's bytes and names are summed into it too (prelink moves the
 * symbols, objcopy renames them, under the same build id). */
static bool key_for(Dwfl_Module *mod, int count, const own_table_t *t, bool own,
                    lb_symindex_key_t *key)
{
    if (!t->loadable || count <= LB_SYMINDEX_CACHE_MIN_SYMBOLS)
        return false;
    const unsigned char *bits = NULL;
    GElf_Addr vaddr = 0;
    int len = dwfl_module_build_id(mod, &bits, &vaddr);
    if (len <= 0 || len > LB_SYMINDEX_CACHE_MAX_BUILD_ID)
        return false;
    lb_symindex_table_t table = !own                          ? LB_SYMINDEX_TABLE_LIBDWFL
                                : t->sh.sh_type == SHT_DYNSYM ? LB_SYMINDEX_TABLE_DYNSYM
                                                              : LB_SYMINDEX_TABLE_SYMTAB;
    uint64_t content = 0;
    if (own) { /* the table's bytes and its names': a file rewritten under one build id differs */
        Elf_Scn *strtab = elf_getscn(t->elf, t->sh.sh_link);
        Elf_Data *names = strtab ? elf_getdata(strtab, NULL) : NULL;
        if (!names || !t->data->d_buf || !names->d_buf)
            return false;
        content = lb_symindex_cache_sum(t->data->d_buf, t->data->d_size, 1);
        content = lb_symindex_cache_sum(names->d_buf, names->d_size, content);
    }
    *key = (lb_symindex_key_t){ bits, (size_t)len, table, (uint64_t)count, content };
    return true;
}

static bool cache_key(Dwfl_Module *mod, int count, const own_table_t *t, bool own,
                      lb_symindex_key_t *key)
{
    return lb_symindex_cache_on() && key_for(mod, count, t, own, key);
}

bool lb_symindex_cache_key_of(Dwfl_Module *mod, lb_symindex_key_t *key)
{
    int count = dwfl_module_getsymtab(mod);
    if (count <= 1)
        return false;
    own_table_t t;
    bool own = find_own_table(mod, count, &t);
    return key_for(mod, count, &t, own, key);
}

static symindex_t *build(Dwfl_Module *mod)
{
    int count = dwfl_module_getsymtab(mod);
    if (count <= 1)
        return &no_index;
    symindex_t *ix = calloc(1, sizeof *ix);
    if (!ix)
        return &no_index;
    own_table_t t;
    lb_symindex_key_t key;
    bool own = find_own_table(mod, count, &t);
    bool cached = cache_key(mod, count, &t, own, &key);
    if (cached && (ix->e = lb_symindex_cache_load(&key, (uintptr_t)t.bias, &ix->n, &ix->names)))
        return ix;
    sym_entry_t *e = malloc((size_t)count * sizeof *e);
    if (!e) {
        free(ix);
        return &no_index;
    }
    long own_read = own ? read_own_table(&t, count, e) : -1;
    size_t n = own_read >= 0 ? (size_t)own_read : 0;
    for (int i = 1; own_read < 0 && i < count; i++) {
        GElf_Sym sym;
        GElf_Addr addr = 0;
        GElf_Word shndx = 0;
        const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);
        if (!name || !*name || addr == 0 || sym.st_shndx == SHN_UNDEF || !indexed_type(&sym))
            continue;
        e[n++] = (sym_entry_t){ (uintptr_t)addr, (uintptr_t)sym.st_size, name, rank_of(&sym) };
    }
    if (n == 0 || !sort_by_address(e, n)) {
        free(e);
        free(ix);
        return &no_index;
    }
    ix->n = n;
    ix->e = e;
    /* An own table read by libdwfl after all (a symbol in a special
     * section) is not cached: its key says the own table. */
    if (cached && (own_read >= 0 || key.table == LB_SYMINDEX_TABLE_LIBDWFL))
        lb_symindex_cache_store(&key, (uintptr_t)t.bias, e, n);
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

lb_symindex_answer_t lb_symentries_find(const lb_symentry_t *e, size_t n, uintptr_t pc,
                                        const char **name, uintptr_t *lo, uintptr_t *hi)
{
    /* The last entry with lo <= pc, then back to the first of that address
     * (the preferred binding sorts first). */
    size_t a = 0, b = n;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (e[mid].lo <= pc)
            a = mid + 1;
        else
            b = mid;
    }
    if (a == 0)
        return LB_SYMINDEX_MISS;
    size_t at = a - 1;
    while (at > 0 && e[at - 1].lo == e[at].lo)
        at--;
    /* Among the symbols starting there, the first (best ranked) that
     * covers pc; a sizeless one covers up to the next symbol's start. */
    uintptr_t next = a < n ? e[a].lo : UINTPTR_MAX;
    for (size_t i = at; i < n && e[i].lo == e[at].lo; i++) {
        const sym_entry_t *s = &e[i];
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

lb_symindex_answer_t lb_symindex_find(Dwfl_Module *mod, uintptr_t pc, const char **name,
                                      uintptr_t *lo, uintptr_t *hi)
{
    const symindex_t *ix = index_of(mod);
    if (ix->n == 0)
        return LB_SYMINDEX_NONE;
    return lb_symentries_find(ix->e, ix->n, pc, name, lo, hi);
}

const lb_symentry_t *lb_symindex_entries(Dwfl_Module *mod, size_t *n)
{
    const symindex_t *ix = index_of(mod);
    *n = ix->n;
    return ix->n ? ix->e : NULL;
}

bool lb_symindex_each(Dwfl_Module *mod, lb_symindex_visit_fn visit, void *ctx)
{
    const symindex_t *ix = index_of(mod);
    for (size_t i = 0; i < ix->n; i++)
        visit(ctx, ix->e[i].lo, ix->e[i].size, ix->e[i].name);
    return ix->n > 0;
}

static int release_one(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
                       void *arg)
{
    symindex_t *ix = *userdata;
    if (ix && ix != &no_index) {
        free(ix->e);
        free(ix->names);
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
