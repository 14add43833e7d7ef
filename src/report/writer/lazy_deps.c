/* The writer's libraries (SQLite, libdw, libelf, liblzma), opened at the
 * first exit write that needs them rather than at every process start:
 * see util/lazy_lib.h for why and for the failure contract. Each stub
 * below has the name and prototype its library's header declares (the
 * compiler checks them against it) and is hidden. lb_writer_libs_open is
 * the writer's one check before any of them is called. */
#include "report/writer/lazy_deps.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libelf.h>
#include <lzma.h>
#include <sqlite3.h>
#include <stdarg.h>

#include "util/lazy_lib.h"

static LB_LAZY_LIB(sqlite_lib, "libsqlite3.so.0");
static LB_LAZY_LIB(dw_lib, "libdw.so.1");
static LB_LAZY_LIB(elf_lib, "libelf.so.1");
static LB_LAZY_LIB(lzma_lib, "liblzma.so.5");

bool lb_writer_sqlite_open(char *why, unsigned whylen)
{
    return lb_lazy_lib_open(&sqlite_lib, why, whylen);
}

bool lb_writer_debuginfo_open(void)
{
    char why[256];
    return lb_lazy_lib_open(&dw_lib, why, sizeof why) &&
           lb_lazy_lib_open(&elf_lib, why, sizeof why);
}

bool lb_writer_lzma_open(void)
{
    char why[256];
    return lb_lazy_lib_open(&lzma_lib, why, sizeof why);
}

/* --- SQLite --------------------------------------------------------------- */
LB_LAZY_FN(sqlite_lib, int, sqlite3_open_v2, (const char *f, sqlite3 **db, int fl, const char *vfs),
           (f, db, fl, vfs))
LB_LAZY_FN(sqlite_lib, int, sqlite3_close, (sqlite3 * db), (db))
LB_LAZY_FN(sqlite_lib, int, sqlite3_exec,
           (sqlite3 * db, const char *sql, int (*cb)(void *, int, char **, char **), void *arg,
            char **err),
           (db, sql, cb, arg, err))
LB_LAZY_FN(sqlite_lib, int, sqlite3_prepare_v2,
           (sqlite3 * db, const char *sql, int n, sqlite3_stmt **st, const char **tail),
           (db, sql, n, st, tail))
LB_LAZY_FN(sqlite_lib, int, sqlite3_step, (sqlite3_stmt * st), (st))
LB_LAZY_FN(sqlite_lib, int, sqlite3_reset, (sqlite3_stmt * st), (st))
LB_LAZY_FN(sqlite_lib, int, sqlite3_finalize, (sqlite3_stmt * st), (st))
LB_LAZY_FN(sqlite_lib, int, sqlite3_clear_bindings, (sqlite3_stmt * st), (st))
LB_LAZY_FN(sqlite_lib, int, sqlite3_bind_double, (sqlite3_stmt * st, int i, double v), (st, i, v))
LB_LAZY_FN(sqlite_lib, int, sqlite3_bind_int, (sqlite3_stmt * st, int i, int v), (st, i, v))
LB_LAZY_FN(sqlite_lib, int, sqlite3_bind_int64, (sqlite3_stmt * st, int i, sqlite3_int64 v),
           (st, i, v))
LB_LAZY_FN(sqlite_lib, int, sqlite3_bind_null, (sqlite3_stmt * st, int i), (st, i))
LB_LAZY_FN(sqlite_lib, int, sqlite3_bind_text,
           (sqlite3_stmt * st, int i, const char *v, int n, void (*free_fn)(void *)),
           (st, i, v, n, free_fn))
LB_LAZY_FN(sqlite_lib, double, sqlite3_column_double, (sqlite3_stmt * st, int i), (st, i))
LB_LAZY_FN(sqlite_lib, int, sqlite3_column_int, (sqlite3_stmt * st, int i), (st, i))
LB_LAZY_FN(sqlite_lib, sqlite3_int64, sqlite3_column_int64, (sqlite3_stmt * st, int i), (st, i))
LB_LAZY_FN(sqlite_lib, const unsigned char *, sqlite3_column_text, (sqlite3_stmt * st, int i),
           (st, i))
LB_LAZY_FN(sqlite_lib, int, sqlite3_busy_handler, (sqlite3 * db, int (*fn)(void *, int), void *arg),
           (db, fn, arg))
LB_LAZY_FN(sqlite_lib, int, sqlite3_busy_timeout, (sqlite3 * db, int ms), (db, ms))
LB_LAZY_FN(sqlite_lib, int, sqlite3_errcode, (sqlite3 * db), (db))
LB_LAZY_FN(sqlite_lib, const char *, sqlite3_errmsg, (sqlite3 * db), (db))
LB_LAZY_VOID(sqlite_lib, sqlite3_free, (void *p), (p))
LB_LAZY_FN(sqlite_lib, char *, sqlite3_vmprintf, (const char *fmt, va_list ap), (fmt, ap))

/* Variadic: forwarded through the va_list form (SQLite's own %q/%w). */
char *sqlite3_mprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = sqlite3_vmprintf(fmt, ap);
    va_end(ap);
    return s;
}

/* --- libdw (DWARF: function names, inlines, file:line) --------------------- */
LB_LAZY_FN(dw_lib, Dwfl *, dwfl_begin, (const Dwfl_Callbacks *cb), (cb))
LB_LAZY_VOID(dw_lib, dwfl_end, (Dwfl * d), (d))
LB_LAZY_FN(dw_lib, int, dwfl_linux_proc_report, (Dwfl * d, pid_t pid), (d, pid))
LB_LAZY_FN(dw_lib, Dwfl_Module *, dwfl_report_elf,
           (Dwfl * d, const char *name, const char *file, int fd, GElf_Addr base, bool add_p_vaddr),
           (d, name, file, fd, base, add_p_vaddr))
LB_LAZY_FN(dw_lib, int, dwfl_build_id_find_elf,
           (Dwfl_Module * m, void **ud, const char *name, Dwarf_Addr base, char **file, Elf **elfp),
           (m, ud, name, base, file, elfp))
LB_LAZY_FN(dw_lib, int, dwfl_offline_section_address,
           (Dwfl_Module * m, void **ud, const char *modname, Dwarf_Addr base, const char *secname,
            GElf_Word shndx, const GElf_Shdr *shdr, Dwarf_Addr *addr),
           (m, ud, modname, base, secname, shndx, shdr, addr))
LB_LAZY_FN(dw_lib, int, dwfl_report_end,
           (Dwfl * d, int (*removed)(Dwfl_Module *, void *, const char *, Dwarf_Addr, void *),
            void *arg),
           (d, removed, arg))
LB_LAZY_FN(dw_lib, int, dwfl_linux_proc_find_elf,
           (Dwfl_Module * m, void **ud, const char *name, Dwarf_Addr base, char **file, Elf **elfp),
           (m, ud, name, base, file, elfp))
LB_LAZY_FN(dw_lib, int, dwfl_standard_find_debuginfo,
           (Dwfl_Module * m, void **ud, const char *name, Dwarf_Addr base, const char *file,
            const char *debuglink, GElf_Word crc, char **debuginfo),
           (m, ud, name, base, file, debuglink, crc, debuginfo))
LB_LAZY_FN(dw_lib, int, dwfl_build_id_find_debuginfo,
           (Dwfl_Module * m, void **ud, const char *name, Dwarf_Addr base, const char *file,
            const char *debuglink, GElf_Word crc, char **debuginfo),
           (m, ud, name, base, file, debuglink, crc, debuginfo))
LB_LAZY_FN(dw_lib, int, dwfl_module_build_id,
           (Dwfl_Module * m, const unsigned char **bits, GElf_Addr *vaddr), (m, bits, vaddr))
LB_LAZY_FN(dw_lib, ptrdiff_t, dwfl_getmodules,
           (Dwfl * d, int (*cb)(Dwfl_Module *, void **, const char *, Dwarf_Addr, void *),
            void *arg, ptrdiff_t off),
           (d, cb, arg, off))
LB_LAZY_FN(dw_lib, Dwfl_Module *, dwfl_addrmodule, (Dwfl * d, Dwarf_Addr a), (d, a))
LB_LAZY_FN(dw_lib, Dwarf_Die *, dwfl_module_addrdie,
           (Dwfl_Module * m, Dwarf_Addr a, Dwarf_Addr *bias), (m, a, bias))
LB_LAZY_FN(dw_lib, const char *, dwfl_module_addrinfo,
           (Dwfl_Module * m, GElf_Addr a, GElf_Off *off, GElf_Sym *sym, GElf_Word *shndx,
            Elf **elfp, Dwarf_Addr *bias),
           (m, a, off, sym, shndx, elfp, bias))
LB_LAZY_FN(dw_lib, const char *, dwfl_module_addrname, (Dwfl_Module * m, GElf_Addr a), (m, a))
LB_LAZY_FN(dw_lib, Elf *, dwfl_module_getelf, (Dwfl_Module * m, GElf_Addr *bias), (m, bias))
LB_LAZY_FN(dw_lib, Dwfl_Line *, dwfl_module_getsrc, (Dwfl_Module * m, Dwarf_Addr a), (m, a))
LB_LAZY_FN(dw_lib, const char *, dwfl_module_getsym_info,
           (Dwfl_Module * m, int i, GElf_Sym *sym, GElf_Addr *a, GElf_Word *shndx, Elf **elfp,
            Dwarf_Addr *bias),
           (m, i, sym, a, shndx, elfp, bias))
LB_LAZY_FN(dw_lib, int, dwfl_module_getsymtab, (Dwfl_Module * m), (m))
LB_LAZY_FN(dw_lib, const char *, dwfl_module_info,
           (Dwfl_Module * m, void ***ud, Dwarf_Addr *start, Dwarf_Addr *end, Dwarf_Addr *dwbias,
            Dwarf_Addr *symbias, const char **mainfile, const char **debugfile),
           (m, ud, start, end, dwbias, symbias, mainfile, debugfile))
LB_LAZY_FN(dw_lib, const char *, dwfl_lineinfo,
           (Dwfl_Line * l, Dwarf_Addr *a, int *line, int *col, Dwarf_Word *mtime, Dwarf_Word *len),
           (l, a, line, col, mtime, len))
LB_LAZY_FN(dw_lib, Dwarf_Attribute *, dwarf_attr,
           (Dwarf_Die * die, unsigned int name, Dwarf_Attribute *res), (die, name, res))
LB_LAZY_FN(dw_lib, Dwarf_Attribute *, dwarf_attr_integrate,
           (Dwarf_Die * die, unsigned int name, Dwarf_Attribute *res), (die, name, res))
LB_LAZY_FN(dw_lib, const char *, dwarf_filesrc,
           (Dwarf_Files * f, size_t i, Dwarf_Word *mtime, Dwarf_Word *len), (f, i, mtime, len))
LB_LAZY_FN(dw_lib, const char *, dwarf_formstring, (Dwarf_Attribute * a), (a))
LB_LAZY_FN(dw_lib, int, dwarf_formudata, (Dwarf_Attribute * a, Dwarf_Word *v), (a, v))
LB_LAZY_FN(dw_lib, int, dwarf_getscopes, (Dwarf_Die * cu, Dwarf_Addr pc, Dwarf_Die **scopes),
           (cu, pc, scopes))
LB_LAZY_FN(dw_lib, int, dwarf_getscopes_die, (Dwarf_Die * die, Dwarf_Die **scopes), (die, scopes))
LB_LAZY_FN(dw_lib, int, dwarf_getsrcfiles, (Dwarf_Die * cu, Dwarf_Files **files, size_t *n),
           (cu, files, n))
LB_LAZY_FN(dw_lib, int, dwarf_tag, (Dwarf_Die * die), (die))

/* --- libelf (symbol tables of modules without debug info) ------------------ */
LB_LAZY_FN(elf_lib, unsigned int, elf_version, (unsigned int v), (v))
LB_LAZY_FN(elf_lib, Elf *, elf_begin, (int fd, Elf_Cmd cmd, Elf *ref), (fd, cmd, ref))
LB_LAZY_FN(elf_lib, Elf *, elf_memory, (char *image, size_t size), (image, size))
LB_LAZY_FN(elf_lib, int, elf_end, (Elf * e), (e))
LB_LAZY_FN(elf_lib, Elf_Scn *, elf_nextscn, (Elf * e, Elf_Scn *s), (e, s))
LB_LAZY_FN(elf_lib, Elf_Data *, elf_getdata, (Elf_Scn * s, Elf_Data *d), (s, d))
LB_LAZY_FN(elf_lib, Elf_Data *, elf_rawdata, (Elf_Scn * s, Elf_Data *d), (s, d))
LB_LAZY_FN(elf_lib, int, elf_getshdrstrndx, (Elf * e, size_t *n), (e, n))
LB_LAZY_FN(elf_lib, char *, elf_strptr, (Elf * e, size_t i, size_t off), (e, i, off))
LB_LAZY_FN(elf_lib, GElf_Shdr *, gelf_getshdr, (Elf_Scn * s, GElf_Shdr *dst), (s, dst))
LB_LAZY_FN(elf_lib, GElf_Sym *, gelf_getsym, (Elf_Data * d, int i, GElf_Sym *dst), (d, i, dst))
LB_LAZY_FN(elf_lib, size_t, gelf_getnote,
           (Elf_Data * d, size_t off, GElf_Nhdr *res, size_t *name_off, size_t *desc_off),
           (d, off, res, name_off, desc_off))

/* --- liblzma (MiniDebugInfo: .gnu_debugdata) -------------------------------- */
LB_LAZY_FN(lzma_lib, lzma_ret, lzma_stream_decoder,
           (lzma_stream * s, uint64_t memlimit, uint32_t flags), (s, memlimit, flags))
LB_LAZY_FN(lzma_lib, lzma_ret, lzma_code, (lzma_stream * s, lzma_action a), (s, a))
LB_LAZY_VOID(lzma_lib, lzma_end, (lzma_stream * s), (s))
