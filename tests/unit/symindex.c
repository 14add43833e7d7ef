/* Unit tests for src/common/symindex.h: a module's index holds exactly
 * the function symbols libdwfl gives (dwfl_module_getsym_info: defined,
 * STT_FUNC or STT_GNU_IFUNC, named, at a nonzero address), the same
 * names, sizes and addresses in address order, preferred bindings first.
 * The index reads a module's own table through libelf where that is the
 * table libdwfl reads (its .symtab, else its .dynsym, as many entries as
 * libdwfl counts): this test program (a .symtab) and the system's
 * libstdc++ and SQLite (a .dynsym alone, as distributions ship them)
 * are such modules, and the test says so before it compares. */
#include "check.h"

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/module_names.h"
#include "common/symindex.h"
#include "util/lazy_deps.h"

typedef struct entry {
    uintptr_t lo, size;
    const char *name;
    int rank, order;
} entry_t;

typedef struct entries {
    entry_t *e;
    size_t n;
} entries_t;

static void keep(void *ctx, uintptr_t lo, uintptr_t size, const char *name)
{
    entries_t *x = ctx;
    x->e = realloc(x->e, (x->n + 1) * sizeof *x->e);
    ASSERT_NOT_NULL(x->e);
    x->e[x->n++] = (entry_t){ .lo = lo, .size = size, .name = name };
}

static int by_address(const void *a, const void *b)
{
    const entry_t *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank - y->rank;
    return x->order - y->order;
}

/* What libdwfl gives of mod's function symbols, in the index's order. */
static entries_t from_dwfl(Dwfl_Module *mod)
{
    entries_t x = { 0 };
    int count = dwfl_module_getsymtab(mod);
    for (int i = 1; i < count; i++) {
        GElf_Sym sym;
        GElf_Addr addr = 0;
        GElf_Word shndx = 0;
        const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);
        int type = GELF_ST_TYPE(sym.st_info);
        if (!name || !*name || addr == 0 || sym.st_shndx == SHN_UNDEF ||
            (type != STT_FUNC && type != STT_GNU_IFUNC))
            continue;
        keep(&x, (uintptr_t)addr, (uintptr_t)sym.st_size, name);
        int bind = GELF_ST_BIND(sym.st_info);
        x.e[x.n - 1].rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
        x.e[x.n - 1].order = i;
    }
    qsort(x.e, x.n, sizeof *x.e, by_address);
    return x;
}

/* Whether mod's own table is the one libdwfl reads (symindex.c's test). */
static bool own_table_read(Dwfl_Module *mod)
{
    GElf_Addr bias;
    Elf *elf = dwfl_module_getelf(mod, &bias);
    Elf_Scn *table = NULL, *dynamic = NULL;
    GElf_Shdr sh;
    for (Elf_Scn *scn = NULL; elf && (scn = elf_nextscn(elf, scn));) {
        ASSERT_NOT_NULL(gelf_getshdr(scn, &sh));
        if (sh.sh_type == SHT_SYMTAB)
            table = scn;
        else if (sh.sh_type == SHT_DYNSYM)
            dynamic = scn;
    }
    table = table ? table : dynamic;
    return table && gelf_getshdr(table, &sh) && sh.sh_entsize &&
           sh.sh_size / sh.sh_entsize == (uint64_t)dwfl_module_getsymtab(mod);
}

/* path's index against libdwfl's symbols; whether its own table was
 * read (false also where the file is not there). */
static bool check_module(const char *path)
{
    if (access(path, R_OK) != 0)
        return false;
    Dwfl *dwfl = dwfl_begin(&lb_file_dwfl_callbacks);
    ASSERT_NOT_NULL(dwfl);
    Dwfl_Module *mod = dwfl_report_elf(dwfl, path, path, -1, 0x100000, false);
    ASSERT_NOT_NULL(mod);
    dwfl_report_end(dwfl, NULL, NULL);
    bool own = own_table_read(mod);
    entries_t want = from_dwfl(mod), got = { 0 };
    ASSERT_TRUE(lb_symindex_each(mod, keep, &got));
    ASSERT_GT(want.n, 0u);
    ASSERT_EQ(got.n, want.n);
    for (size_t i = 0; i < want.n; i++) {
        ASSERT_UEQ(got.e[i].lo, want.e[i].lo);
        ASSERT_UEQ(got.e[i].size, want.e[i].size);
        ASSERT_STR_EQ(got.e[i].name, want.e[i].name);
    }
    free(want.e);
    free(got.e);
    lb_symindex_release_all(dwfl);
    dwfl_end(dwfl);
    return own;
}

static void test_index_is_libdwfl_symbols(void)
{
    ASSERT_TRUE(lb_debuginfo_libs_open());
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    ASSERT_GT(n, 0);
    self[n] = '\0';
    ASSERT_TRUE(check_module(self)); /* built with -g: its .symtab */
    const char *shipped[] = { "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
                              "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0" };
    int own = 0;
    for (size_t i = 0; i < sizeof shipped / sizeof *shipped; i++)
        own += check_module(shipped[i]);
    printf("# %d shipped libraries with a table of their own\n", own);
}

CHECK_MAIN(test_index_is_libdwfl_symbols)
