/* Opening the writer's libraries (lazy_deps.c, util/lazy_lib.h): each
 * returns false when the library cannot be loaded; the caller then
 * degrades (no profile, or names from fewer sources). */
#ifndef LB_WRITER_LAZY_DEPS_H
#define LB_WRITER_LAZY_DEPS_H
#include <stdbool.h>

/* SQLite: without it no profile can be written (why: dlerror's text). */
bool lb_writer_sqlite_open(char *why, unsigned whylen);
/* libdw and libelf: DWARF and ELF symbol tables. */
bool lb_writer_debuginfo_open(void);
/* liblzma: compressed MiniDebugInfo sections. */
bool lb_writer_lzma_open(void);
#endif
