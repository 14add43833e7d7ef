#include "report/writer/symbolize.h"

#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <stdlib.h>
#include <unistd.h>

struct lb_symbolizer {
    Dwfl *dwfl;
};

static char *debuginfo_path;

static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .debuginfo_path = &debuginfo_path,
};

lb_symbolizer_t *lb_symbolizer_open(void)
{
    lb_symbolizer_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->dwfl = dwfl_begin(&callbacks);
    if (!s->dwfl || dwfl_linux_proc_report(s->dwfl, getpid()) != 0 ||
        dwfl_report_end(s->dwfl, NULL, NULL) != 0) {
        if (s->dwfl)
            dwfl_end(s->dwfl);
        free(s);
        return NULL;
    }
    return s;
}

void lb_symbolize(lb_symbolizer_t *s, uintptr_t pc, lb_symbol_t *out)
{
    *out = (lb_symbol_t){ 0 };
    Dwfl_Module *mod = s ? dwfl_addrmodule(s->dwfl, pc) : NULL;
    if (mod) {
        Dwarf_Addr start = 0;
        const char *mainfile = NULL;
        const char *name = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, &mainfile, NULL);
        out->module = mainfile ? mainfile : name;
        out->base = (uintptr_t)start;
        out->function = dwfl_module_addrname(mod, pc);
        Dwfl_Line *line = dwfl_module_getsrc(mod, pc);
        if (line) {
            int lineno = 0;
            out->file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
            out->line = lineno;
        }
    }
    if (!out->module || !out->function) {
        Dl_info info;
        if (dladdr((void *)pc, &info)) {
            if (!out->module) {
                out->module = info.dli_fname;
                out->base = (uintptr_t)info.dli_fbase;
            }
            if (!out->function)
                out->function = info.dli_sname;
        }
    }
}

void lb_symbolizer_close(lb_symbolizer_t *s)
{
    if (!s)
        return;
    dwfl_end(s->dwfl);
    free(s);
}
