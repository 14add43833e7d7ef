/* Per-thread cache of release/wait calling contexts (contract in
 * context.h).
 *
 * Layout: LB_CTX_SETS sets of LB_CTX_WAYS entries, the set chosen by the
 * starting rsp/rbp, round-robin replacement within a set; the entries of
 * the last two hits (or fills) are tried before the set (a loop releasing
 * from one place hits the first every time, with no hashing; a loop that
 * waits in one place and signals in another, a task queue's, alternates
 * between the two); plus the scratch
 * arrays a missing walk fills (kept off the stack: 16 KiB thread stacks):
 * a short one, and a long one a walk that fills the short one walks
 * again into. A thread with few contexts touches only the head, way 0
 * and the short array, which lie on its thread tables' shared page
 * (core/thread_tables.h); a thread without thread tables maps a block of
 * its own (ctx_alone_t).
 * An entry stores the offsets of the slots its walk read, the checksum of
 * their values, and the offset and value of the slot holding the first
 * program return address (the wrapper's call site), which tells apart in
 * one load the different call sites of one function (they share rsp).
 * Entries whose walk read more than LB_CTX_SLOTS slots are not cached.
 *
 * A foreign record (sampler/foreign.h) fills no entry and maps no cache:
 * its thread shares the thread-local pointer with its creator. It only
 * reads the creator's entries, and never hits one: an entry's key is a
 * stack pointer on the creator's stack, a mapping apart from its own.
 *
 * Counters: misses go to a process-wide relaxed atomic (a miss walks
 * anyway); hits are counted per thread and added to the process-wide sum
 * when the thread exits, so a hit writes no shared cache line. */
#include "blame/context.h"

#include <errno.h>
#include <stddef.h>

#include "core/thread_tables.h"

#include "sampler/unwind.h"
#include "util/log.h"
#include "util/pages.h"

/* Debug: on every hit also walk, and abort if the paths differ. */
static const bool lb_context_verify = false;

#define LB_CTX_SETS  4
#define LB_CTX_WAYS  4
#define LB_CTX_SLOTS 64

typedef struct ctx_entry {
    uintptr_t sp, bp;    /* starting registers (key; bp only if uses_bp) */
    bool uses_bp;        /* the walk computed a CFA from the starting rbp */
    uint64_t sum;        /* checksum of the slot values */
    uintptr_t site_val;  /* value of the call-site slot */
    uint32_t site_off;   /* its offset from sp */
    lb_cct_node_t *node; /* the context; NULL = empty entry */
    uint32_t id;         /* its node id */
    uint32_t nslots;
    uint32_t off[LB_CTX_SLOTS];
} ctx_entry_t;

/* Ways 1.. of every set, and the walk's frames when they are more than
 * the short buffer holds: what only a thread with more contexts, or
 * deeper paths, touches. */
typedef struct ctx_cold {
    uintptr_t pcs[LB_MAX_DEPTH];                   /* a long walk's frames */
    ctx_entry_t way[LB_CTX_WAYS - 1][LB_CTX_SETS]; /* ways 1.. */
} ctx_cold_t;

/* What a thread with few contexts touches: the head, and way 0 of every
 * set, the only way of a set ever filled until the set holds a second
 * context (the lookup reads a set's ways below filled[] only); with the
 * short walk buffer, on the page of the thread tables that the site
 * table's front and the CCT's first nodes share (core/thread_tables.h). */
typedef struct ctx_cache {
    const ctx_entry_t *last;        /* the previous hit or fill, tried first; NULL none */
    const ctx_entry_t *before_last; /* the one before it (not last), tried second */
    uint8_t next_way[LB_CTX_SETS];  /* the way of each set the next fill replaces */
    uint8_t filled[LB_CTX_SETS];    /* ways of each set ever filled: the rest are empty */
    uintptr_t *pcs_short;           /* LB_CTX_SHORT frames: a walk's, walked again into */
    ctx_cold_t *cold;               /* cold->pcs when it fills them */
    ctx_entry_t way0[LB_CTX_SETS] __attribute__((aligned(LB_CACHELINE)));
} ctx_cache_t;

#define LB_CTX_SHORT 32

/* The cache of a thread without thread tables: one block of its own. */
typedef struct ctx_alone {
    ctx_cache_t cache;
    uintptr_t pcs_short[LB_CTX_SHORT];
    ctx_cold_t cold;
} ctx_alone_t;

_Static_assert(sizeof(ctx_cache_t) == LB_TT_CTX_BYTES && LB_TT_CTX % LB_CACHELINE == 0 &&
                   LB_CTX_SHORT * sizeof(uintptr_t) == LB_TT_PCS_BYTES &&
                   sizeof(ctx_cold_t) == LB_TT_CTX_COLD_BYTES && LB_TT_CTX_COLD % LB_CACHELINE == 0,
               "the context cache's parts are its parts of the thread tables");

static inline ctx_entry_t *way_at(ctx_cache_t *c, unsigned w, unsigned s)
{
    return w == 0 ? &c->way0[s] : &c->cold->way[w - 1][s];
}

static LB_TLS ctx_cache_t *cache;
static LB_TLS bool cache_failed; /* mmap refused once: do not retry per call */
static LB_TLS bool cache_alone;  /* cache is a ctx_alone_t, freed at the thread's exit */
static LB_TLS bool cold_written; /* a fill wrote cache->cold */
static LB_TLS bool deep_walks;   /* a walk filled the short buffer: walk into the long one */
static LB_TLS uint64_t thread_hits;

static struct {
    uint64_t hits, misses;
} counts LB_FORK_WRITTEN;

void lb_context_counts(uint64_t *hits, uint64_t *misses)
{
    *hits = __atomic_load_n(&counts.hits, __ATOMIC_RELAXED) + thread_hits;
    *misses = __atomic_load_n(&counts.misses, __ATOMIC_RELAXED);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* Checksum of the slots at sp + off[i]: position-dependent, 2 cycles a
 * slot; two slots a loop iteration, walking the offsets by pointer (most
 * walks read 4 to 12 slots). */
static inline uint64_t slots_sum(uintptr_t sp, const uint32_t *off, uint32_t n)
{
    uint64_t h = n;
    const uint32_t *end = off + n;
    for (; end - off >= 2; off += 2) {
        h = rotl(h, 7) ^ *(const uintptr_t *)(sp + off[0]);
        h = rotl(h, 7) ^ *(const uintptr_t *)(sp + off[1]);
    }
    if (off != end)
        h = rotl(h, 7) ^ *(const uintptr_t *)(sp + off[0]);
    return h;
}

static inline unsigned set_of(uintptr_t sp)
{
    uint64_t h = (sp >> 4) * 0x9E3779B97F4A7C15ull;
    return (unsigned)(h >> 62) & (LB_CTX_SETS - 1);
}

static ctx_cache_t *cache_get(const lb_thread_t *self)
{
    if (lb_likely(cache != NULL) || cache_failed)
        return cache;
    if (self->foreign)
        return NULL; /* the thread-local pointer is its creator's */
    ctx_cache_t *c = lb_thread_tables_at(self, LB_TT_CTX);
    if (c) {
        c->pcs_short = lb_thread_tables_at(self, LB_TT_PCS);
        c->cold = lb_thread_tables_at(self, LB_TT_CTX_COLD);
    } else {
        int saved_errno = errno;
        ctx_alone_t *a = lb_pages_alloc_recycled(sizeof *a);
        errno = saved_errno;
        cache_failed = a == NULL;
        if (!a)
            return NULL;
        c = &a->cache;
        c->pcs_short = a->pcs_short;
        c->cold = &a->cold;
        cache_alone = true;
    }
    cache = c;
    return c;
}

void lb_context_thread_exit(lb_thread_t *self)
{
    ctx_cache_t *c = cache;
    cache = NULL;
    __atomic_add_fetch(&counts.hits, thread_hits, __ATOMIC_RELAXED);
    thread_hits = 0;
    if (c && cache_alone)
        lb_pages_free_recycled(c, sizeof(ctx_alone_t));
    else if (c)
        lb_thread_tables_wrote(
            self,
            lb_thread_tables_pages(LB_TT_CTX, LB_TT_CTX_BYTES + LB_TT_PCS_BYTES) |
                (cold_written ? lb_thread_tables_pages(LB_TT_CTX_COLD, LB_TT_CTX_COLD_BYTES) : 0));
    cache_alone = false;
    cold_written = false;
    deep_walks = false;
}

/* e was just hit or filled: it is tried first next time, and the entry
 * tried first until now second. A filled entry may have been one of the
 * two (round-robin replacement): it is then no longer what it was. */
static inline void remember(ctx_cache_t *c, const ctx_entry_t *e)
{
    if (c->last != e) {
        c->before_last = c->last;
        c->last = e;
    }
}

/* A foreign record's context (sampler/foreign.h): its thread shares its
 * creator's thread-local cache, which it must not write, so it walks
 * every time (a miss). */
LB_COLD LB_NOINLINE static lb_cct_node_t *walk_uncached(lb_thread_t *self, const lb_regs_t *r,
                                                        uint32_t *id)
{
    uintptr_t pcs[LB_MAX_DEPTH];
    int saved_errno = errno;
    int n = lb_unwind_from(r, pcs, LB_MAX_DEPTH, NULL);
    lb_cct_node_t *node = lb_cct_insert(self->cct, pcs, n);
    *id = lb_cct_id(self->cct, node);
    errno = saved_errno;
    return node;
}

/* A missing context: walk, insert, and fill an entry of set s. Out of
 * line, so that the hit path saves no registers for it. */
LB_COLD LB_NOINLINE static lb_cct_node_t *fill(lb_thread_t *self, ctx_cache_t *c,
                                               const lb_regs_t *r, unsigned s, uint32_t *id)
{
    if (lb_unlikely(self->foreign))
        return walk_uncached(self, r, id);
    unsigned w = c->next_way[s];
    ctx_entry_t *e = way_at(c, w, s);
    cold_written |= w != 0;
    lb_walk_trace_t trace = { .off = e->off, .max = LB_CTX_SLOTS };
    e->node = NULL;          /* the walk writes e->off: the entry is invalid meanwhile */
    int saved_errno = errno; /* the CCT may map memory */
    /* Into the short buffer first; a walk that fills it may have been
     * cut there and walks again into the long one (a walk is a pure
     * function of the registers and the stack: the same path, longer),
     * as the thread's later walks do at once. */
    uintptr_t *pcs = deep_walks ? c->cold->pcs : c->pcs_short;
    int n = lb_unwind_from(r, pcs, deep_walks ? LB_MAX_DEPTH : LB_CTX_SHORT, &trace);
    if (!deep_walks && n == LB_CTX_SHORT) {
        /* and the thread's later walks go to the long buffer at once */
        deep_walks = true;
        trace = (lb_walk_trace_t){ .off = e->off, .max = LB_CTX_SLOTS };
        pcs = c->cold->pcs;
        cold_written = true;
        n = lb_unwind_from(r, pcs, LB_MAX_DEPTH, &trace);
    }
    lb_cct_node_t *node = lb_cct_insert(self->cct, pcs, n);
    *id = lb_cct_id(self->cct, node);
    errno = saved_errno;
    if (trace.overflow || n == 0)
        return node;
    /* The call-site slot: the return address of the innermost program
     * frame's callee, i.e. the slot whose value is that frame's pc + 1. */
    uint32_t site = 0;
    for (int i = 0; i < trace.n; i++) {
        if (*(const uintptr_t *)(r->sp + e->off[i]) == pcs[0] + 1) {
            site = (uint32_t)i;
            break;
        }
    }
    e->sp = r->sp;
    e->bp = r->bp;
    e->uses_bp = trace.uses_bp;
    e->nslots = (uint32_t)trace.n;
    e->site_off = e->off[site];
    e->site_val = *(const uintptr_t *)(r->sp + e->site_off);
    e->sum = slots_sum(r->sp, e->off, e->nslots);
    e->id = *id;
    e->node = node;
    remember(c, e);
    if (c->filled[s] <= w)
        c->filled[s] = (uint8_t)(w + 1);
    c->next_way[s] = (uint8_t)((w + 1) % LB_CTX_WAYS);
    return node;
}

LB_COLD static void verify_hit(lb_thread_t *self, ctx_cache_t *c, const lb_regs_t *r,
                               const lb_cct_node_t *node)
{
    cold_written = true;
    int n = lb_unwind_from(r, c->cold->pcs, LB_MAX_DEPTH, NULL);
    if (lb_cct_insert(self->cct, c->cold->pcs, n) != node)
        lb_die("context cache: a hit differs from the walk (%d frames)", n);
}

/* Does entry e (maybe empty) hold the context of a walk from r? */
static inline bool entry_matches(const ctx_entry_t *e, const lb_regs_t *r)
{
    return e->node && e->sp == r->sp && (!e->uses_bp || e->bp == r->bp) &&
           *(const uintptr_t *)(r->sp + e->site_off) == e->site_val &&
           slots_sum(r->sp, e->off, e->nslots) == e->sum;
}

static inline lb_cct_node_t *hit(lb_thread_t *self, ctx_cache_t *c, const lb_regs_t *r,
                                 const ctx_entry_t *e, uint32_t *id)
{
    thread_hits++;
    if (lb_context_verify)
        verify_hit(self, c, r, e->node);
    remember(c, e);
    *id = e->id;
    return e->node;
}

LB_NOINLINE lb_cct_node_t *lb_context_here(lb_thread_t *self, uint32_t *id)
{
    lb_regs_t r;
    LB_REGS_HERE(r);
    ctx_cache_t *c = cache_get(self);
    if (lb_unlikely(!c)) {
        if (self->foreign) {
            __atomic_add_fetch(&counts.misses, 1, __ATOMIC_RELAXED);
            return walk_uncached(self, &r, id);
        }
        lb_cct_node_t *root = lb_cct_insert(self->cct, NULL, 0);
        *id = lb_cct_id(self->cct, root);
        return root;
    }
    /* A run of releases from one place (a loop) hits the same entry. */
    if (lb_likely(c->last != NULL) && entry_matches(c->last, &r))
        return hit(self, c, &r, c->last, id);
    if (c->before_last != NULL && entry_matches(c->before_last, &r))
        return hit(self, c, &r, c->before_last, id);
    unsigned s = set_of(r.sp);
    for (unsigned w = 0; w < c->filled[s]; w++) {
        const ctx_entry_t *e = way_at(c, w, s);
        if (e != c->last && e != c->before_last && entry_matches(e, &r))
            return hit(self, c, &r, e, id);
    }
    __atomic_add_fetch(&counts.misses, 1, __ATOMIC_RELAXED);
    return fill(self, c, &r, s, id);
}
