/*
 * whatif_sites.c - the release sites of a profile that `lockblame whatif`
 * experiments on (whatif_sites.h): the release-site view's rows
 * (site_rows.c), and the calls of each in the profile's site table.
 */
#include "report/cli/whatif_sites.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clone_name.h"
#include "common/demangle.h"
#include "common/kinds.h"
#include "report/cli/site_rows.h"
#include "report/cli/views.h"

unsigned long long lb_whatif_function_start(const char *path, const char *name)
{
    unsigned long long found = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return 0;
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    Elf_Scn *scn = NULL;
    while (elf && !found && (scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        size_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
        for (size_t i = 0; data && i < count && !found; i++) {
            GElf_Sym sym;
            const char *s;
            if (gelf_getsym(data, (int)i, &sym) && GELF_ST_TYPE(sym.st_info) == STT_FUNC &&
                sym.st_value && (s = elf_strptr(elf, sh.sh_link, sym.st_name)) &&
                strcmp(s, name) == 0)
                found = sym.st_value;
        }
    }
    if (elf)
        elf_end(elf);
    close(fd);
    return found;
}

static bool is_lock_kind(int kind)
{
    return kind == LB_OBJ_MUTEX || kind == LB_OBJ_SPIN || kind == LB_OBJ_RWLOCK;
}

/* A signal or post whose waiters the experiment wraps: a woken waiter
 * skips the delay inserted while it waited (a futex's does not). */
static bool is_wrapped_signal(int kind)
{
    return kind == LB_OBJ_COND || kind == LB_OBJ_SEM;
}

/* Why a row gets no experiment, in words (docs/INTERNALS.md, "What each
 * kind's speedup means"). */
static const char *unsupported_reason(int kind)
{
    if (lb_obj_kind_is_signalled((unsigned)kind))
        return "not supported: a futex wake made outside any lock hold of its function:"
               " the experiment does not wrap futex waits, so its waiters would pay the"
               " delay owed for the code before the wake";
    return "not supported: this kind's waits end at no release of a hold";
}

/* One call instruction of the site table, summed over threads. */
struct call {
    int32_t module;
    uint64_t offset;
    int64_t releases, acquisitions;
};

static int by_use(const void *a, const void *b)
{
    const struct call *x = a, *y = b;
    if (x->releases != y->releases)
        return x->releases < y->releases ? 1 : -1;
    if (x->acquisitions != y->acquisitions)
        return x->acquisitions < y->acquisitions ? 1 : -1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static void add_call(struct call **calls, size_t *cap, int *n, const struct lb_frame *f,
                     int64_t releases, int64_t acquisitions)
{
    for (int i = 0; i < *n; i++)
        if ((*calls)[i].module == f->module && (*calls)[i].offset == f->offset) {
            (*calls)[i].releases += releases;
            (*calls)[i].acquisitions += acquisitions;
            return;
        }
    lb_grow((void **)calls, cap, (size_t)*n + 1, sizeof **calls);
    (*calls)[(*n)++] = (struct call){ f->module, f->offset, releases, acquisitions };
}

/* The function of program frame f without its clone suffixes equals name. */
static bool frame_is(const struct lb_profile *p, int32_t f, const char *name)
{
    const char *fn = f >= 0 ? p->frames[f].function : NULL;
    size_t len = fn ? lb_clone_base_len(fn) : 0;
    return fn && len == strlen(name) && strncmp(fn, name, len) == 0;
}

/* The kind of hold a row's experiment shortens: the row's own for a lock;
 * for a signal or post, the lock whose releases in the same function are
 * the most (the hold the signal is made in, or right after: shortening it
 * brings the signal earlier), else for a cond signal or a post the row's
 * own kind: the code that runs before the signal; -1 if none. */
static int hold_kind(const struct lb_profile *p, int kind, const char *name)
{
    if (is_lock_kind(kind))
        return kind;
    int64_t releases[LB_OBJ_KINDS] = { 0 };
    int best = -1;
    for (int32_t i = 0; lb_obj_kind_is_signalled((unsigned)kind) && i < p->nsites; i++) {
        const struct lb_site *e = &p->sites[i];
        if (is_lock_kind(e->kind) && e->releases > 0 &&
            frame_is(p, lb_frame_program(p, e->frame), name))
            releases[e->kind] += e->releases;
    }
    for (int k = 0; k < LB_OBJ_KINDS; k++)
        if (releases[k] > 0 && (best < 0 || releases[k] > releases[best]))
            best = k;
    return best < 0 && is_wrapped_signal(kind) ? kind : best;
}

/* The site's release calls and its lock and wait calls (a mutex's cond
 * waits re-acquire it), of its hold kind (s->kind; a signal site's:
 * its signal or post calls, and no lock calls): the site table's call
 * instructions where a frame of its function sits (an inline runtime
 * frame such as std::mutex::unlock is the innermost one there). The
 * module is the busiest release call's. */
static void site_calls(struct lb_profile *p, struct lb_whatif_site *s)
{
    struct call *calls = NULL;
    size_t cap = 0;
    int n = 0;
    for (int32_t i = 0; i < p->nsites; i++) {
        const struct lb_site *e = &p->sites[i];
        bool waits = s->kind == LB_OBJ_MUTEX && e->kind == LB_OBJ_COND;
        if ((e->kind == s->kind || waits) && frame_is(p, lb_frame_program(p, e->frame), s->name))
            add_call(&calls, &cap, &n, &p->frames[e->frame], waits ? 0 : e->releases,
                     e->acquisitions);
    }
    lb_sort(calls, (size_t)n, sizeof *calls, by_use);
    int32_t module = n > 0 && calls[0].releases > 0 ? calls[0].module : -1;
    for (int i = 0; module >= 0 && i < n; i++) {
        if (calls[i].module != module)
            continue; /* one module: the busiest's */
        if (calls[i].releases > 0 && s->nrel++ < 64)
            lb_buf_printf(&s->offsets, "%s%llx", s->offsets.len ? "," : "",
                          (unsigned long long)calls[i].offset);
        if (calls[i].acquisitions > 0 && is_lock_kind(s->kind) && s->nacq++ < 64)
            lb_buf_printf(&s->acquires, "%s%llx", s->acquires.len ? "," : "",
                          (unsigned long long)calls[i].offset);
    }
    if (module >= 0 && p->modules[module].path) {
        s->module = lb_xstrdup(p->modules[module].path);
        s->fstart = lb_whatif_function_start(s->module, s->name);
    }
    free(calls);
}

/* The row's site, named by its function (NULL: a row with no function). */
static bool take_row(struct lb_profile *p, const struct lb_site_row *row, double total,
                     struct lb_whatif_site *s)
{
    const char *fn = row->frame >= 0 ? p->frames[row->frame].function : NULL;
    if (!fn)
        return false;
    memset(s, 0, sizeof *s);
    s->name = lb_xstrdup(fn);
    s->name[lb_clone_base_len(fn)] = '\0';
    s->row_kind = row->kind;
    s->kind = hold_kind(p, row->kind, s->name);
    s->blame_s = row->value;
    s->blame_share = lb_share(row->value, total);
    if (s->kind < 0)
        s->unsupported = unsupported_reason(row->kind);
    else
        site_calls(p, s);
    return true;
}

/* Labels: the demangled function, or where an earlier site has that
 * one, the view's "function (file:line)". */
static void label_sites(struct lb_profile *p, struct lb_whatif_site *sites, const int32_t *frame,
                        int n)
{
    for (int i = 0; i < n; i++) {
        const char *d = lb_demangled(sites[i].name);
        bool taken = false;
        for (int j = 0; j < i && !taken; j++)
            taken = strcmp(sites[j].label, d) == 0;
        sites[i].label = lb_xstrdup(taken ? lb_frame_desc(p, frame[i]) : d);
    }
}

/* Each lock site's share of its locks' hand-off latency (the waiters'
 * time from a release to running again): a lock's, by the part of its
 * blame whose release frame is the site's row (frame[i]; of the row's
 * kind). A virtual speedup shortens holds, not wake-ups, while a fix that
 * ends the contention saves both (docs/INTERNALS.md, "What-if
 * experiments", "Limits"). */
static void site_handoffs(struct lb_profile *p, struct lb_whatif_site *sites, const int32_t *frame,
                          int n)
{
    struct lb_strtab tab = { 0 };
    int32_t *keys = lb_frame_key_ids(p, &tab);
    double *at_site = lb_xcalloc((size_t)p->nobjs + 1, sizeof *at_site);
    for (int i = 0; i < n; i++) {
        if (sites[i].unsupported || frame[i] < 0 || !is_lock_kind(sites[i].row_kind))
            continue; /* a signal's waiters wake whatever its code's length */
        memset(at_site, 0, ((size_t)p->nobjs + 1) * sizeof *at_site);
        for (int32_t j = 0; j < p->noblame; j++) {
            const struct lb_objblame *ob = &p->oblame[j];
            int32_t f = lb_release_frame(p, ob->node, ob->thread_id, p->release_entry);
            if (f >= 0 && keys[f] == keys[frame[i]] &&
                p->objs[ob->object].kind == sites[i].row_kind)
                at_site[ob->object] += ob->blame_s;
        }
        for (int32_t o = 0; o < p->nobjs; o++)
            if (at_site[o] > 0 && p->objs[o].blame_s > 0)
                sites[i].handoff_s +=
                    p->objs[o].handoff_s *
                    (at_site[o] < p->objs[o].blame_s ? at_site[o] / p->objs[o].blame_s : 1);
    }
    free(at_site);
    free(keys);
    lb_strtab_free(&tab);
}

int lb_whatif_pick_sites(const char *path, const char *only, int k, struct lb_whatif_site **out)
{
    struct lb_profile *p = lb_profile_load(path);
    struct lb_site_rows sr;
    lb_site_rows(p, LB_M_IDLENESS, &sr);
    double total = lb_metric_total(p, LB_M_IDLENESS);
    struct lb_whatif_site *sites = lb_xcalloc((size_t)sr.acts + 1, sizeof *sites);
    int32_t *frame = lb_xcalloc((size_t)sr.acts + 1, sizeof *frame);
    int n = 0, kept = 0;
    for (int32_t i = 0; i < sr.acts && (only || kept < k); i++) {
        const struct lb_site_row *row = &sr.rows[i];
        if (!only && row->value < 0.01 * sr.rows[0].value)
            break;
        if (!take_row(p, row, total, &sites[n]))
            continue;
        bool same = false; /* an experiment already chosen: the same holds */
        for (int j = 0; j < n && !same; j++)
            same = sites[j].kind == sites[n].kind && strcmp(sites[j].name, sites[n].name) == 0;
        if (same || (only && strcmp(sites[n].name, only) != 0 &&
                     strcmp(lb_demangled(sites[n].name), only) != 0)) {
            lb_whatif_sites_free(&sites[n], 1);
            continue;
        }
        kept += !sites[n].unsupported;
        frame[n++] = row->frame;
    }
    /* Rows of other kinds below the last site of a kind sped up say nothing. */
    while (!only && n > 0 && sites[n - 1].unsupported)
        lb_whatif_sites_free(&sites[--n], 1);
    label_sites(p, sites, frame, n);
    site_handoffs(p, sites, frame, n);
    free(frame);
    lb_site_rows_free(&sr);
    lb_profile_free(p);
    *out = sites;
    return n;
}

void lb_whatif_sites_free(struct lb_whatif_site *sites, int n)
{
    for (int i = 0; i < n; i++) {
        free(sites[i].name);
        free(sites[i].label);
        free(sites[i].module);
        lb_buf_free(&sites[i].offsets);
        lb_buf_free(&sites[i].acquires);
        sites[i].name = sites[i].label = sites[i].module = NULL;
    }
}
