/* The system libraries the library opens on first use (util/lazy_lib.h),
 * one file of hidden stubs each: lazy_sqlite.c, lazy_debuginfo.c (libdw
 * and libelf), lazy_lzma.c, lazy_pfm.c. The stubs sit in util, below
 * every layer that calls them (common's database and PMU-encoding code,
 * the sampler, the writer); the CLI links the same libraries directly and
 * none of these files, but for libpfm4's (lazy_pfm.c, lazy_lib.c).
 *
 * Each function below opens its libraries now if not yet and returns
 * false when one cannot be loaded (nothing else changes); the caller then
 * degrades (no profile, names from fewer sources, no named PMU event).
 * Callers ask before calling any stub of that library. */
#ifndef LB_UTIL_LAZY_DEPS_H
#define LB_UTIL_LAZY_DEPS_H
#include <stdbool.h>

/* SQLite: without it no profile can be written (why: dlerror's text). */
bool lb_sqlite_open(char *why, unsigned whylen);
/* The same, for the exit write of a process whose program has finished:
 * when this call loads SQLite (the program has no copy of its own), it
 * turns SQLite's memory statistics off before its first use. */
bool lb_sqlite_open_at_exit(char *why, unsigned whylen);
/* libdw and libelf: DWARF and ELF symbol tables. */
bool lb_debuginfo_libs_open(void);
/* liblzma: compressed MiniDebugInfo sections. */
bool lb_lzma_open(void);
/* libpfm4: encoding a named PMU event (why: dlerror's text). */
bool lb_pfm_open(char *why, unsigned whylen);
#endif
