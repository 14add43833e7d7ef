/* libdw and libelf, opened at the first exit write that names frames
 * (see util/lazy_lib.h for why and for the failure contract;
 * util/lazy_deps.h for where the stubs sit). Each stub has the name and
 * prototype its library's header declares (the compiler checks them
 * against it) and is hidden; lb_debuginfo_libs_open is the check before
 * any of them. */
#include "util/lazy_deps.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libelf.h>

#include "util/lazy_lib.h"

static LB_LAZY_LIB(dw_lib, "libdw.so.1");
static LB_LAZY_LIB(elf_lib, "libelf.so.1");

bool lb_debuginfo_libs_open(void)
{
    char why[256];
    return lb_lazy_lib_open(&dw_lib, why, sizeof why) &&
           lb_lazy_lib_open(&elf_lib, why, sizeof why);
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
LB_LAZY_FN(dw_lib, Dwarf *, dwfl_module_getdwarf, (Dwfl_Module * m, Dwarf_Addr *bias), (m, bias))
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
LB_LAZY_FN(dw_lib, int, dwarf_child, (Dwarf_Die * die, Dwarf_Die *result), (die, result))
LB_LAZY_FN(dw_lib, const char *, dwarf_filesrc,
           (Dwarf_Files * f, size_t i, Dwarf_Word *mtime, Dwarf_Word *len), (f, i, mtime, len))
LB_LAZY_FN(dw_lib, const char *, dwarf_formstring, (Dwarf_Attribute * a), (a))
LB_LAZY_FN(dw_lib, int, dwarf_formudata, (Dwarf_Attribute * a, Dwarf_Word *v), (a, v))
LB_LAZY_FN(dw_lib, int, dwarf_getscopes, (Dwarf_Die * cu, Dwarf_Addr pc, Dwarf_Die **scopes),
           (cu, pc, scopes))
LB_LAZY_FN(dw_lib, int, dwarf_getscopes_die, (Dwarf_Die * die, Dwarf_Die **scopes), (die, scopes))
LB_LAZY_FN(dw_lib, int, dwarf_haspc, (Dwarf_Die * die, Dwarf_Addr pc), (die, pc))
LB_LAZY_FN(dw_lib, int, dwarf_siblingof, (Dwarf_Die * die, Dwarf_Die *result), (die, result))
LB_LAZY_FN(dw_lib, int, dwarf_getsrcfiles, (Dwarf_Die * cu, Dwarf_Files **files, size_t *n),
           (cu, files, n))
LB_LAZY_FN(dw_lib, int, dwarf_tag, (Dwarf_Die * die), (die))

/* --- libelf (symbol tables of modules without debug info) ------------------ */
LB_LAZY_FN(elf_lib, unsigned int, elf_version, (unsigned int v), (v))
LB_LAZY_FN(elf_lib, Elf *, elf_begin, (int fd, Elf_Cmd cmd, Elf *ref), (fd, cmd, ref))
LB_LAZY_FN(elf_lib, Elf *, elf_memory, (char *image, size_t size), (image, size))
LB_LAZY_FN(elf_lib, int, elf_end, (Elf * e), (e))
LB_LAZY_FN(elf_lib, Elf_Scn *, elf_nextscn, (Elf * e, Elf_Scn *s), (e, s))
LB_LAZY_FN(elf_lib, Elf_Scn *, elf_getscn, (Elf * e, size_t i), (e, i))
LB_LAZY_FN(elf_lib, Elf_Data *, elf_getdata, (Elf_Scn * s, Elf_Data *d), (s, d))
LB_LAZY_FN(elf_lib, Elf_Data *, elf_rawdata, (Elf_Scn * s, Elf_Data *d), (s, d))
LB_LAZY_FN(elf_lib, int, elf_getshdrstrndx, (Elf * e, size_t *n), (e, n))
LB_LAZY_FN(elf_lib, char *, elf_strptr, (Elf * e, size_t i, size_t off), (e, i, off))
LB_LAZY_FN(elf_lib, GElf_Shdr *, gelf_getshdr, (Elf_Scn * s, GElf_Shdr *dst), (s, dst))
LB_LAZY_FN(elf_lib, GElf_Ehdr *, gelf_getehdr, (Elf * e, GElf_Ehdr *dst), (e, dst))
LB_LAZY_FN(elf_lib, int, elf_getphdrnum, (Elf * e, size_t *n), (e, n))
LB_LAZY_FN(elf_lib, GElf_Phdr *, gelf_getphdr, (Elf * e, int i, GElf_Phdr *dst), (e, i, dst))
LB_LAZY_FN(elf_lib, GElf_Sym *, gelf_getsym, (Elf_Data * d, int i, GElf_Sym *dst), (d, i, dst))
LB_LAZY_FN(elf_lib, size_t, gelf_getnote,
           (Elf_Data * d, size_t off, GElf_Nhdr *res, size_t *name_off, size_t *desc_off),
           (d, off, res, name_off, desc_off))
