/*
 * whatif_sites.c - the release sites of a profile that `lockblame whatif`
 * experiments on (whatif_sites.h).
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
#include "common/runtime_frames.h"

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

/* A metric row's blame, all kinds (idle_futex_s is NULL in databases
 * older than the futex kind): the total and the per-node ranking add the
 * same terms. */
#define BLAME_OF_METRIC_ROW                                                     \
    "idle_mutex_s + idle_spin_s + idle_rwlock_s + idle_cond_s + idle_barrier_s" \
    " + idle_sem_s + COALESCE(idle_futex_s, 0)"

double lb_whatif_total_blame(sqlite3 *db)
{
    sqlite3_stmt *st;
    double total = 0;
    if (sqlite3_prepare_v2(db, "SELECT SUM(" BLAME_OF_METRIC_ROW ") FROM metric", -1, &st, NULL) ==
            SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        total = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    return total;
}

/* Site names of the profile's frames: the function without its clone
 * suffixes, or NULL for a frame of the runtime (docs/DESIGN.md rule 5). */
struct frames {
    char **name;
    long long n;
};

static struct frames load_frames(sqlite3 *db)
{
    struct frames f = { 0 };
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT f.id, f.function, f.file, m.path FROM frame f"
                           " LEFT JOIN module m ON m.id = f.module_id ORDER BY f.id DESC",
                           -1, &st, NULL) != SQLITE_OK)
        return f;
    while (sqlite3_step(st) == SQLITE_ROW) {
        long long id = sqlite3_column_int64(st, 0);
        const char *fn = (const char *)sqlite3_column_text(st, 1);
        if (!f.name) {
            f.n = id + 1;
            f.name = lb_xcalloc((size_t)f.n, sizeof *f.name);
        }
        if (id < 0 || id >= f.n || !fn ||
            lb_runtime_frame(fn, (const char *)sqlite3_column_text(st, 2),
                             (const char *)sqlite3_column_text(st, 3)))
            continue;
        f.name[id] = lb_xstrdup(fn);
        f.name[id][lb_clone_base_len(fn)] = '\0';
    }
    sqlite3_finalize(st);
    return f;
}

static int by_blame(const void *a, const void *b)
{
    double x = ((const struct lb_whatif_site *)a)->blame_s,
           y = ((const struct lb_whatif_site *)b)->blame_s;
    return (x < y) - (x > y);
}

/* Blame per site, every kind but joins (structural): each release
 * context's goes to its innermost program frame, as the report's
 * release-site view names it. */
static int site_blame(sqlite3 *db, const char *path, struct lb_whatif_site **out)
{
    struct frames fr = load_frames(db);
    struct lb_map node = { 0 };
    long long *parent = NULL, *frame = NULL;
    size_t cap = 0, scap = 0;
    int nnodes = 0, n = 0;
    struct lb_whatif_site *sites = NULL;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT id, COALESCE(parent_id, -1), COALESCE(frame_id, -1) FROM node",
                           -1, &st, NULL) != SQLITE_OK)
        cli_die(LB_EXIT_FAIL, "whatif: %s: %s", path, sqlite3_errmsg(db));
    while (sqlite3_step(st) == SQLITE_ROW) {
        lb_grow((void **)&parent, &cap, (size_t)nnodes + 1, sizeof *parent);
        frame = lb_xrealloc(frame, cap * sizeof *frame);
        parent[nnodes] = sqlite3_column_int64(st, 1);
        frame[nnodes] = sqlite3_column_int64(st, 2);
        bool fresh;
        *lb_map_slot(&node, (uint64_t)sqlite3_column_int64(st, 0), &fresh) = nnodes++;
    }
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(db,
                           "SELECT node_id, SUM(" BLAME_OF_METRIC_ROW ") AS b FROM metric"
                           " GROUP BY node_id"
                           " HAVING b > 0",
                           -1, &st, NULL) != SQLITE_OK)
        cli_die(LB_EXIT_FAIL, "whatif: %s: %s", path, sqlite3_errmsg(db));
    while (sqlite3_step(st) == SQLITE_ROW) {
        int32_t i = lb_map_get(&node, (uint64_t)sqlite3_column_int64(st, 0));
        const char *name = NULL;
        for (int hops = 0; i >= 0 && !name && hops < 256; hops++) {
            long long f = frame[i];
            name = f >= 0 && f < fr.n ? fr.name[f] : NULL;
            i = name ? i : lb_map_get(&node, (uint64_t)parent[i]);
        }
        if (!name)
            continue;
        int k = 0;
        while (k < n && strcmp(sites[k].name, name) != 0)
            k++;
        if (k == n) {
            lb_grow((void **)&sites, &scap, (size_t)n + 1, sizeof *sites);
            memset(&sites[n], 0, sizeof *sites);
            sites[n++].name = lb_xstrdup(name);
        }
        sites[k].blame_s += sqlite3_column_double(st, 1);
    }
    sqlite3_finalize(st);
    qsort(sites, (size_t)n, sizeof *sites, by_blame);
    for (long long f = 0; f < fr.n; f++)
        free(fr.name[f]);
    free(fr.name);
    free(parent);
    free(frame);
    lb_map_free(&node);
    *out = sites;
    return n;
}

/* The site's release calls and its lock and cond-wait calls: the site
 * table's call instructions where a frame of that name sits (an inline
 * runtime frame such as std::mutex::unlock is the innermost one there). */
static void site_calls(sqlite3 *db, const char *path, struct lb_whatif_site *s)
{
    sqlite3_stmt *calls;
    if (sqlite3_prepare_v2(db,
                           "SELECT mo.path, f.offset,"
                           " SUM(CASE WHEN s.object = 'mutex' THEN s.releases ELSE 0 END),"
                           " SUM(s.acquisitions)"
                           " FROM site s JOIN frame f ON f.id = s.frame_id JOIN module mo"
                           " ON mo.id = f.module_id WHERE s.object IN ('mutex', 'cond')"
                           " AND EXISTS (SELECT 1 FROM frame g WHERE g.module_id = f.module_id"
                           " AND g.offset = f.offset AND (g.function = ?1"
                           " OR substr(g.function, 1, length(?1) + 1) = ?1 || '.'))"
                           " GROUP BY mo.path, f.offset ORDER BY 3 DESC, 4 DESC LIMIT 128",
                           -1, &calls, NULL) != SQLITE_OK)
        cli_die(LB_EXIT_FAIL, "whatif: %s: %s", path, sqlite3_errmsg(db));
    sqlite3_bind_text(calls, 1, s->name, -1, SQLITE_STATIC);
    while (sqlite3_step(calls) == SQLITE_ROW) {
        const char *mod = (const char *)sqlite3_column_text(calls, 0);
        unsigned long long off = (unsigned long long)sqlite3_column_int64(calls, 1);
        if (!mod || (s->module && strcmp(mod, s->module) != 0))
            continue; /* one module: the busiest's */
        if (!s->module)
            s->module = lb_xstrdup(mod);
        if (sqlite3_column_int64(calls, 2) > 0 && s->nrel++ < 64)
            lb_buf_printf(&s->offsets, "%s%llx", s->offsets.len ? "," : "", off);
        if (sqlite3_column_int64(calls, 3) > 0 && s->nacq++ < 64)
            lb_buf_printf(&s->acquires, "%s%llx", s->acquires.len ? "," : "", off);
    }
    sqlite3_finalize(calls);
    if (s->module)
        s->fstart = lb_whatif_function_start(s->module, s->name);
}

int lb_whatif_pick_sites(sqlite3 *db, const char *path, const char *only, int k,
                         struct lb_whatif_site **out)
{
    struct lb_whatif_site *all;
    int n = site_blame(db, path, &all), kept = 0;
    for (int i = 0; i < n; i++) {
        bool keep =
            only ? strcmp(all[i].name, only) == 0 || strcmp(lb_demangled(all[i].name), only) == 0
                 : kept < k && all[i].blame_s >= 0.01 * all[0].blame_s;
        if (!keep) {
            free(all[i].name);
            continue;
        }
        all[kept] = all[i];
        site_calls(db, path, &all[kept]);
        if (all[kept].nrel > 0) {
            kept++;
            continue;
        }
        /* No mutex release there: nothing to speed up. */
        free(all[kept].name);
        free(all[kept].module);
        lb_buf_free(&all[kept].offsets);
        lb_buf_free(&all[kept].acquires);
    }
    *out = all;
    return kept;
}
