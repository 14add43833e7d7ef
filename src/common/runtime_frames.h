/* Frames of the C/C++ runtime (docs/DESIGN.md rule 5): inline code from system
 * headers (gthr-default.h, std::lock_guard, std::mutex) and code in the
 * runtime libraries is never the release site; the innermost frame of the
 * program's own code is. One rule for the CLI and for the writer's exit
 * line. Header-only. */
#ifndef LB_RUNTIME_FRAMES_H
#define LB_RUNTIME_FRAMES_H
#include <stdbool.h>
#include <string.h>

#include "common/path_base.h"

/* A source file of the runtime: an installed header. */
static inline bool lb_runtime_file(const char *file)
{
    return file &&
           (strncmp(file, "/usr/include/", 13) == 0 || strncmp(file, "/usr/lib/gcc/", 13) == 0 ||
            strstr(file, "/include/c++/") != NULL);
}

/* A runtime library, the kernel's vDSO (clock_gettime: the writer names
 * it "[vdso]") or lockblame itself, by module path or base name. */
static inline bool lb_runtime_module(const char *module)
{
    static const char *const prefixes[] = { "libc.so",      "libc-",    "libpthread", "libstdc++",
                                            "libgcc_s",     "ld-linux", "libc++",     "libm.so",
                                            "liblockblame", "[vdso]" };
    if (!module)
        return false;
    const char *base = lb_path_base(module);
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (strncmp(base, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    return false;
}

/* lockblame's own synthetic frames, by name: the unsampled CPU
 * placeholder (src/sampler/unsampled.h; the library may be installed or
 * copied under another file name than liblockblame*) and the marker
 * frames, whose names start with '[' (common/marker_frames.h). */
static inline bool lb_runtime_function(const char *function)
{
    return function && (strncmp(function, "lockblame_", 10) == 0 || function[0] == '[');
}

/* A frame (any of its names may be NULL) that is not the program's: by
 * its source file, its module, or its function. */
static inline bool lb_runtime_frame(const char *function, const char *file, const char *module)
{
    return lb_runtime_file(file) || lb_runtime_module(module) || lb_runtime_function(function);
}
#endif
