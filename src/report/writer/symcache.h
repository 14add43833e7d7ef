/* Names paid once per module per database. A code address's names (its
 * function, file and line, and the inlined calls there) depend only on the
 * module's file and the address's offset in it; the run's database keeps
 * every chain a process of the run resolved in its table `symbol`, keyed
 * by the module's build id, path and offset (docs/SCHEMA.md). A later
 * process reads the chains of each module it needs from there and
 * resolves in process only what no earlier process did: a tree of
 * processes that run the same code opens libdw and reads each module's
 * symbols once, not once per process. A module whose names come from its
 * function symbols alone (a runtime library, a program without debug
 * information: lb_symbol_functions) has its whole function table in the
 * table `module_function`, written by the first process that needed a
 * name in it, so that later processes name any address there without
 * reading the module.
 *
 * Never cached: lockblame's marker frames, addresses in unloaded libraries
 * (their files are read as they were, core/retired_modules.h), modules
 * without a build id, deleted files, and any module whose identity as
 * modmap.h reads it differs from what the symbolizer reports.
 *
 * Used on the finishing thread only, during one write; uses malloc. The
 * run's database is read on the profile's connection when attached there
 * (the exit write's build: one connection and one parse of the run
 * database's schema a process, not two), else on a read connection that
 * lives from the first lookup to lb_symcache_close. Either way its shared
 * lock is held only while a module's rows are read or one address is
 * searched in its function table (the build's rows are logged, not in a
 * transaction of the profile's connection: report/writer/writer_int.h). */
#ifndef LB_WRITER_SYMCACHE_H
#define LB_WRITER_SYMCACHE_H
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "report/writer/symbolize.h"

typedef struct lb_symcache lb_symcache_t;
struct lb_wstmt;

/* A cache for one write, whose new chains go into the profile's table
 * `symbol` through insert, and function tables into `module_function`
 * through insert_functions (writer_int.h); NULL without memory (every
 * lookup then misses). attached: the
 * run's database is attached to profile as "out" and is read there,
 * else through a read-only connection of the cache's own. warm: what
 * lb_symcache_preload read in a forking parent, or NULL; it is taken (or
 * freed, when the loader has loaded or unloaded an object since). */
lb_symcache_t *lb_symcache_open(sqlite3 *profile, bool attached, lb_symcache_t *warm,
                                struct lb_wstmt *insert, struct lb_wstmt *insert_functions);
/* In a forking parent: every chain the run's database holds for this
 * process's modules, read through a connection closed again before it
 * returns (a child inherits no descriptor), for a fork child's exit write
 * to name its frames without opening the database; a module whose names
 * a child misses is read again. NULL when there is nothing to hand on. */
lb_symcache_t *lb_symcache_preload(void);
/* In a forking parent whose run's database holds no names yet: this
 * process's modules alone (no chain read, no database opened), so that a
 * fork child's write neither reads the maps nor the modules' build ids
 * again. NULL without memory or modules. */
lb_symcache_t *lb_symcache_modules_only(void);
/* pc's names as lb_symbolize gives them, from the run's database; false
 * when they are not there (the caller symbolizes, then calls
 * lb_symcache_add). Strings live until lb_symcache_close. */
bool lb_symcache_find(lb_symcache_t *c, uintptr_t pc, lb_symbol_t *out);
/* Names from memory only: the run's database is not opened, so a write
 * whose profile may wait in the spool names what a forking parent handed
 * down and leaves the rest to lb_symcache_unnamed. */
void lb_symcache_offline(lb_symcache_t *c);
/* The process's modules as c read them; they live until lb_symcache_close
 * (NULL for a NULL cache). */
const lb_modmap_t *lb_symcache_modules(const lb_symcache_t *c);
/* pc as a frame the merge of the profile names (frame_names.h): its
 * module (a file with a build id) and base, and line
 * LB_ROWLOG_UNNAMED_LINE; false when pc is not in such a module (the
 * caller symbolizes it). */
bool lb_symcache_unnamed(lb_symcache_t *c, uintptr_t pc, lb_symbol_t *out);
/* Records what lb_symbolize(s, pc) gave in the profile, where it may be
 * cached; and, once per module, the function table of a module whose
 * names come from its function symbols alone (lb_symbol_functions). */
void lb_symcache_add(lb_symcache_t *c, lb_symbolizer_t *s, uintptr_t pc, const lb_symbol_t *sym);
/* The GNU build id of the module holding pc, read from memory, when that
 * module starts at base; false (hex "") otherwise. */
bool lb_symcache_build_id(lb_symcache_t *c, uintptr_t pc, uintptr_t base, char *hex, size_t size);
/* Whether this write put any row in the profile's table `symbol`, and in
 * `module_function` (false for a NULL cache). */
bool lb_symcache_added_names(const lb_symcache_t *c);
bool lb_symcache_added_functions(const lb_symcache_t *c);
/* Whether this write resolved a name the run's database lacked (not one
 * found in a function table there, which it only keeps as a chain of its
 * own), or exported a function table: what later processes should find
 * there soon. */
bool lb_symcache_resolved(const lb_symcache_t *c);
void lb_symcache_close(lb_symcache_t *c);
#endif
