/* Finding a module's separate debug file for libdwfl (its find_debuginfo
 * callback), on this machine only. */
#ifndef LB_COMMON_DEBUGINFO_FIND_H
#define LB_COMMON_DEBUGINFO_FIND_H
#include <elfutils/libdwfl.h>

/* libdwfl's standard search, the same places in the same order: the build
 * id under the debug root (/usr/lib/debug/.build-id/xx/yyyy.debug), then
 * the .gnu_debuglink name beside the module, in its .debug/ and under the
 * debug root, a candidate accepted only if its build id matches the
 * module's. What it leaves out is the standard search's last resort, a
 * debuginfod client: libdw 0.188 dlopens libdebuginfod (with libcurl and
 * OpenSSL: ~16M instructions, ~5 ms) at the first module without a local
 * debug file, in every process that writes, and where DEBUGINFOD_URLS is
 * set it would fetch over the network inside the program's exit.
 * A module without a build id goes to the standard search, which tries
 * debuginfod only by build id. Returns an open fd (and a malloc'd name in
 * *debuginfo_file_name) or -1. */
int lb_find_debuginfo_local(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                            const char *file_name, const char *debuglink_file,
                            GElf_Word debuglink_crc, char **debuginfo_file_name);
#endif
