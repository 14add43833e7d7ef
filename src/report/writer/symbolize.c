#include "report/writer/symbolize.h"
#include "common/dwarf_source.h"
#include "common/marker_frames.h"
#include "common/module_name.h"
#include "common/dwarf_scopes.h"
#include "common/path_base.h"
#include "common/runtime_frames.h"
#include "common/debuginfo_find.h"
#include "report/writer/exe_alias.h"
#include "core/retired_modules.h"
#include "common/symbols_fallback.h"
#include "common/scratch.h"
#include "common/symindex.h"
#include "util/lazy_deps.h"
#include "util/proc_numbers.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdbool.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct lb_symbolizer {
    bool opened;    /* libdwfl was asked for the maps (opened at the first need) */
    Dwfl *dwfl;     /* NULL when libdwfl cannot read this process */
    Dwfl *retired;  /* libraries unloaded before the write, from their files; NULL none */
    char name[512]; /* the last symbol name with its version suffix cut */
    const lb_modmap_t *modules; /* the writer's, or NULL */
};

static char *debuginfo_path;

/* This process's modules, as its maps show them. */
static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = lb_find_debuginfo_local, /* never debuginfod: debuginfo_find.h */
    .debuginfo_path = &debuginfo_path,
};

/* A Dwfl of the unloaded libraries at the addresses they had, or NULL. */
static Dwfl *open_retired(void)
{
    uint32_t n;
    const lb_retired_t *r = lb_retired_all(&n);
    if (n == 0)
        return NULL;
    Dwfl *d = dwfl_begin(&lb_file_dwfl_callbacks);
    if (!d)
        return NULL;
    uint32_t reported = 0;
    for (uint32_t i = 0; i < n; i++)
        reported += dwfl_report_elf(d, r[i].path, r[i].path, -1, r[i].bias, false) != NULL;
    if (!reported || dwfl_report_end(d, NULL, NULL) != 0) {
        dwfl_end(d);
        return NULL;
    }
    return d;
}

lb_symbolizer_t *lb_symbolizer_open(void)
{
    /* scratch memory in a spooled exit write: a calloc there took a free
     * chunk of the parent's heap, a page copied in every fork child */
    return lb_scratch_calloc(1, sizeof(lb_symbolizer_t));
}

void lb_symbolizer_use_modules(lb_symbolizer_t *s, const lb_modmap_t *modules)
{
    if (s)
        s->modules = modules;
}

bool lb_symbolizer_maps(const lb_symbolizer_t *s, uintptr_t pc)
{
    return s && s->modules && !lb_retired_contains(pc) && lb_modmap_find(s->modules, pc);
}

/* The module holding where, named as lb_symbolize names it: from the
 * writer's modules when where lies in one (an unloaded library's range
 * may hold another file now), else through libdwfl. */
static const char *module_of(lb_symbolizer_t *s, uintptr_t where)
{
    const lb_modmap_entry_t *m =
        s && s->modules && !lb_retired_contains(where) ? lb_modmap_find(s->modules, where) : NULL;
    if (m)
        return lb_exe_alias(m->path);
    lb_symbol_t sym;
    lb_symbolize(s, where, &sym);
    return sym.module;
}

/* libdw and this process's modules, at the first address that needs
 * them: a process whose names all come from the symbol cache
 * (symcache.h) never loads libdw. False when libdwfl cannot read the
 * process (lookups then go through dladdr only). */
static bool ready(lb_symbolizer_t *s)
{
    if (!s)
        return false;
    if (!s->opened) {
        s->opened = true;
        if (!lb_debuginfo_libs_open())
            return false;
        /* the maps of this process as /proc numbers it (getpid()'s number
         * there may be another process's: util/proc_numbers.h) */
        pid_t pid = lb_proc_self_pid();
        s->dwfl = pid > 0 ? dwfl_begin(&callbacks) : NULL;
        if (s->dwfl && (dwfl_linux_proc_report(s->dwfl, pid) != 0 ||
                        dwfl_report_end(s->dwfl, NULL, NULL) != 0)) {
            dwfl_end(s->dwfl);
            s->dwfl = NULL;
        }
        if (s->dwfl)
            s->retired = open_retired();
    }
    return s->dwfl != NULL;
}

/* The module holding pc: an unloaded library's range first (the writer's
 * own libraries may sit there now, and no sample of the program was
 * taken in them), then the process's maps. *retired: it was unloaded. */
static Dwfl_Module *module_at(lb_symbolizer_t *s, uintptr_t pc, bool *retired)
{
    *retired = false;
    if (!ready(s))
        return NULL;
    *retired = s->retired && lb_retired_contains(pc);
    if (*retired)
        return dwfl_addrmodule(s->retired, pc);
    return dwfl_addrmodule(s->dwfl, pc);
}

/* A cut marker's name, "[unknown: no unwind info in MODULE]" (MODULE's
 * base name; without MODULE for code in no module, such as JIT code).
 * Names are kept for the writer's life, one per module. */
static const char *cut_frame_name(lb_symbolizer_t *s, uintptr_t where)
{
    static struct {
        char *module, *name;
    } names[32];
    static const char anonymous[] = "[unknown: no unwind info]";
    const char *module_name = module_of(s, where);
    if (!module_name)
        return anonymous;
    size_t i = 0;
    for (; i < sizeof names / sizeof *names && names[i].module; i++)
        if (strcmp(names[i].module, module_name) == 0)
            return names[i].name;
    if (i == sizeof names / sizeof *names)
        return anonymous;
    char *name = NULL, *module = strdup(module_name); /* the lookup's string ends with it */
    if (!module || asprintf(&name, "[unknown: no unwind info in %s]", lb_path_base(module)) < 0) {
        free(module);
        return anonymous;
    }
    names[i].module = module;
    names[i].name = name;
    return name;
}

/* The name of one of lockblame's marker frames (common/marker_frames.h):
 * "[signal SIGUSR1]", "[unknown: no unwind info in MODULE]"; NULL for a
 * marker pc it does not know. The writer runs on one thread: the names
 * are built once, in static storage. */
static const char *marker_frame_name(lb_symbolizer_t *s, uintptr_t pc)
{
    static char signal_names[256][32];
    int signo;
    uintptr_t where;
    if (lb_cut_frame_marker(pc, &where))
        return cut_frame_name(s, where);
    if (!lb_signal_frame_marker(pc, &signo))
        return NULL;
    if (!signo)
        return "[signal]";
    char *name = signal_names[signo];
    if (!name[0]) {
        const char *abbrev = sigabbrev_np(signo);
        if (abbrev)
            snprintf(name, sizeof signal_names[0], "[signal SIG%s]", abbrev);
        else
            snprintf(name, sizeof signal_names[0], "[signal %d]", signo);
    }
    return name;
}

/* pc's names in mod, one of this process's modules; true when its
 * function symbols were all consulted. */
static bool name_in_module(lb_symbolizer_t *s, Dwfl_Module *mod, uintptr_t pc, lb_symbol_t *out)
{
    Dwarf_Addr start = 0;
    const char *mainfile = NULL;
    const char *name = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, &mainfile, NULL);
    /* libdwfl's vDSO is "[vdso: PID]": stored as "[vdso]", one module
     * in every process (common/module_name.h). */
    out->module = lb_exe_alias(lb_module_name(mainfile ? mainfile : name));
    out->base = (uintptr_t)start;
    return lb_module_names(mod, pc, out->module, s->name, sizeof s->name, out);
}

void lb_symbolize(lb_symbolizer_t *s, uintptr_t pc, lb_symbol_t *out)
{
    *out = (lb_symbol_t){ 0 };
    if (lb_marker_frame_pc(pc)) {
        out->function = marker_frame_name(s, pc);
        return;
    }
    bool retired;
    Dwfl_Module *mod = module_at(s, pc, &retired);
    bool indexed = mod && name_in_module(s, mod, pc, out);
    /* dladdr reads the maps as they are now: not for an unloaded library */
    if (!retired && (!out->module || (!out->function && !indexed))) {
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

bool lb_symbol_range(lb_symbolizer_t *s, uintptr_t pc, uintptr_t *lo, uintptr_t *hi)
{
    bool retired;
    Dwfl_Module *mod = module_at(s, pc, &retired);
    const char *name;
    lb_symindex_answer_t answer = mod ? lb_symindex_find(mod, pc, &name, lo, hi) : LB_SYMINDEX_NONE;
    if (answer != LB_SYMINDEX_NONE)
        return answer == LB_SYMINDEX_HIT;
    GElf_Sym sym;
    GElf_Off off = 0;
    if (!mod || !dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL, NULL) || sym.st_size == 0 ||
        GELF_ST_TYPE(sym.st_info) != STT_FUNC)
        return false;
    *lo = (uintptr_t)(pc - off);
    *hi = *lo + (uintptr_t)sym.st_size;
    return true;
}

bool lb_symbol_build_id(lb_symbolizer_t *s, uintptr_t pc, char *hex, size_t size)
{
    bool retired;
    Dwfl_Module *mod = lb_marker_frame_pc(pc) ? NULL : module_at(s, pc, &retired);
    return lb_module_build_id(mod, hex, size);
}

typedef struct function_visit {
    uintptr_t start;
    lb_function_visit_fn visit;
    void *ctx;
    bool below;     /* a symbol starts below the module: offsets would wrap */
    char name[512]; /* the name being visited, its version cut (not in s->name,
                     * which the caller's last lb_symbolize result may use) */
} function_visit_t;

static void visit_function(void *ctx, uintptr_t lo, uintptr_t size, const char *name)
{
    function_visit_t *v = ctx;
    if (lo < v->start)
        v->below = true;
    else
        v->visit(v->ctx, lo - v->start, size,
                 lb_name_without_version(v->name, sizeof v->name, name));
}

bool lb_symbol_functions(lb_symbolizer_t *s, uintptr_t pc, lb_function_visit_fn visit, void *ctx)
{
    bool retired;
    Dwfl_Module *mod = lb_marker_frame_pc(pc) ? NULL : module_at(s, pc, &retired);
    if (!mod || retired)
        return false;
    Dwarf_Addr start = 0, bias;
    const char *mainfile = NULL;
    const char *name = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, &mainfile, NULL);
    const char *module = lb_exe_alias(lb_module_name(mainfile ? mainfile : name));
    /* as lb_symbolize: source lines only outside the runtime, from DWARF */
    if (!module || (!lb_runtime_module(module) && dwfl_module_getdwarf(mod, &bias)))
        return false;
    function_visit_t v = { .start = (uintptr_t)start, .visit = visit, .ctx = ctx };
    return lb_symindex_each(mod, visit_function, &v) && !v.below;
}

void lb_symbolizer_close(lb_symbolizer_t *s)
{
    if (!s)
        return;
    if (s->dwfl) {
        lb_symindex_release_all(s->dwfl);
        dwfl_end(s->dwfl);
    }
    if (s->retired) {
        lb_symindex_release_all(s->retired);
        dwfl_end(s->retired);
    }
    lb_scratch_free(s);
}
