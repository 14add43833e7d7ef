/*
 * debug_names.h - names for the frames of stripped modules, found at report
 * time (never in the profiled process: common/debuginfo_find.h).
 * A frame the writer stored as a module and an offset, without a function,
 * is named from the module's separate debug file, which a debuginfod
 * server serves by build id (DEBUGINFOD_URLS, libdebuginfod's cache).
 */
#ifndef LB_CLI_DEBUG_NAMES_H
#define LB_CLI_DEBUG_NAMES_H

#include "report/cli/profile.h"

/* Seconds a debuginfod server may take to answer before the client gives
 * up (DEBUGINFOD_TIMEOUT, when the user sets none), and for all the
 * downloads of one report together. */
#define LB_DEBUGINFOD_TIMEOUT_S "5"
#define LB_DEBUGINFOD_BUDGET_S  30.0

/* At load, before the tree is indexed: names the unnamed frames of the
 * program's stripped modules (not the C/C++ runtime's) through debuginfod
 * when DEBUGINFOD_URLS is set, one "lockblame: fetching ..." line on
 * stderr per module fetched. Modules still without names are named in
 * p->names_note for the report header, with how to get names. A profile
 * whose frames all have names is left exactly as it is. Never fails: a
 * server that does not answer, a missing libdebuginfod or a module
 * without a build id leave the offsets and say so in the note. */
void lb_profile_debug_names(struct lb_profile *p);

/* Names the unnamed frames of module m from the debug file open at fd
 * (consumed): function, file:line, and the inlined calls at each address
 * as frames and nodes of their own, as the writer stores them. Returns how
 * many frames got a name (debug_symbolize.c). */
int lb_profile_name_from_debug_file(struct lb_profile *p, int32_t m, int fd, const char *path);
#endif
