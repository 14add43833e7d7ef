/*
 * format_pprof.c - `report --format pprof`: the profile as pprof's
 * profile.proto (github.com/google/pprof, proto/profile.proto), gzipped,
 * which go tool pprof, Pyroscope, Parca and Grafana read.
 *
 * Sample types, in this order (all from the database, none recomputed):
 *   blame/nanoseconds        idleness blamed on this (release) context
 *   wait/nanoseconds         the victim's view: time waiting here
 *   work/nanoseconds         CPU samples while not waiting
 *   contentions/count        releases here that handed blame on (metric
 *                            blamed_count), on the unlocker's stack as in
 *                            Go's mutex profile
 * Each (node, thread) metric row gives one sample for work + wait and one
 * per object kind it received blame for, so that the label `object`
 * (mutex, cond, ...) is exact; every sample has a `thread` label and, when
 * the run knows its pid, a `process` label.
 *
 * Locations: inlined calls are separate frames (and tree nodes) in the
 * database, all at one code address. A run of parent nodes at the same
 * module offset, whose frame ids decrease towards the caller (the writer
 * inserts the outermost frame of an address first), is one pprof Location
 * with one Line per frame, innermost first, as profile.proto wants.
 * Recursion through one call site repeats a frame id, so it never merges.
 * Addresses are module offsets placed in a synthetic range per module
 * (load addresses are per run and mean nothing to a reader).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "report/cli/pbuf.h"
#include "report/cli/views.h"

enum {
    ST_BLAME,
    ST_WAIT,
    ST_WORK,
    ST_CONTENTIONS,
    ST_N
};

#define MAPPING_SPAN (UINT64_C(1) << 36) /* synthetic address range per module */
#define MAX_GROUP    64                  /* frames per location (inline depth) */

struct pp {
    struct lb_profile *p;
    struct lb_strtab str;    /* the string table; id 0 is "" */
    struct lb_pbuf prof;     /* Profile fields, appended as we go */
    struct lb_pbuf msg, sub; /* scratch messages */
    struct lb_strtab fnkeys; /* function key -> dense id (function id - 1) */
    int32_t *loc_of_frame;   /* innermost frame -> location id, 0 = none yet */
    int32_t root_loc;        /* location of metrics at the root, 0 = none yet */
    int32_t nlocs;
    struct lb_map thread_of_id; /* thread id -> index into p->threads */
};

static int64_t s(struct pp *pp, const char *text)
{
    return lb_strtab_intern(&pp->str, text ? text : "");
}

static int64_t ns(double seconds)
{
    return (int64_t)llround(seconds * 1e9);
}

static void value_type(struct pp *pp, uint32_t field, const char *type, const char *unit)
{
    lb_pb_reset(&pp->msg);
    lb_pb_int(&pp->msg, 1, s(pp, type));
    lb_pb_int(&pp->msg, 2, s(pp, unit));
    lb_pb_message(&pp->prof, field, &pp->msg);
}

/* The Function id for frame f (-1: the root pseudo-frame), created on first
 * use: name is the demangled label, system_name the symbol as stored. */
static uint64_t function_id(struct pp *pp, int32_t f)
{
    struct lb_profile *p = pp->p;
    const char *name = lb_frame_label(p, f);
    const char *sys = f >= 0 && p->frames[f].function ? p->frames[f].function : name;
    const char *file = f >= 0 ? p->frames[f].file : NULL;
    struct lb_buf key = { 0 };

    if (!file && f >= 0 && p->frames[f].module >= 0)
        file = p->modules[p->frames[f].module].path;
    lb_buf_printf(&key, "%s\t%s\t%s", name, sys, file ? file : "");
    int32_t before = pp->fnkeys.n, id = lb_strtab_intern(&pp->fnkeys, lb_buf_str(&key));

    lb_buf_free(&key);
    if (id == before) {
        lb_pb_reset(&pp->msg);
        lb_pb_uint(&pp->msg, 1, (uint64_t)id + 1);
        lb_pb_int(&pp->msg, 2, s(pp, name));
        lb_pb_int(&pp->msg, 3, s(pp, sys));
        lb_pb_int(&pp->msg, 4, s(pp, file));
        lb_pb_message(&pp->prof, 5, &pp->msg);
    }
    return (uint64_t)id + 1;
}

/* A Location for frames[0..n) (innermost first, all at one address), or for
 * the root when n == 0. Returns its id. */
static int32_t add_location(struct pp *pp, const int32_t *frames, int n)
{
    struct lb_profile *p = pp->p;
    int32_t id = ++pp->nlocs;
    struct lb_pbuf loc = { 0 };

    lb_pb_uint(&loc, 1, (uint64_t)id);
    if (n > 0 && p->frames[frames[0]].module >= 0) {
        const struct lb_frame *f = &p->frames[frames[0]];

        lb_pb_uint(&loc, 2, (uint64_t)f->module + 1);
        lb_pb_uint(&loc, 3, ((uint64_t)f->module + 1) * MAPPING_SPAN + f->offset % MAPPING_SPAN);
    }
    for (int i = 0; i < (n ? n : 1); i++) {
        int32_t f = n ? frames[i] : -1;

        lb_pb_reset(&pp->sub);
        lb_pb_uint(&pp->sub, 1, function_id(pp, f));
        if (f >= 0 && p->frames[f].line > 0)
            lb_pb_int(&pp->sub, 2, p->frames[f].line);
        lb_pb_message(&loc, 4, &pp->sub);
    }
    lb_pb_message(&pp->prof, 4, &loc);
    lb_pb_free(&loc);
    return id;
}

static bool same_address(const struct lb_profile *p, int32_t inner, int32_t outer)
{
    if (inner < 0 || outer < 0 || outer >= inner)
        return false;
    const struct lb_frame *a = &p->frames[inner], *b = &p->frames[outer];

    return a->module >= 0 && a->module == b->module && a->offset == b->offset;
}

/* The location ids of node v's path, leaf first, into *ids (grown). */
static size_t stack_of(struct pp *pp, int32_t v, uint64_t **ids, size_t *cap)
{
    struct lb_profile *p = pp->p;
    size_t n = 0;

    if (v == p->root) {
        if (!pp->root_loc)
            pp->root_loc = add_location(pp, NULL, 0);
        lb_grow((void **)ids, cap, 1, sizeof **ids);
        (*ids)[n++] = (uint64_t)pp->root_loc;
        return n;
    }
    for (int32_t u = v; u >= 0 && u != p->root;) {
        int32_t group[MAX_GROUP], g = 0, f = p->nodes[u].frame;
        int32_t w = u;

        group[g++] = f;
        for (w = p->nodes[u].parent; w >= 0 && w != p->root && g < MAX_GROUP &&
                                     same_address(p, group[g - 1], p->nodes[w].frame);
             w = p->nodes[w].parent)
            group[g++] = p->nodes[w].frame;
        int32_t *slot = f >= 0 ? &pp->loc_of_frame[f] : &pp->root_loc;

        if (!*slot)
            *slot = add_location(pp, group, f >= 0 ? g : 0);
        lb_grow((void **)ids, cap, n + 1, sizeof **ids);
        (*ids)[n++] = (uint64_t)*slot;
        u = w;
    }
    return n;
}

static void label(struct pp *pp, struct lb_pbuf *sample, const char *key, const char *value)
{
    lb_pb_reset(&pp->sub);
    lb_pb_int(&pp->sub, 1, s(pp, key));
    lb_pb_int(&pp->sub, 2, s(pp, value));
    lb_pb_message(sample, 3, &pp->sub);
}

/* The process a metric row belongs to: its thread's (schema 3 holds a
 * process tree); a version-2 database is one process. 0 = unknown. */
static int64_t row_pid(const struct lb_profile *p, const struct lb_mrow *m)
{
    int32_t proc = lb_thread_process(p, m->thread_id);

    if (proc >= 0)
        return p->procs[proc].pid;
    return p->nprocs == 1 ? p->run.pid : 0;
}

static void thread_label(struct pp *pp, const struct lb_mrow *m, struct lb_buf *b)
{
    struct lb_profile *p = pp->p;
    int32_t t = lb_map_get(&pp->thread_of_id, (uint64_t)m->thread_id);

    lb_buf_reset(b);
    if (t < 0) {
        lb_buf_printf(b, "thread %" PRId64, m->thread_id);
        return;
    }
    const struct lb_thread *th = &p->threads[t];

    lb_buf_printf(b, "tid %" PRId64 " (%s)", th->tid,
                  th->start_frame >= 0 ? lb_frame_label(p, th->start_frame) : "main");
}

static void add_sample(struct pp *pp, const uint64_t *locs, size_t nlocs, const int64_t v[ST_N],
                       const char *kind, const char *thread, const char *process)
{
    uint64_t vals[ST_N];
    bool any = false;

    for (int i = 0; i < ST_N; i++) {
        vals[i] = (uint64_t)v[i];
        any |= v[i] != 0;
    }
    if (!any)
        return;
    lb_pb_reset(&pp->msg);
    lb_pb_packed(&pp->msg, 1, locs, nlocs);
    lb_pb_packed(&pp->msg, 2, vals, ST_N);
    if (kind)
        label(pp, &pp->msg, "object", kind);
    label(pp, &pp->msg, "thread", thread);
    if (process)
        label(pp, &pp->msg, "process", process);
    lb_pb_message(&pp->prof, 2, &pp->msg);
}

static void add_samples(struct pp *pp)
{
    struct lb_profile *p = pp->p;
    uint64_t *locs = NULL;
    size_t cap = 0;
    struct lb_buf thread = { 0 }, process = { 0 };

    for (int32_t i = 0; i < p->nmrows; i++) {
        const struct lb_mrow *m = &p->mrows[i];
        size_t n = stack_of(pp, m->node, &locs, &cap);
        int64_t pid = row_pid(p, m);
        int top = -1;

        thread_label(pp, m, &thread);
        lb_buf_reset(&process);
        if (pid > 0)
            lb_buf_printf(&process, "%" PRId64, pid);
        for (int k = 0; k < LB_OBJ_KINDS; k++)
            if (m->idle[k] != 0 && (top < 0 || fabs(m->idle[k]) > fabs(m->idle[top])))
                top = k;
        int64_t v[ST_N] = { [ST_WAIT] = ns(m->wait),
                            [ST_WORK] = ns(m->work),
                            [ST_CONTENTIONS] = top < 0 ? m->blamed_count : 0 };

        add_sample(pp, locs, n, v, NULL, lb_buf_str(&thread),
                   pid > 0 ? lb_buf_str(&process) : NULL);
        for (int k = 0; k < LB_OBJ_KINDS; k++) {
            if (m->idle[k] == 0)
                continue;
            int64_t kv[ST_N] = {
                [ST_BLAME] = ns(m->idle[k]), [ST_CONTENTIONS] = k == top ? m->blamed_count : 0
            };

            add_sample(pp, locs, n, kv, lb_obj_kind_names[k], lb_buf_str(&thread),
                       pid > 0 ? lb_buf_str(&process) : NULL);
        }
    }
    free(locs);
    lb_buf_free(&thread);
    lb_buf_free(&process);
}

/* The module of the profiled program: the one named like the command's
 * first word. -1 if none is. */
static int32_t main_module(const struct lb_profile *p)
{
    const char *cmd = p->run.command ? p->run.command : "";
    size_t n = strcspn(cmd, " \t");
    const char *slash = memrchr(cmd, '/', n);
    const char *base = slash ? slash + 1 : cmd;
    size_t len = n - (size_t)(base - cmd);

    for (int32_t i = 0; len && i < p->nmodules; i++)
        if (strlen(p->modules[i].base_name) == len &&
            memcmp(p->modules[i].base_name, base, len) == 0)
            return i;
    return -1;
}

/* One Mapping per module; the program's own first, which is where pprof
 * looks for the main binary. */
static void add_mappings(struct pp *pp)
{
    struct lb_profile *p = pp->p;
    int32_t first = main_module(p);

    for (int32_t k = -1; k < p->nmodules; k++) {
        int32_t i = k < 0 ? first : k;

        if (i < 0 || (k >= 0 && i == first))
            continue;
        uint64_t start = ((uint64_t)i + 1) * MAPPING_SPAN;

        lb_pb_reset(&pp->msg);
        lb_pb_uint(&pp->msg, 1, (uint64_t)i + 1);
        lb_pb_uint(&pp->msg, 2, start);
        lb_pb_uint(&pp->msg, 3, start + MAPPING_SPAN);
        lb_pb_int(&pp->msg, 5, s(pp, p->modules[i].path));
        for (uint32_t field = 7; field <= 10; field++) /* has_functions .. has_inline_frames */
            lb_pb_uint(&pp->msg, field, 1);
        lb_pb_message(&pp->prof, 3, &pp->msg);
    }
}

/* Write the gzipped bytes to stdout (report.c has pointed it at -o FILE).
 * Returns 0, or 1 after one "lockblame:" line. */
static int write_gzip(const struct lb_pbuf *b)
{
    fflush(stdout);
    int fd = dup(fileno(stdout));
    gzFile gz = fd >= 0 ? gzdopen(fd, "wb") : NULL;

    if (!gz) {
        if (fd >= 0)
            close(fd);
        cli_warn("report: cannot write the pprof output");
        return LB_EXIT_FAIL;
    }
    size_t off = 0;
    bool ok = true;

    while (ok && off < b->len) {
        unsigned chunk = b->len - off > (1u << 30) ? 1u << 30 : (unsigned)(b->len - off);

        ok = gzwrite(gz, b->data + off, chunk) == (int)chunk;
        off += chunk;
    }
    if (gzclose(gz) != Z_OK || !ok) {
        cli_warn("report: cannot write the pprof output");
        return LB_EXIT_FAIL;
    }
    return LB_EXIT_OK;
}

int lb_view_pprof(struct lb_profile *p, const struct lb_report_opts *o)
{
    (void)o;
    struct pp pp = { .p = p };

    s(&pp, ""); /* string_table[0] must be "" */
    pp.loc_of_frame = lb_xcalloc((size_t)p->nframes + 1, sizeof *pp.loc_of_frame);
    for (int32_t t = 0; t < p->nthreads; t++) {
        bool is_new;

        *lb_map_slot(&pp.thread_of_id, (uint64_t)p->threads[t].id, &is_new) = t;
    }
    value_type(&pp, 1, "blame", "nanoseconds");
    value_type(&pp, 1, "wait", "nanoseconds");
    value_type(&pp, 1, "work", "nanoseconds");
    value_type(&pp, 1, "contentions", "count");
    add_mappings(&pp);
    add_samples(&pp);
    if (p->run.start_unix > 0)
        lb_pb_int(&pp.prof, 9, ns(p->run.start_unix));
    lb_pb_int(&pp.prof, 10, ns(p->run.duration_s));
    value_type(&pp, 11, "blame", "nanoseconds");
    lb_pb_int(&pp.prof, 12, 1);
    struct lb_buf c = { 0 };

    lb_buf_printf(&c, "lockblame: %s", *p->run.command ? p->run.command : p->path);
    lb_pb_int(&pp.prof, 13, s(&pp, lb_buf_str(&c)));
    lb_buf_free(&c);
    lb_pb_int(&pp.prof, 14, s(&pp, "blame"));
    for (int32_t i = 0; i < pp.str.n; i++) /* last: every string is interned by now */
        lb_pb_string(&pp.prof, 6, pp.str.strs[i]);

    int rc = write_gzip(&pp.prof);

    lb_pb_free(&pp.prof);
    lb_pb_free(&pp.msg);
    lb_pb_free(&pp.sub);
    lb_strtab_free(&pp.str);
    lb_strtab_free(&pp.fnkeys);
    lb_map_free(&pp.thread_of_id);
    free(pp.loc_of_frame);
    return rc;
}
