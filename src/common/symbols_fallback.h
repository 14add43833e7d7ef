/* Function names for code in stripped modules, where libdwfl found none
 * (symbolize.c calls lb_symbols_fallback when dwfl_module_addrname gives
 * NULL). Sources, in this order, the first that names the address wins:
 *   1. MiniDebugInfo: the .gnu_debugdata section, an xz-compressed ELF
 *      whose .symtab keeps the local function symbols (Fedora's recipe);
 *   2. DEBUG_ROOT/.build-id/xx/yyyy.debug, found by the module's
 *      NT_GNU_BUILD_ID note (Debian's -dbgsym packages), its .symtab;
 *   3. the module's own .dynsym (exported functions).
 * Each module file is read once; its tables live until the process ends
 * (the writer runs once, at exit or exec, so nothing is freed).
 * Not thread-safe: only the writer, which runs on one thread at a time,
 * calls it. */
#ifndef LB_SYMBOLS_FALLBACK_H
#define LB_SYMBOLS_FALLBACK_H
#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>

#define LB_DEBUG_ROOT "/usr/lib/debug"

/* Whether libdw and libelf, and liblzma (MiniDebugInfo), can be called
 * now, asked before the first call into them: the library opens them on
 * first use (util/lazy_deps.h) and its writer sets these to the
 * functions that do; NULL (the CLI, which links them) means they can.
 * common/module_names.c asks the first before it reads a module file. */
extern bool (*lb_elf_libs_ready)(void);
extern bool (*lb_xz_lib_ready)(void);

/* The name of the function at pc in mod, or NULL. Never fails otherwise;
 * the string stays valid until the process ends. */
const char *lb_symbols_fallback(Dwfl_Module *mod, uintptr_t pc);

/* The same by file: `addr` is an address as the ELF file at `path` sees it
 * (pc minus the load bias); build-id files are looked up under
 * `debug_root`. For tests and for lb_symbols_fallback. */
const char *lb_symbols_fallback_file(const char *path, uint64_t addr, const char *debug_root);

/* The NT_GNU_BUILD_ID of e into id (up to cap bytes); returns its length,
 * 0 if none. */
size_t lb_elf_build_id(Elf *e, unsigned char *id, size_t cap);
#endif
