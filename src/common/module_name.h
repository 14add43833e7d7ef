/* A load module's name as the database stores it and the CLI keys it:
 * the same module has the same name in every process and every run.
 * libdwfl names the kernel's vDSO "[vdso: PID]"; the pid is not part of
 * the module's identity (the run row has the pid), and with it the same
 * vDSO function in two processes or two runs would be two procedures. The
 * writer stores "[vdso]" (the name /proc/PID/maps gives it); the CLI
 * maps the "[vdso: PID]" of databases written before that to "[vdso]"
 * too. Header-only; depends on nothing. */
#ifndef LB_COMMON_MODULE_NAME_H
#define LB_COMMON_MODULE_NAME_H
#include <string.h>

#define LB_VDSO_MODULE "[vdso]"

/* name itself, or LB_VDSO_MODULE for libdwfl's "[vdso: PID]" (any text
 * between "[vdso:" and a closing ']'); NULL stays NULL. Never allocates. */
static inline const char *lb_module_name(const char *name)
{
    static const char vdso_prefix[] = "[vdso:";
    if (name && strncmp(name, vdso_prefix, sizeof vdso_prefix - 1) == 0 &&
        name[strlen(name) - 1] == ']')
        return LB_VDSO_MODULE;
    return name;
}
#endif
