/* The names of a code address in a load module, through elfutils'
 * libdwfl: its function (a sorted index of the module's function
 * symbols, libdwfl's names, else the stripped-module fallback), and,
 * outside the C and C++ runtime, its source file, line and inlined calls.
 * One definition for the writer, which names the addresses of its own
 * process (report/writer/symbolize.h), and for whoever merges a pending
 * profile, library or CLI, which names the addresses a process left
 * unnamed from the module's file (common/frame_names.h), so that both
 * give an address the same names.
 *
 * libdw, libelf and liblzma must be callable: the library opens them on
 * first use (util/lazy_deps.h; lb_elf_libs_ready and lb_xz_lib_ready in
 * symbols_fallback.h, which a module file's first read asks); the CLI
 * links them. Not thread-safe: one thread names at a time. */
#ifndef LB_COMMON_MODULE_NAMES_H
#define LB_COMMON_MODULE_NAMES_H
#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/dwarf_source.h" /* lb_source_frame_t, LB_MAX_INLINE */

typedef struct lb_symbol {
    const char *module;   /* module file, NULL if unknown */
    uintptr_t base;       /* module load address */
    const char *function; /* symbol (static ones included), NULL if unknown */
    const char *file;     /* DWARF source file, NULL without debug info */
    int line;             /* 0 without debug info */
    /* Inlined frames at this address, innermost first; inline[0] is the
     * deepest inlined function. n_inline = 0 when the code is not inlined.
     * The outermost (real) function is function/file/line above, with
     * line set to the call site of the outermost inlined call. */
    int n_inline;
    lb_source_frame_t inline_frames[LB_MAX_INLINE];
} lb_symbol_t;

/* libdwfl's callbacks for modules read from their files (an unloaded
 * library, a pending profile's modules): separate debug files on this
 * machine only (common/debuginfo_find.h). */
extern const Dwfl_Callbacks lb_file_dwfl_callbacks;

/* name without its symbol version ("memcpy@@GLIBC_2.14" -> "memcpy"):
 * name itself, or a copy in buf[size]. */
const char *lb_name_without_version(char *buf, size_t size, const char *name);

/* pc's names in mod, whose module is named `module` (a path): function
 * (its version cut into name_buf), and unless module is a runtime
 * library (common/runtime_frames.h), file, line and inlined calls; out's
 * module and base are left as they are. True when the module's function
 * symbols were all consulted (a NULL function is then final). */
bool lb_module_names(Dwfl_Module *mod, uintptr_t pc, const char *module, char *name_buf,
                     size_t name_size, lb_symbol_t *out);

/* Module files read for their names, each once, each a Dwfl of its own. */
typedef struct lb_module_files lb_module_files_t;
lb_module_files_t *lb_module_files_open(void); /* NULL without memory */
/* The names at offset (from the module's start) in the file at path,
 * when its build id is build_id (lowercase hex), as a process that mapped
 * it gets them (module path, base 0); false, *out unknown, when the file
 * cannot be read or is another build. Strings live until the next call
 * (the function) or lb_module_files_close. */
bool lb_module_files_name(lb_module_files_t *f, const char *path, const char *build_id,
                          uintptr_t offset, lb_symbol_t *out);
void lb_module_files_close(lb_module_files_t *f);

/* The GNU build id of mod as lowercase hex in hex[size]; false (hex "")
 * when it has none or libdwfl cannot read its ELF. */
bool lb_module_build_id(Dwfl_Module *mod, char *hex, size_t size);
#endif
