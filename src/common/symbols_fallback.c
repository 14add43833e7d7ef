/* symbols_fallback.c - names for stripped modules (see symbols_fallback.h):
 * MiniDebugInfo, then the build-id debug file, then .dynsym.
 *
 * Invariants: a module file is parsed at most once per debug root; its
 * three tables are sorted by start address and never change afterwards, so
 * returned names stay valid. All memory comes from malloc: this runs in
 * the writer, never in a signal handler or a lock wrapper. */
#include "common/symbols_fallback.h"

#include <fcntl.h>
#include <gelf.h>
#include <lzma.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/hex.h"

bool (*lb_elf_libs_ready)(void);
bool (*lb_xz_lib_ready)(void);

typedef struct fb_sym {
    uint64_t start, size; /* ELF addresses */
    char *name;           /* malloc'd */
} fb_sym_t;

typedef struct fb_table {
    fb_sym_t *syms;
    size_t n, cap;
} fb_table_t;

enum {
    FB_MINIDEBUG,
    FB_BUILDID,
    FB_DYNSYM,
    FB_SOURCES
};

typedef struct fb_module {
    struct fb_module *next;
    char *path, *debug_root;
    fb_table_t tab[FB_SOURCES]; /* in lookup order */
} fb_module_t;

static fb_module_t *modules; /* parsed files; see the invariants above */

static void add_sym(fb_table_t *t, uint64_t start, uint64_t size, const char *name)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        fb_sym_t *s = realloc(t->syms, cap * sizeof *s);
        if (!s)
            return; /* out of memory: this name stays unknown */
        t->syms = s;
        t->cap = cap;
    }
    char *copy = strdup(name);
    if (copy)
        t->syms[t->n++] = (fb_sym_t){ .start = start, .size = size, .name = copy };
}

/* Defined functions of every section of type `type` (SHT_SYMTAB or
 * SHT_DYNSYM) in e, into t. */
static void read_symbols(Elf *e, Elf64_Word type, fb_table_t *t)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn)) != NULL) {
        GElf_Shdr shdr;
        if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != type || !shdr.sh_entsize)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        size_t n = shdr.sh_size / shdr.sh_entsize;
        for (size_t i = 0; data && i < n; i++) {
            GElf_Sym sym;
            if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
                continue;
            int st = GELF_ST_TYPE(sym.st_info);
            if (st != STT_FUNC && st != STT_GNU_IFUNC)
                continue;
            const char *name = elf_strptr(e, shdr.sh_link, sym.st_name);
            if (name && *name)
                add_sym(t, sym.st_value, sym.st_size, name);
        }
    }
}

static Elf_Scn *section_named(Elf *e, const char *want)
{
    size_t shstrndx;
    Elf_Scn *scn = NULL;
    if (elf_getshdrstrndx(e, &shstrndx) != 0)
        return NULL;
    while ((scn = elf_nextscn(e, scn)) != NULL) {
        GElf_Shdr shdr;
        const char *name;
        if (gelf_getshdr(scn, &shdr) && (name = elf_strptr(e, shstrndx, shdr.sh_name)) &&
            strcmp(name, want) == 0)
            return scn;
    }
    return NULL;
}

/* xz-decompress in[0..len) into a malloc'd buffer; NULL on any error. */
static unsigned char *unxz(const unsigned char *in, size_t len, size_t *out_len)
{
    if (lb_xz_lib_ready && !lb_xz_lib_ready())
        return NULL;
    lzma_stream st = LZMA_STREAM_INIT;
    size_t cap = len * 4 + 4096;
    unsigned char *out = malloc(cap);
    if (!out || lzma_stream_decoder(&st, UINT64_MAX, 0) != LZMA_OK) {
        free(out);
        return NULL;
    }
    st.next_in = in;
    st.avail_in = len;
    st.next_out = out;
    st.avail_out = cap;
    lzma_ret rc;
    while ((rc = lzma_code(&st, LZMA_FINISH)) == LZMA_OK) {
        if (st.avail_out)
            continue;
        size_t used = cap;
        unsigned char *bigger = cap < (SIZE_MAX / 2) ? realloc(out, cap * 2) : NULL;
        if (!bigger)
            break;
        out = bigger;
        cap *= 2;
        st.next_out = out + used;
        st.avail_out = cap - used;
    }
    *out_len = st.total_out;
    lzma_end(&st);
    if (rc != LZMA_STREAM_END) {
        free(out);
        return NULL;
    }
    return out;
}

/* 1. MiniDebugInfo: .symtab of the ELF inside .gnu_debugdata. */
static void read_minidebuginfo(Elf *e, fb_table_t *t)
{
    Elf_Scn *scn = section_named(e, ".gnu_debugdata");
    Elf_Data *data = scn ? elf_rawdata(scn, NULL) : NULL;
    size_t len = 0;
    unsigned char *elf = data && data->d_size ? unxz(data->d_buf, data->d_size, &len) : NULL;
    if (!elf)
        return;
    Elf *inner = elf_memory((char *)elf, len);
    if (inner) {
        read_symbols(inner, SHT_SYMTAB, t);
        elf_end(inner);
    }
    free(elf); /* names were copied */
}

size_t lb_elf_build_id(Elf *e, unsigned char *id, size_t cap)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn)) != NULL) {
        GElf_Shdr shdr;
        if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        size_t off = 0, name_off, desc_off;
        GElf_Nhdr nh;
        while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                memcmp((char *)data->d_buf + name_off, "GNU", 4) == 0 && nh.n_descsz <= cap &&
                nh.n_descsz > 1) {
                memcpy(id, (char *)data->d_buf + desc_off, nh.n_descsz);
                return nh.n_descsz;
            }
        }
    }
    return 0;
}

/* 2. ROOT/.build-id/xx/yyyy.debug: its .symtab. */
static void read_buildid_file(Elf *e, const char *root, fb_table_t *t)
{
    unsigned char id[64];
    size_t n = lb_elf_build_id(e, id, sizeof id);
    char path[4096];
    int len = n ? snprintf(path, sizeof path, "%s/.build-id/%02x/", root, id[0]) : -1;
    if (len <= 0 || (size_t)len + 2 * n + 7 >= sizeof path)
        return;
    lb_hex_encode(id + 1, n - 1, path + len);
    len += (int)(2 * (n - 1));
    strcpy(path + len, ".debug");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    Elf *dbg = elf_begin(fd, ELF_C_READ, NULL);
    if (dbg) {
        read_symbols(dbg, SHT_SYMTAB, t);
        elf_end(dbg);
    }
    close(fd);
}

static int by_start(const void *a, const void *b)
{
    const fb_sym_t *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static fb_module_t *load(const char *path, const char *root)
{
    for (fb_module_t *m = modules; m; m = m->next)
        if (strcmp(m->path, path) == 0 && strcmp(m->debug_root, root) == 0)
            return m;
    fb_module_t *m = calloc(1, sizeof *m);
    if (!m || !(m->path = strdup(path)) || !(m->debug_root = strdup(root))) {
        if (m)
            free(m->path);
        free(m);
        return NULL;
    }
    int fd = (!lb_elf_libs_ready || lb_elf_libs_ready()) && elf_version(EV_CURRENT) != EV_NONE
                 ? open(path, O_RDONLY | O_CLOEXEC)
                 : -1;
    Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
    if (e) {
        read_minidebuginfo(e, &m->tab[FB_MINIDEBUG]);
        read_buildid_file(e, root, &m->tab[FB_BUILDID]);
        read_symbols(e, SHT_DYNSYM, &m->tab[FB_DYNSYM]);
        elf_end(e);
    }
    if (fd >= 0)
        close(fd);
    for (int i = 0; i < FB_SOURCES; i++)
        qsort(m->tab[i].syms, m->tab[i].n, sizeof *m->tab[i].syms, by_start);
    m->next = modules;
    modules = m;
    return m;
}

/* The function of t holding addr: the last one starting at or before it,
 * if addr is inside its size (or equal to its start when unsized). */
static const char *find(const fb_table_t *t, uint64_t addr)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->syms[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i-- > 0 && t->syms[i].start == t->syms[lo - 1].start;) {
        const fb_sym_t *s = &t->syms[i];
        if (addr < s->start + s->size || (s->size == 0 && addr == s->start))
            return s->name;
    }
    return NULL;
}

const char *lb_symbols_fallback_file(const char *path, uint64_t addr, const char *debug_root)
{
    fb_module_t *m = path ? load(path, debug_root ? debug_root : LB_DEBUG_ROOT) : NULL;
    for (int i = 0; m && i < FB_SOURCES; i++) {
        const char *name = find(&m->tab[i], addr);
        if (name)
            return name;
    }
    return NULL;
}

const char *lb_symbols_fallback(Dwfl_Module *mod, uintptr_t pc)
{
    const char *mainfile = NULL;
    Dwarf_Addr bias = 0;
    if (!mod || !dwfl_module_getelf(mod, &bias))
        return NULL;
    dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &mainfile, NULL);
    return lb_symbols_fallback_file(mainfile, (uint64_t)(pc - bias), LB_DEBUG_ROOT);
}
