/*
 * debug_symbolize.c - naming a stripped module's frames from its separate
 * debug file (debug_names.h). libdwfl reads the debug file alone, at the
 * addresses the module has on disk; its symbol table names the function
 * and its DWARF gives file:line and the inlined calls (common/dwarf_source.h,
 * as the writer's symbolizer does). Inlined calls are spliced into the
 * loaded tree the way the writer stores them (report/writer/cct_merge.c):
 * one frame per source frame at an address, outermost first with
 * consecutive ids, one node per frame, and every reference to the
 * address's node (metric rows, object blame, structural waits) and to its
 * frame (sites) now on the innermost one.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/dwarf_source.h"
#include "report/cli/debug_names.h"

static int no_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base, char **file,
                  Elf **elfp)
{
    (void)mod, (void)userdata, (void)name, (void)base, (void)file, (void)elfp;
    return -1;
}

/* The debug file is its own debug info: nothing else is looked for (and
 * libdw's standard search, with its own debuginfod client, is not run). */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
                        const char *file, const char *debuglink, GElf_Word crc, char **debuginfo)
{
    (void)mod, (void)userdata, (void)name, (void)base, (void)file, (void)debuglink, (void)crc;
    (void)debuginfo;
    return -1;
}

static const Dwfl_Callbacks callbacks = {
    .find_elf = no_elf,
    .find_debuginfo = no_debuginfo,
    .section_address = dwfl_offline_section_address,
};

/* "f@@VERSION" -> "f" (malloc'd): symbol versions are not part of the name. */
static char *unversioned(const char *name)
{
    const char *at = strchr(name, '@');
    size_t n = at && at != name ? (size_t)(at - name) : strlen(name);
    char *s = lb_xmalloc(n + 1);

    memcpy(s, name, n);
    s[n] = '\0';
    return s;
}

static void set_source(struct lb_frame *f, const char *function, const char *file, int line)
{
    f->function = function ? unversioned(function) : NULL;
    f->file = file && *file ? lb_xstrdup(file) : NULL;
    f->line = f->file ? line : 0;
}

/* The inlined calls found at each frame of the module: frames
 * [first, first + len) are its chain, outermost first. */
struct chain {
    int32_t first, len;
};

/* Appends the frames of frame f's address: a copy of the (now named)
 * outer function, then each inlined call from the outermost in. */
static void append_chain(struct lb_profile *p, size_t *cap, int32_t f, int64_t *next_id,
                         int n_inline, const lb_source_frame_t *inlined, struct chain *out)
{
    out->first = p->nframes;
    out->len = n_inline + 1;
    lb_grow((void **)&p->frames, cap, (size_t)p->nframes + (size_t)out->len, sizeof *p->frames);
    struct lb_frame *outer = &p->frames[p->nframes++];

    memset(outer, 0, sizeof *outer);
    outer->id = (*next_id)++;
    outer->module = p->frames[f].module;
    outer->offset = p->frames[f].offset;
    outer->function = lb_xstrdup(p->frames[f].function);
    outer->file = lb_xstrdup(p->frames[f].file);
    outer->line = p->frames[f].line;
    for (int i = n_inline - 1; i >= 0; i--) {
        struct lb_frame *g = &p->frames[p->nframes++];

        memset(g, 0, sizeof *g);
        g->id = (*next_id)++;
        g->module = outer->module;
        g->offset = outer->offset;
        set_source(g, inlined[i].function, inlined[i].file, inlined[i].line);
    }
}

/* Node v stands for an address whose frames are chain c: it takes the
 * innermost frame, below new nodes for the outer ones. */
static void splice_node(struct lb_profile *p, size_t *cap, int32_t v, const struct chain *c,
                        int64_t *next_id)
{
    int32_t parent = p->nodes[v].parent;

    for (int32_t j = 0; j < c->len - 1; j++) {
        lb_grow((void **)&p->nodes, cap, (size_t)p->nnodes + 1, sizeof *p->nodes);
        struct lb_node *n = &p->nodes[p->nnodes];

        n->id = (*next_id)++;
        n->parent = parent;
        n->frame = c->first + j;
        n->depth = 0;
        parent = p->nnodes++;
    }
    p->nodes[v].parent = parent;
    p->nodes[v].frame = c->first + c->len - 1;
}

static int64_t max_frame_id(const struct lb_profile *p)
{
    int64_t max = 0;

    for (int32_t i = 0; i < p->nframes; i++)
        max = p->frames[i].id > max ? p->frames[i].id : max;
    return max;
}

static int64_t max_node_id(const struct lb_profile *p)
{
    int64_t max = 0;

    for (int32_t i = 0; i < p->nnodes; i++)
        max = p->nodes[i].id > max ? p->nodes[i].id : max;
    return max;
}

int lb_profile_name_from_debug_file(struct lb_profile *p, int32_t m, int fd, const char *path)
{
    Dwfl *dwfl = dwfl_begin(&callbacks);
    Dwfl_Module *mod =
        dwfl ? dwfl_report_elf(dwfl, p->modules[m].base_name, path, fd, 0, false) : NULL;
    Dwarf_Addr start = 0;

    if (!mod)
        close(fd); /* dwfl_report_elf consumes it only on success */
    if (!mod || dwfl_report_end(dwfl, NULL, NULL) != 0) {
        if (dwfl)
            dwfl_end(dwfl);
        return 0;
    }
    dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);

    int32_t nframes = p->nframes, named = 0;
    struct chain *chains = NULL; /* per frame of the module with inlined calls */
    size_t frame_cap = (size_t)p->nframes, node_cap = (size_t)p->nnodes;
    int64_t next_frame_id = max_frame_id(p) + 1;

    for (int32_t f = 0; f < nframes; f++) {
        if (p->frames[f].module != m || p->frames[f].function)
            continue;
        /* The writer's offset is from the module's lowest mapped address,
         * which is the file's lowest loaded address (start) there. */
        Dwarf_Addr pc = start + p->frames[f].offset;
        const char *function = dwfl_module_addrname(mod, pc);
        const char *file;
        int line, n_inline;
        lb_source_frame_t inlined[LB_MAX_INLINE];

        if (!function)
            continue;
        lb_dwarf_source(mod, pc, &file, &line, &n_inline, inlined);
        set_source(&p->frames[f], function, file, line);
        named++;
        if (!n_inline)
            continue;
        if (!chains) {
            chains = lb_xcalloc((size_t)nframes, sizeof *chains);
            for (int32_t i = 0; i < nframes; i++)
                chains[i].first = -1;
        }
        append_chain(p, &frame_cap, f, &next_frame_id, n_inline, inlined, &chains[f]);
    }
    dwfl_end(dwfl);
    if (!chains)
        return named;

    int32_t nnodes = p->nnodes;
    int64_t next_node_id = max_node_id(p) + 1;

    for (int32_t v = 0; v < nnodes; v++) {
        int32_t f = p->nodes[v].frame;

        if (f >= 0 && f < nframes && chains[f].first >= 0)
            splice_node(p, &node_cap, v, &chains[f], &next_node_id);
    }
    for (int32_t i = 0; i < p->nsites; i++) {
        int32_t f = p->sites[i].frame;

        if (f >= 0 && f < nframes && chains[f].first >= 0)
            p->sites[i].frame = chains[f].first + chains[f].len - 1;
    }
    free(chains);
    return named;
}
