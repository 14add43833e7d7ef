/* See module_names.h. */
#include "common/module_names.h"

#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/debuginfo_find.h"
#include "common/hex.h"
#include "common/runtime_frames.h"
#include "common/symbols_fallback.h"
#include "common/symindex.h"

static char *debuginfo_path;

const Dwfl_Callbacks lb_file_dwfl_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = lb_find_debuginfo_local,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

const char *lb_name_without_version(char *buf, size_t size, const char *name)
{
    const char *at = name ? strchr(name, '@') : NULL;
    if (!at || at == name || (size_t)(at - name) >= size)
        return name;
    memcpy(buf, name, (size_t)(at - name));
    buf[at - name] = '\0';
    return buf;
}

bool lb_module_names(Dwfl_Module *mod, uintptr_t pc, const char *module, char *name_buf,
                     size_t name_size, lb_symbol_t *out)
{
    /* Names: libdwfl's symbol table (it reads .symtab, MiniDebugInfo, the
     * build-id debug file, else .dynsym), indexed. Where that table has
     * function symbols, a pc none of them holds stays unnamed: the
     * fallback and dladdr would scan the same symbols again. */
    const char *sym = NULL;
    uintptr_t lo, hi;
    bool indexed = lb_symindex_find(mod, pc, &sym, &lo, &hi) != LB_SYMINDEX_NONE;
    if (!indexed)
        sym = dwfl_module_addrname(mod, pc);
    out->function = lb_name_without_version(name_buf, name_size, sym);
    if (!out->function && !indexed)
        out->function = lb_symbols_fallback(mod, pc);
    /* Source lines only for the program's own modules. A runtime
     * library's frame is never a release site (common/runtime_frames.h),
     * and its DWARF, where a -dbg package installs it, is compressed:
     * libc6-dbg's costs every writing process ~50 ms of inflate. */
    if (!lb_runtime_module(module))
        lb_dwarf_source(mod, pc, &out->file, &out->line, &out->n_inline, out->inline_frames);
    return indexed;
}

bool lb_module_build_id(Dwfl_Module *mod, char *hex, size_t size)
{
    Dwarf_Addr bias;
    const unsigned char *bits = NULL;
    GElf_Addr vaddr;
    /* libdwfl reads the note once the module's ELF is open */
    int n = mod && dwfl_module_getelf(mod, &bias) ? dwfl_module_build_id(mod, &bits, &vaddr) : 0;
    hex[0] = '\0';
    if (n <= 0 || (size_t)n * 2 + 1 > size)
        return false;
    lb_hex_encode(bits, (size_t)n, hex);
    return true;
}

/* One module file: a Dwfl of its own, so that files from processes with
 * different layouts never overlap. */
typedef struct module_file {
    char *path;
    char build_id[41];
    Dwfl *dwfl;       /* NULL: the file cannot be read, or is another build */
    Dwfl_Module *mod; /* reported at bias 0 */
    uintptr_t low;    /* where its first mapping starts at bias 0 */
} module_file_t;

struct lb_module_files {
    module_file_t *files;
    uint32_t n, cap;
    char name[512]; /* the last function name, its version cut */
};

lb_module_files_t *lb_module_files_open(void)
{
    return calloc(1, sizeof(lb_module_files_t));
}

/* Where the module's first mapping starts at bias 0: the page of its
 * first loadable segment, where the kernel maps it and /proc/PID/maps
 * shows it, the start the recording process's offsets count from
 * (report/writer/modmap.h). */
static bool first_mapping(Dwfl_Module *mod, uintptr_t *low)
{
    Dwarf_Addr bias;
    Elf *e = dwfl_module_getelf(mod, &bias);
    size_t n;
    if (!e || elf_getphdrnum(e, &n) != 0)
        return false;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD) {
            *low = (uintptr_t)(ph.p_vaddr + bias) & ~(page - 1);
            return true;
        }
    }
    return false;
}

/* The file at path with that build id, read on its first lookup. */
static module_file_t *module_file(lb_module_files_t *f, const char *path, const char *build_id)
{
    for (uint32_t i = 0; i < f->n; i++)
        if (strcmp(f->files[i].path, path) == 0 && strcmp(f->files[i].build_id, build_id) == 0)
            return &f->files[i];
    if (strlen(build_id) >= sizeof f->files->build_id)
        return NULL;
    if (f->n == f->cap) {
        uint32_t cap = f->cap ? 2 * f->cap : 8;
        module_file_t *grown = realloc(f->files, cap * sizeof *grown);
        if (!grown)
            return NULL;
        f->files = grown;
        f->cap = cap;
    }
    module_file_t *m = &f->files[f->n];
    *m = (module_file_t){ .path = strdup(path) };
    if (!m->path)
        return NULL;
    memcpy(m->build_id, build_id, strlen(build_id) + 1);
    f->n++;
    char found[sizeof m->build_id];
    if ((!lb_elf_libs_ready || lb_elf_libs_ready()) &&
        (m->dwfl = dwfl_begin(&lb_file_dwfl_callbacks)) != NULL &&
        (m->mod = dwfl_report_elf(m->dwfl, path, path, -1, 0, false)) != NULL &&
        dwfl_report_end(m->dwfl, NULL, NULL) == 0 &&
        lb_module_build_id(m->mod, found, sizeof found) && strcmp(found, build_id) == 0 &&
        first_mapping(m->mod, &m->low))
        return m;
    if (m->dwfl)
        dwfl_end(m->dwfl);
    m->dwfl = NULL;
    m->mod = NULL;
    return m;
}

bool lb_module_files_name(lb_module_files_t *f, const char *path, const char *build_id,
                          uintptr_t offset, lb_symbol_t *out)
{
    *out = (lb_symbol_t){ 0 };
    module_file_t *m = f && path && build_id && build_id[0] ? module_file(f, path, build_id) : NULL;
    if (!m || !m->mod)
        return false;
    out->module = m->path;
    lb_module_names(m->mod, m->low + offset, m->path, f->name, sizeof f->name, out);
    return true;
}

void lb_module_files_close(lb_module_files_t *f)
{
    if (!f)
        return;
    for (uint32_t i = 0; i < f->n; i++) {
        if (f->files[i].dwfl) {
            lb_symindex_release_all(f->files[i].dwfl);
            dwfl_end(f->files[i].dwfl);
        }
        free(f->files[i].path);
    }
    free(f->files);
    free(f);
}
