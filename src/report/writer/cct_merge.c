/* Merging every thread's calling context tree into the profile's one tree,
 * keyed by frame: each distinct code address is named once (from the run's
 * symbol cache, else by the symbolizer), inlined
 * calls become nodes of their own, and each (parent, frame) edge becomes
 * one node. A thread's node is merged only where a row needs it: its
 * metrics, a row that names it (lb_merge_mapped_node), or a caller of
 * one; a fork child's CCT holds every path its parent had, and a server's
 * child would otherwise name and write them all again. Writes module,
 * frame, node and metric rows of the in-memory profile. Runs on the
 * finishing thread after the sampler is quiesced. */
#include <stdbool.h>
#include <stdlib.h>

#include "common/db_merge.h"
#include "common/scratch.h"
#include "core/retired_modules.h"
#include "report/writer/symcache.h"
#include "report/writer/modmap.h"
#include "report/writer/tailcall.h"
#include "report/writer/writer_int.h"
#include "sampler/cct.h"
#include "sampler/sampler.h"
#include "sampler/unwind.h"

/* The module row of the module at base, written at its first frame (pc):
 * its path, base and build id (NULL when it has none). */
static uint32_t module_id(writer_t *w, const char *path, uintptr_t base, uintptr_t pc)
{
    uint32_t id;
    if (lb_u64map_get(&w->module_of_base, base + 1, &id))
        return id;
    id = ++w->modules;
    lb_u64map_put(&w->module_of_base, base + 1, id);
    char build_id[129];
    lb_wbind_int(w->ins_module, 1, id);
    lb_wbind_text(w->ins_module, 2, path);
    lb_wbind_int(w->ins_module, 3, (sqlite3_int64)base);
    if (lb_symcache_build_id(w->cache, pc, base, build_id, sizeof build_id) ||
        lb_symbol_build_id(w->sym, pc, build_id, sizeof build_id))
        lb_wbind_text(w->ins_module, 4, build_id);
    lb_wstep(w->ins_module);
    return id;
}

static uint32_t insert_frame(writer_t *w, const lb_symbol_t *sym, uintptr_t pc,
                             const char *function, const char *file, int line)
{
    uint32_t id = ++w->frames;
    lb_wbind_int(w->ins_frame, 1, id);
    if (sym->module) {
        lb_wbind_int(w->ins_frame, 2, module_id(w, sym->module, sym->base, pc));
        lb_wbind_int(w->ins_frame, 3, (sqlite3_int64)(pc - sym->base));
    } else {
        lb_wbind_int(w->ins_frame, 3, (sqlite3_int64)pc);
    }
    lb_wbind_text(w->ins_frame, 4, function);
    lb_wbind_text(w->ins_frame, 5, file);
    lb_wbind_int(w->ins_frame, 6, line);
    lb_wstep(w->ins_frame);
    return id;
}

/* Frame map keys: (pc << 4 | i) holds the id of source frame i at pc,
 * outermost first; (pc << 4 | 15) holds how many there are. */
#define LB_FRAME_COUNT_SLOT 15

/* The source frames at a code address, outermost first (the real function,
 * then each inlined call); symbolized once. Returns how many (>= 1), or 0
 * for pc 0. */
static int frame_chain(writer_t *w, uintptr_t pc, uint32_t ids[LB_MAX_INLINE + 1])
{
    uint32_t n;
    if (pc == 0)
        return 0;
    uint64_t key = (uint64_t)pc << 4;
    if (lb_u64map_get(&w->frame_of_pc, key | LB_FRAME_COUNT_SLOT, &n)) {
        for (uint32_t i = 0; i < n; i++)
            lb_u64map_get(&w->frame_of_pc, key | i, &ids[i]);
        return (int)n;
    }
    lb_symbol_t sym;
    bool named = lb_symcache_find(w->cache, pc, &sym);
    if (!named && w->defer_names && lb_symcache_unnamed(w->cache, pc, &sym)) {
        named = true; /* by the merge */
        w->unnamed_frames++;
    }
    if (!named) {
        lb_symbolize(w->sym, pc, &sym);
        lb_symcache_add(w->cache, w->sym, pc, &sym);
    }
    n = 0;
    ids[n++] = insert_frame(w, &sym, pc, sym.function, sym.file, sym.line);
    for (int i = sym.n_inline - 1; i >= 0; i--) {
        const lb_source_frame_t *f = &sym.inline_frames[i];
        ids[n++] = insert_frame(w, &sym, pc, f->function, f->file, f->line);
    }
    for (uint32_t i = 0; i < n; i++)
        lb_u64map_put(&w->frame_of_pc, key | i, ids[i]);
    lb_u64map_put(&w->frame_of_pc, key | LB_FRAME_COUNT_SLOT, n);
    return (int)n;
}

/* The innermost source frame at pc: the program frame that makes a call. */
uint32_t lb_merge_frame(writer_t *w, uintptr_t pc)
{
    uint32_t ids[LB_MAX_INLINE + 1];
    int n = frame_chain(w, pc, ids);
    return n ? ids[n - 1] : 0;
}

/* jump_of_pc's values: 0 none; a jump within 1 GiB of its call, as
 * NEAR_BIAS + (jump - call pc); another, 1 + its index in far_jumps (a
 * call through the PLT into another module's function). */
#define NEAR_BIAS  0x80000000u
#define NEAR_RANGE 0x3fffffff

static uint32_t far_jump(writer_t *w, uintptr_t jump)
{
    if (w->nfar == w->far_cap) {
        uint32_t cap = w->far_cap ? 2 * w->far_cap : 16;
        uintptr_t *grown =
            cap < NEAR_RANGE ? lb_scratch_realloc(w->far_jumps, cap * sizeof *grown) : NULL;
        if (!grown)
            return 0; /* the caller stays the site */
        w->far_jumps = grown;
        w->far_cap = cap;
    }
    w->far_jumps[w->nfar++] = jump;
    return w->nfar;
}

uintptr_t lb_merge_site_pc(writer_t *w, uintptr_t call_pc)
{
    uint32_t v;
    if (lb_retired_contains(call_pc))
        return call_pc; /* its code is gone: no tail jump to read */
    if (!lb_u64map_get(&w->jump_of_pc, call_pc, &v)) {
        uintptr_t jump = lb_tailcall_jump(w->sym, call_pc, lb_pc_in_self, &w->tailcall);
        int64_t delta = jump ? (int64_t)(jump - call_pc) : 0;
        v = !jump                                         ? 0
            : delta >= -NEAR_RANGE && delta <= NEAR_RANGE ? (uint32_t)(delta + NEAR_BIAS)
                                                          : far_jump(w, jump);
        lb_u64map_put(&w->jump_of_pc, call_pc, v);
    }
    if (v == 0)
        return call_pc;
    if (v <= w->nfar && v < NEAR_BIAS - NEAR_RANGE)
        return w->far_jumps[v - 1];
    return (uintptr_t)((int64_t)call_pc + (int64_t)v - NEAR_BIAS);
}

void lb_merge_forget_unloaded(writer_t *w)
{
    unsigned long long counts[2];
    lb_modmap_loader_counts(counts);
    if (counts[1] == w->unloads)
        return;
    w->unloads = counts[1];
    lb_u64map_free(&w->jump_of_pc); /* an empty map, grown again as it is used */
    w->nfar = 0;
    lb_tailcall_cache_forget_stubs(&w->tailcall);
}

/* Metrics that only a path ending in our wrappers carries. Join blame
 * sits on the joined thread's start routine (an entry address, not a
 * call), so it does not count. */
static bool is_wrapper_leaf(const lb_metrics_t *m)
{
    if (m->wait_ns)
        return true;
    for (int k = 0; k < LB_OBJ_KINDS; k++)
        if (k != LB_OBJ_JOIN && m->idle_ns[k] != 0)
            return true;
    return false;
}

static uint32_t global_node(writer_t *w, uint32_t parent, uint32_t frame, uint32_t depth)
{
    uint64_t key = (uint64_t)parent << 32 | frame;
    uint32_t id;
    if (lb_u64map_get(&w->node_of_edge, key, &id))
        return id;
    id = ++w->nodes;
    lb_u64map_put(&w->node_of_edge, key, id);
    lb_wbind_int(w->ins_node, 1, id);
    lb_wbind_int(w->ins_node, 2, parent);
    lb_wbind_int(w->ins_node, 3, frame);
    lb_wbind_int(w->ins_node, 4, (int)depth);
    lb_wstep(w->ins_node);
    return id;
}

bool lb_merge_metrics_empty(const lb_metrics_t *m)
{
    if (m->work_samples || m->overhead_samples || m->wait_ns || m->blamed_count ||
        m->undirected_samples != 0)
        return false;
    for (int k = 0; k < LB_OBJ_KINDS; k++) {
        if (m->idle_ns[k] != 0)
            return false;
    }
    return true;
}

void lb_merge_put_metric(writer_t *w, uint64_t node, uint64_t thread, const lb_metrics_t *m)
{
    lb_wstmt_t *st = w->ins_metric;
    lb_wbind_int(st, 1, node);
    lb_wbind_int(st, 2, thread);
    lb_wbind_double(st, 3, (double)m->work_samples * w->ns_per_sample / 1e9);
    lb_wbind_double(st, 4, (double)m->overhead_samples * w->ns_per_sample / 1e9);
    double wait_s = (double)m->wait_ns / 1e9;
    lb_wbind_double(st, 5, wait_s);
    /* idle_mutex_s .. idle_join_s in kind order, then blamed_count and
     * idle_undirected_s; idle_futex_s, added later, is the last column */
    for (int k = 0; k <= LB_OBJ_JOIN; k++)
        lb_wbind_double(st, 6 + k, m->idle_ns[k] / 1e9);
    lb_wbind_int(st, 7 + LB_OBJ_JOIN, m->blamed_count);
    lb_wbind_double(st, 8 + LB_OBJ_JOIN, m->undirected_samples * w->ns_per_sample / 1e9);
    lb_wbind_double(st, 9 + LB_OBJ_JOIN, m->idle_ns[LB_OBJ_FUTEX] / 1e9);
    lb_wstep(st);
    /* the rows' wait_s in their order, as SQL's TOTAL would sum them; a
     * second row of one (node, thread) breaks the table's key and is not
     * there to sum */
    bool is_new = false;
    int32_t *seen = lb_u64map_slot(&w->metric_keys, node << 32 | thread, &is_new);
    if (seen && is_new) {
        *seen = 0;
        if (w->waits_s && thread < w->thread_slots)
            w->waits_s[thread] += wait_s;
    }
}

uint32_t lb_merge_child(writer_t *w, uint32_t parent, uint32_t *depth, uintptr_t pc)
{
    uint32_t frames[LB_MAX_INLINE + 1];
    int nf = frame_chain(w, pc, frames);
    for (int i = 0; i < nf; i++)
        parent = global_node(w, parent, frames[i], ++*depth);
    return parent;
}

uint32_t lb_merge_metric_node(writer_t *w, uint32_t g, uint32_t depth, uintptr_t pc,
                              const lb_metrics_t *m)
{
    uintptr_t site = is_wrapper_leaf(m) ? lb_merge_site_pc(w, pc) : 0;
    if (!site || site == pc)
        return g;
    return lb_merge_child(w, g, &depth, site); /* the tail-called function, below the caller */
}

/* Map thread's local node id, its callers first (as deep as the thread's
 * CCT: at most LB_MAX_DEPTH frames). */
static uint32_t map_local(writer_t *w, uint32_t thread, uint32_t id)
{
    uint32_t *map = w->node_maps[thread], *depth = w->depth_maps[thread];
    if (id == 0 || map[id])
        return map[id];
    const lb_cct_node_t *node = lb_cct_node(w->ccts[thread], id);
    if (!node)
        return 0;
    uint32_t parent = map_local(w, thread, node->parent);
    depth[id] = depth[node->parent];
    map[id] = lb_merge_child(w, parent, &depth[id], node->pc);
    return map[id];
}

int lb_merge_thread(writer_t *w, lb_thread_t *t)
{
    if (!t->cct || t->id >= w->thread_slots)
        return 0;
    uint32_t n = t->cct->nodes;
    uint32_t *map = lb_scratch_calloc(n ? n : 1, sizeof *map);
    uint32_t *depth = lb_scratch_calloc(n ? n : 1, sizeof *depth); /* global depth of map[id] */
    uint32_t *leaf = lb_scratch_calloc(n ? n : 1, sizeof *leaf);
    if (!map || !depth || !leaf) {
        lb_scratch_free(map);
        lb_scratch_free(depth);
        lb_scratch_free(leaf);
        return -1;
    }
    w->node_maps[t->id] = map;
    w->depth_maps[t->id] = depth;
    w->leaf_maps[t->id] = leaf;
    w->ccts[t->id] = t->cct;
    w->node_counts[t->id] = n;
    for (uint32_t id = 0; id < n; id++) {
        lb_cct_node_t *node = lb_cct_node(t->cct, id);
        if (!node)
            break;
        lb_metrics_t m = node->m;
        if (id == 0)
            m.overhead_samples += t->sampler->busy_samples; /* lockblame's own cost */
        if (lb_merge_metrics_empty(&m))
            continue;
        uint32_t mapped = map_local(w, t->id, id);
        uint32_t g = id ? lb_merge_metric_node(w, mapped, depth[id], node->pc, &m) : mapped;
        if (g != mapped)
            leaf[id] = g;
        lb_merge_put_metric(w, g, t->id, &m);
    }
    return 0;
}

uint32_t lb_merge_mapped_node(writer_t *w, uint32_t thread, uint32_t local)
{
    if (thread >= w->thread_slots || !w->node_maps[thread] || local >= w->node_counts[thread])
        return 0;
    return map_local(w, thread, local);
}

uint32_t lb_merge_leaf_node(writer_t *w, uint32_t thread, uint32_t local)
{
    if (thread < w->thread_slots && w->leaf_maps[thread] && local < w->node_counts[thread] &&
        w->leaf_maps[thread][local])
        return w->leaf_maps[thread][local];
    return lb_merge_mapped_node(w, thread, local);
}

/* How many CCT nodes the threads hold: the merged tree's size before
 * inlined calls, so that its maps are sized once, small for a small
 * process (a map's pages are touched at random, each a page fault of a
 * fresh heap) and without rehashing for a large one. */
static size_t cct_nodes(void)
{
    size_t n = 0;
    for (lb_thread_t *t = lb_thread_registry(); t; t = t->next)
        n += t->cct ? t->cct->nodes : 0;
    return n;
}

/* w's symbolizer, naming cut markers' modules from the cache's modules. */
static void open_symbolizer(writer_t *w)
{
    w->sym = lb_symbolizer_open();
    lb_symbolizer_use_modules(w->sym, lb_symcache_modules(w->cache));
}

void lb_merge_release_files(writer_t *w)
{
    lb_symbolizer_close(w->sym);
    open_symbolizer(w);
    lb_tailcall_cache_forget_blocks(&w->tailcall);
}

int lb_merge_open(writer_t *w)
{
    size_t nodes = cct_nodes();
    w->thread_slots = lb_thread_count();
    size_t slots = w->thread_slots ? w->thread_slots : 1;
    w->node_maps = lb_scratch_calloc(slots, sizeof *w->node_maps);
    w->leaf_maps = lb_scratch_calloc(slots, sizeof *w->leaf_maps);
    w->depth_maps = lb_scratch_calloc(slots, sizeof *w->depth_maps);
    w->ccts = lb_scratch_calloc(slots, sizeof *w->ccts);
    w->node_counts = lb_scratch_calloc(slots, sizeof *w->node_counts);
    w->waits_s = lb_scratch_calloc(slots, sizeof *w->waits_s);
    if (!w->node_maps || !w->leaf_maps || !w->depth_maps || !w->ccts || !w->node_counts ||
        !w->waits_s || lb_u64map_init(&w->jump_of_pc, 64) ||
        lb_u64map_init(&w->frame_of_pc, 2 * nodes) || lb_u64map_init(&w->module_of_base, 64) ||
        lb_u64map_init(&w->node_of_edge, nodes))
        return -1;
    unsigned long long loader[2];
    lb_modmap_loader_counts(loader);
    w->unloads = loader[1];
    w->ins_frame = lb_wprepare(w, LB_ROW_FRAME);
    w->ins_module = lb_wprepare(w, LB_ROW_MODULE);
    w->ins_node = lb_wprepare(w, LB_ROW_NODE);
    w->ins_metric = lb_wprepare(w, LB_ROW_METRIC);
    lb_wbind_int(w->ins_node, 1, 0); /* the root: no parent, no frame */
    lb_wbind_int(w->ins_node, 4, 0);
    if (lb_wstep(w->ins_node) != 0)
        return -1;
    w->cache = lb_symcache_open(w->db, w->out_attached, w->warm, lb_wprepare(w, LB_ROW_SYMBOL),
                                lb_wprepare(w, LB_ROW_FUNCTIONS));
    w->warm = NULL; /* the cache's now */
    open_symbolizer(w);
    if (w->defer_names)
        lb_symcache_offline(w->cache);
    return 0;
}

void lb_merge_finish(writer_t *w)
{
    if (!lb_symcache_added_names(w->cache))
        w->empty |= LB_MERGE_EMPTY(LB_MERGE_SYMBOL);
    if (!lb_symcache_added_functions(w->cache))
        w->empty |= LB_MERGE_EMPTY(LB_MERGE_FUNCTIONS);
    w->resolved_names = lb_symcache_resolved(w->cache);
}

void lb_merge_close(writer_t *w)
{
    lb_symcache_close(w->cache);
    w->cache = NULL;
    lb_symbolizer_close(w->sym);
    for (uint32_t i = 0; w->node_maps && i < w->thread_slots; i++)
        lb_scratch_free(w->node_maps[i]);
    for (uint32_t i = 0; w->leaf_maps && i < w->thread_slots; i++)
        lb_scratch_free(w->leaf_maps[i]);
    for (uint32_t i = 0; w->depth_maps && i < w->thread_slots; i++)
        lb_scratch_free(w->depth_maps[i]);
    lb_scratch_free(w->node_maps);
    lb_scratch_free(w->leaf_maps);
    lb_scratch_free(w->depth_maps);
    lb_scratch_free(w->ccts);
    lb_scratch_free(w->node_counts);
    lb_scratch_free(w->waits_s);
    lb_u64map_free(&w->jump_of_pc);
    lb_tailcall_cache_free(&w->tailcall);
    lb_scratch_free(w->far_jumps);
    w->far_jumps = NULL;
    w->nfar = w->far_cap = 0;
    lb_u64map_free(&w->frame_of_pc);
    lb_u64map_free(&w->module_of_base);
    lb_u64map_free(&w->node_of_edge);
}
