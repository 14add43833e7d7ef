/*
 * debug_names.c - which modules lack names, and their debug files from
 * debuginfod (debug_names.h). A module lacks names when frames of it are
 * stored without a function, none of its frames has a source line and
 * its file, where it is still on disk with the same build id, has no
 * symbol table of its own (unnamed frames of a module with symbols are
 * PLT stubs and the like: no debug file names them). The C/C++ runtime's
 * modules are left out: their frames are never release sites
 * (common/runtime_frames.h), and their debug files are large.
 *
 * libdebuginfod is opened on first use, only when DEBUGINFOD_URLS is set,
 * so a report that needs no names loads no libcurl. Its client keeps the
 * files in its cache ($DEBUGINFOD_CACHE_PATH, else ~/.cache/debuginfod_client)
 * and asks the servers only for what is not there.
 */
#include "report/cli/debug_names.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/hex.h"
#include "common/runtime_frames.h"
#include "report/cli/seconds.h"

/* What the module's file on disk says, when it is there. */
struct module_file {
    bool readable;
    bool has_symbols; /* .symtab or MiniDebugInfo (.gnu_debugdata) */
    char build_id[129];
};

static void hex_of(const unsigned char *bits, size_t n, char *hex, size_t size)
{
    if (2 * n + 1 > size)
        n = size ? (size - 1) / 2 : 0;
    if (size)
        lb_hex_encode(bits, n, hex);
}

static void read_module_file(const char *path, struct module_file *out)
{
    memset(out, 0, sizeof *out);
    int fd = path[0] == '/' ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    Elf *e = fd >= 0 && elf_version(EV_CURRENT) != EV_NONE ? elf_begin(fd, ELF_C_READ, NULL) : NULL;

    if (e && elf_kind(e) == ELF_K_ELF) {
        out->readable = true;
        const void *bits = NULL;
        ssize_t n = dwelf_elf_gnu_build_id(e, &bits);

        if (n > 0)
            hex_of(bits, (size_t)n, out->build_id, sizeof out->build_id);
        size_t shstrndx = 0;
        Elf_Scn *scn = NULL;

        elf_getshdrstrndx(e, &shstrndx);
        while ((scn = elf_nextscn(e, scn)) != NULL) {
            GElf_Shdr shdr;
            const char *name;

            if (!gelf_getshdr(scn, &shdr))
                continue;
            name = elf_strptr(e, shstrndx, shdr.sh_name);
            out->has_symbols |=
                shdr.sh_type == SHT_SYMTAB || (name && strcmp(name, ".gnu_debugdata") == 0);
        }
    }
    if (e)
        elf_end(e);
    if (fd >= 0)
        close(fd);
}

/* The modules that lack names (see the file comment), as a flag per
 * module; false when there is none. */
static bool find_unnamed_modules(const struct lb_profile *p, bool *lacks)
{
    bool *has_line = lb_xcalloc((size_t)p->nmodules + 1, sizeof *has_line);
    bool any = false;

    for (int32_t i = 0; i < p->nframes; i++) {
        int32_t m = p->frames[i].module;

        if (m < 0)
            continue;
        has_line[m] |= p->frames[i].file != NULL;
        lacks[m] |= p->frames[i].function == NULL;
    }
    for (int32_t m = 0; m < p->nmodules; m++) {
        const struct lb_module *mod = &p->modules[m];

        if (!lacks[m])
            continue;
        lacks[m] = !has_line[m] && mod->base_name[0] && mod->base_name[0] != '[' &&
                   !lb_runtime_module(mod->path);
        if (lacks[m]) {
            struct module_file file;

            read_module_file(mod->path, &file);
            if (file.readable && file.has_symbols &&
                (!mod->build_id || strcmp(mod->build_id, file.build_id) == 0))
                lacks[m] = false;
        }
        any |= lacks[m];
    }
    free(has_line);
    return any;
}

/* libdebuginfod's client, opened on first use. */
struct client_api {
    __typeof__(debuginfod_begin) *begin;
    __typeof__(debuginfod_find_debuginfo) *find_debuginfo;
    __typeof__(debuginfod_set_progressfn) *set_progressfn;
    __typeof__(debuginfod_end) *end;
};

static bool open_client_api(struct client_api *api)
{
    void *lib = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);

    if (!lib)
        return false;
    api->begin = (__typeof__(api->begin))dlsym(lib, "debuginfod_begin");
    api->find_debuginfo = (__typeof__(api->find_debuginfo))dlsym(lib, "debuginfod_find_debuginfo");
    api->set_progressfn = (__typeof__(api->set_progressfn))dlsym(lib, "debuginfod_set_progressfn");
    api->end = (__typeof__(api->end))dlsym(lib, "debuginfod_end");
    return api->begin && api->find_debuginfo && api->set_progressfn && api->end;
}

/* When the downloads of this report must end (the CLI is single-threaded). */
static double budget_end;

/* libdebuginfod calls it while a transfer runs: non-zero cancels it. */
static int over_budget(debuginfod_client *client, long done, long total)
{
    (void)client, (void)done, (void)total;
    return lb_cli_seconds() > budget_end;
}

static size_t bits_of_hex(const char *hex, unsigned char *bits, size_t cap)
{
    size_t n = 0;

    for (; hex[0] && hex[1] && n < cap; hex += 2) {
        unsigned v;

        if (sscanf(hex, "%2x", &v) != 1)
            return 0;
        bits[n++] = (unsigned char)v;
    }
    return n;
}

/* Fetches module m's debug file and names its frames. Returns NULL when
 * frames got names, else why not (static text). */
static const char *name_module(struct lb_profile *p, int32_t m, struct client_api *api,
                               debuginfod_client *client)
{
    struct lb_module *mod = &p->modules[m];
    struct module_file file;
    const char *build_id = mod->build_id;
    static char why[256];

    if (!build_id) { /* a database older than the build_id column */
        read_module_file(mod->path, &file);
        build_id = file.build_id[0] ? file.build_id : NULL;
    }
    unsigned char bits[64];
    size_t n = build_id ? bits_of_hex(build_id, bits, sizeof bits) : 0;

    if (!n)
        return "no build id";
    if (lb_cli_seconds() > budget_end)
        return "the time for debuginfod ran out";
    cli_warn("fetching debug info for %s from debuginfod...", mod->base_name);
    char *path = NULL;
    int fd = api->find_debuginfo(client, bits, (int)n, &path);

    if (fd < 0) {
        snprintf(why, sizeof why, "debuginfod: %s",
                 lb_cli_seconds() > budget_end ? "the time for debuginfod ran out" : strerror(-fd));
        return why;
    }
    int named = lb_profile_name_from_debug_file(p, m, fd, path);

    free(path);
    return named ? NULL : "its debug file names none of its frames";
}

void lb_profile_debug_names(struct lb_profile *p)
{
    bool *lacks = lb_xcalloc((size_t)p->nmodules + 1, sizeof *lacks);

    if (!find_unnamed_modules(p, lacks)) {
        free(lacks);
        return;
    }
    const char *urls = getenv("DEBUGINFOD_URLS");
    bool use_server = urls && *urls;
    struct client_api api = { 0 };
    debuginfod_client *client = NULL;
    const char *no_client = NULL;

    if (use_server) {
        setenv("DEBUGINFOD_TIMEOUT", LB_DEBUGINFOD_TIMEOUT_S, 0);
        budget_end = lb_cli_seconds() + LB_DEBUGINFOD_BUDGET_S;
        if (!open_client_api(&api))
            no_client = "libdebuginfod is not installed";
        else if (!(client = api.begin()))
            no_client = "debuginfod: no client";
        else
            api.set_progressfn(client, over_budget);
    }
    struct lb_buf note = { 0 };
    int left = 0;

    for (int32_t m = 0; m < p->nmodules; m++) {
        const char *why = NULL;

        if (!lacks[m])
            continue;
        if (use_server) {
            why = client ? name_module(p, m, &api, client) : no_client;
            if (!why)
                continue;
        }
        bool said = false; /* each process of a tree has its own row of a module */
        for (int32_t k = 0; k < m && !said; k++)
            said = lacks[k] && !strcmp(p->modules[k].path, p->modules[m].path);
        if (said)
            continue;
        /* (its exported names, from its dynamic symbols, are shown) */
        lb_buf_puts(&note, left++ ? ", " : "no debug info for ");
        lb_buf_puts(&note, p->modules[m].base_name);
        if (why)
            lb_buf_printf(&note, " (%s)", why);
    }
    if (client)
        api.end(client);
    if (left) {
        lb_buf_printf(&note, ": install %s -dbgsym package%s%s", left > 1 ? "their" : "its",
                      left > 1 ? "s" : "",
                      use_server ? "" : " or set DEBUGINFOD_URLS to fetch names from debuginfod");
        p->names_note = note.s;
        if (use_server) /* the table's header says it too; other formats have none */
            cli_warn("%s", note.s);
    }
    free(lacks);
}
