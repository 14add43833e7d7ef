/* Frames of the runtime (docs/DESIGN.md rule 5): inline code from system
 * headers (gthr-default.h, std::lock_guard, std::mutex) and from Rust's
 * standard library, and code in the runtime libraries (C, C++, Rust std,
 * GLib), is never the release site; the innermost frame of the
 * program's own code is. One rule for the CLI and for the writer's exit
 * line. Header-only. */
#ifndef LB_RUNTIME_FRAMES_H
#define LB_RUNTIME_FRAMES_H
#include <stdbool.h>
#include <string.h>

#include "common/path_base.h"
#include "common/rust_names.h"

/* A source file of Rust's standard library: rustup's toolchains name it
 * /rustc/<commit>/library/... (inlined code) or library/... (its own
 * precompiled code), Debian's rustc /usr/src/rustc-<version>/library/... */
static inline bool lb_rust_std_file(const char *file)
{
    static const char *const libraries[] = { "library/std/", "library/core/", "library/alloc/" };
    const char *tail = file;
    if (strncmp(file, "/rustc/", 7) == 0 || strncmp(file, "/usr/src/rustc-", 15) == 0) {
        tail = strstr(file, "/library/");
        if (!tail)
            return false;
        tail++;
    }
    for (size_t i = 0; i < sizeof libraries / sizeof *libraries; i++)
        if (strncmp(tail, libraries[i], strlen(libraries[i])) == 0)
            return true;
    return false;
}

/* A source file of the runtime: an installed header, or Rust's
 * standard library. */
static inline bool lb_runtime_file(const char *file)
{
    return file &&
           (strncmp(file, "/usr/include/", 13) == 0 || strncmp(file, "/usr/lib/gcc/", 13) == 0 ||
            strstr(file, "/include/c++/") != NULL || lb_rust_std_file(file));
}

/* A runtime library (GLib's too: g_mutex_unlock, g_cond_signal and
 * g_thread_pool_push wake for the program), the kernel's vDSO
 * (clock_gettime: the writer names it "[vdso]") or lockblame itself, by
 * module path or base name. */
static inline bool lb_runtime_module(const char *module)
{
    static const char *const prefixes[] = { "libc.so",     "libc-",          "libpthread",
                                            "libstdc++",   "libgcc_s",       "ld-linux",
                                            "libc++",      "libm.so",        "liblockblame",
                                            "libglib-2.0", "libgthread-2.0", "[vdso]" };
    if (!module)
        return false;
    const char *base = lb_path_base(module);
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (strncmp(base, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    return false;
}

/* By name: lockblame's own synthetic frames, the unsampled CPU
 * placeholder (src/sampler/unsampled.h; the library may be installed or
 * copied under another file name than liblockblame*) and the marker
 * frames, whose names start with '[' (common/marker_frames.h); and Rust's
 * standard library, linked into the program (common/rust_names.h), for
 * its frames without source lines. */
static inline bool lb_runtime_function(const char *function)
{
    return function && (strncmp(function, "lockblame_", 10) == 0 || function[0] == '[' ||
                        lb_rust_std_symbol(function));
}

/* A frame (any of its names may be NULL) that is not the program's: by
 * its source file, its module, or its function. */
static inline bool lb_runtime_frame(const char *function, const char *file, const char *module)
{
    return lb_runtime_file(file) || lb_runtime_module(module) || lb_runtime_function(function);
}
#endif
