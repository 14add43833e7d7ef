/* Frame rules handed from fork children to their later siblings (contract
 * and invariants in rule_share.h).
 *
 * The region: a header (the creator's pid, the loader's counts when it was
 * mapped, the entries claimed so far), the creator's modules sorted by
 * start address, then LB_SHARE_ENTRIES entries of two words. A child
 * touches the header's page at its first append (a shared page is mapped
 * in a fork child at its first touch) and the pages of the entries it
 * writes; a child that computes no new rule touches nothing. The parent
 * reads the entries appended since its last import, at most once each.
 *
 * Process-local state (`share`): own, the region this process appends to
 * (its parent's, inherited at the fork, until it forks itself; then the one
 * it maps for its children, to which it appends too, and imports from);
 * stopped, set by an append that met a module the region does not list,
 * cleared only with a fresh region, so that a fork child inherits it clear;
 * appending, the appends under way, so that a replaced region is unmapped
 * only when none can still be writing it. A fork child writes `share` only
 * where a fork cut another thread's append, and a forking parent only when
 * it imports new entries or maps a region: its page is not faulted on at
 * every fork. fork_prepare runs under glibc's atfork lock, one thread at a
 * time. */
#include "sampler/rule_share.h"

#include <link.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/switches.h"
#include "util/common.h"
#include "util/env.h"
#include "util/raw_mmap.h"

#define LB_SHARE_ENTRIES     4096u /* per region; then a fresh one */
#define LB_SHARE_MODULES_MAX 1024u /* modules listed at most */
#define LB_SHARE_PC_BITS     48    /* user-space pcs on x86-64 */

typedef struct share_module {
    uintptr_t start, end; /* _dl_find_object's dlfo_map_start, dlfo_map_end */
    const void *link_map; /* dlfo_link_map */
    const void *eh_frame; /* dlfo_eh_frame */
} share_module_t;

typedef struct share_entry {
    uint64_t word; /* the rule cache's word */
    uint64_t key;  /* pc | hash << LB_SHARE_PC_BITS, hash nonzero; 0: not (yet) valid */
} share_entry_t;

typedef struct share_region {
    size_t size;                   /* bytes mapped */
    pid_t owner;                   /* the process that mapped it */
    unsigned long long adds, subs; /* its loader's counts then */
    uint32_t n_modules;
    share_entry_t *entries;                                  /* in the region, after the modules */
    uint64_t claimed __attribute__((aligned(LB_CACHELINE))); /* entries claimed; may pass the end */
    share_module_t modules[];                                /* sorted by start */
} share_region_t;

static struct {
    share_region_t *own;     /* appended to if the parent mapped it, else imported from */
    uint64_t imported;       /* own's entries already read, where this process mapped it */
    share_region_t *retired; /* replaced while an append may have been using it */
    int appending;           /* appends under way in this process */
    bool stopped;            /* a module the region does not list was met: no more appends */
    bool off;                /* LOCKBLAME_SHARE_RULES=0 */
} share LB_FORK_WRITTEN;     /* a fork child's appends write it (util/common.h) */

void lb_rule_share_setup(void)
{
    share.off = lb_switch_off(lb_getenv("LOCKBLAME_SHARE_RULES"));
}

static uint64_t key_hash(uintptr_t pc, uint64_t word)
{
    uint64_t h = (pc ^ (word * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
    return (h >> LB_SHARE_PC_BITS) | 1u; /* 16 bits, nonzero */
}

/* The listed module with the highest start at or below addr, or NULL. */
static const share_module_t *module_at(const share_region_t *r, uintptr_t addr)
{
    uint32_t lo = 0, hi = r->n_modules; /* modules[lo-1].start <= addr */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (r->modules[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? &r->modules[lo - 1] : NULL;
}

/* The object dlfo describes is a listed module. */
static bool module_listed(const share_region_t *r, const struct dl_find_object *dlfo)
{
    const share_module_t *m = module_at(r, (uintptr_t)dlfo->dlfo_map_start);
    return m && m->start == (uintptr_t)dlfo->dlfo_map_start &&
           m->end == (uintptr_t)dlfo->dlfo_map_end && m->link_map == dlfo->dlfo_link_map &&
           m->eh_frame == dlfo->dlfo_eh_frame;
}

static void append(share_region_t *r, uintptr_t pc, uint64_t word,
                   const struct dl_find_object *dlfo)
{
    if (!module_listed(r, dlfo)) {
        __atomic_store_n(&share.stopped, true, __ATOMIC_RELAXED);
        return;
    }
    uint64_t i = __atomic_fetch_add(&r->claimed, 1, __ATOMIC_RELAXED);
    if (i >= LB_SHARE_ENTRIES)
        return;
    share_entry_t *e = &r->entries[i];
    __atomic_store_n(&e->word, word, __ATOMIC_RELAXED);
    __atomic_store_n(&e->key, (uint64_t)pc | key_hash(pc, word) << LB_SHARE_PC_BITS,
                     __ATOMIC_RELEASE);
}

/* `appending` and `own` (here, and in fork_prepare the other way round) in
 * sequentially consistent order: either fork_prepare sees this append
 * under way and leaves the region it replaces mapped, or the append sees
 * the new region. */
void lb_rule_share_offer(uintptr_t pc, uint64_t word, const struct dl_find_object *dlfo)
{
    if (!__atomic_load_n(&share.own, __ATOMIC_RELAXED) ||
        __atomic_load_n(&share.stopped, __ATOMIC_RELAXED) || (pc >> LB_SHARE_PC_BITS))
        return;
    __atomic_add_fetch(&share.appending, 1, __ATOMIC_SEQ_CST);
    share_region_t *r = __atomic_load_n(&share.own, __ATOMIC_SEQ_CST);
    if (r)
        append(r, pc, word, dlfo);
    __atomic_sub_fetch(&share.appending, 1, __ATOMIC_SEQ_CST);
}

void lb_rule_share_fork_child(void)
{
    if (share.appending) /* another thread's, cut by the fork */
        share.appending = 0;
}

/* --- the parent's side: mapping the region, importing ----------------------- */

typedef struct module_walk {
    share_module_t *out; /* NULL: count only */
    uint32_t n, max;
    unsigned long long adds, subs;
} module_walk_t;

static int first_counts(struct dl_phdr_info *info, size_t size, void *arg)
{
    module_walk_t *w = arg;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        w->adds = info->dlpi_adds;
        w->subs = info->dlpi_subs;
    }
    return 1; /* the first object says it */
}

static int list_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    module_walk_t *w = arg;
    if (w->n == 0)
        (void)first_counts(info, size, arg);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        struct dl_find_object dlfo;
        if (_dl_find_object((void *)(info->dlpi_addr + ph->p_vaddr), &dlfo) != 0)
            break;
        if (w->out && w->n < w->max)
            w->out[w->n] =
                (share_module_t){ (uintptr_t)dlfo.dlfo_map_start, (uintptr_t)dlfo.dlfo_map_end,
                                  dlfo.dlfo_link_map, dlfo.dlfo_eh_frame };
        w->n++;
        break;
    }
    return 0;
}

static void loader_counts(unsigned long long *adds, unsigned long long *subs)
{
    module_walk_t w = { .adds = ~0ull, .subs = ~0ull };
    dl_iterate_phdr(first_counts, &w);
    *adds = w.adds;
    *subs = w.subs;
}

static void region_unmap(share_region_t *r)
{
    if (r)
        lb_munmap(r, r->size);
}

/* Insertion sort by start (no allocation; the loader lists its objects
 * mostly in address order already). */
static void sort_by_start(share_module_t *m, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) {
        share_module_t x = m[i];
        uint32_t j = i;
        for (; j > 0 && m[j - 1].start > x.start; j--)
            m[j] = m[j - 1];
        m[j] = x;
    }
}

/* A fresh region listing this process's modules; NULL if it cannot be
 * mapped (then nothing is shared). */
static share_region_t *region_map(void)
{
    module_walk_t w = { 0 };
    dl_iterate_phdr(list_module, &w);
    if (w.n == 0 || w.n > LB_SHARE_MODULES_MAX)
        return NULL;
    size_t head = sizeof(share_region_t) + (size_t)(w.n + 8) * sizeof(share_module_t);
    head = (head + 15) & ~(size_t)15;
    size_t size = head + LB_SHARE_ENTRIES * sizeof(share_entry_t);
    void *m = lb_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    share_region_t *r = m;
    r->size = size;
    r->owner = getpid();
    r->entries = (share_entry_t *)((char *)m + head);
    w.out = r->modules;
    w.max = w.n + 8; /* the loader may have added one meanwhile */
    w.n = 0;
    dl_iterate_phdr(list_module, &w);
    if (w.n > w.max) {
        region_unmap(r);
        return NULL;
    }
    r->n_modules = w.n;
    r->adds = w.adds;
    r->subs = w.subs;
    sort_by_start(r->modules, r->n_modules);
    return r;
}

/* The entries claimed so far, at most the region's. */
static uint64_t claimed_entries(share_region_t *r)
{
    uint64_t claimed = __atomic_load_n(&r->claimed, __ATOMIC_ACQUIRE);
    return claimed < LB_SHARE_ENTRIES ? claimed : LB_SHARE_ENTRIES;
}

static void import(share_region_t *r, uint64_t claimed, void (*take)(uintptr_t pc, uint64_t word))
{
    const share_module_t *m;
    for (uint64_t i = share.imported; i < claimed; i++) {
        const share_entry_t *e = &r->entries[i];
        uint64_t key = __atomic_load_n(&e->key, __ATOMIC_ACQUIRE);
        if (!key)
            continue; /* being written, or its writer died: skipped for good */
        uint64_t word = __atomic_load_n(&e->word, __ATOMIC_RELAXED);
        uintptr_t pc = (uintptr_t)(key & (((uint64_t)1 << LB_SHARE_PC_BITS) - 1));
        if (key >> LB_SHARE_PC_BITS == key_hash(pc, word) && (m = module_at(r, pc)) && pc < m->end)
            take(pc, word);
    }
    share.imported = claimed;
}

/* The region this process appends to (its parent's, or a stale or full
 * one of its own) replaced by a fresh one. The old one is unmapped once no
 * append of this process can be using it (children holding it keep their
 * mapping); one is kept mapped for a later fork while an append is under
 * way, and any other then stays mapped for good. */
static void replace_own(void)
{
    if (share.retired && __atomic_load_n(&share.appending, __ATOMIC_SEQ_CST) == 0) {
        region_unmap(share.retired);
        share.retired = NULL;
    }
    share_region_t *old = __atomic_exchange_n(&share.own, region_map(), __ATOMIC_SEQ_CST);
    share.imported = 0;
    __atomic_store_n(&share.stopped, false, __ATOMIC_RELAXED);
    if (old && __atomic_load_n(&share.appending, __ATOMIC_SEQ_CST) == 0)
        region_unmap(old);
    else if (old && !share.retired)
        share.retired = old;
}

/* Nothing new in the region: nothing is read or written (not even the
 * loader's counts, whose dl_iterate_phdr writes the loader's lock, a page
 * the parent would fault on again after every fork). New entries are
 * imported only while the loader has loaded and unloaded nothing since the
 * region was mapped; else they are dropped with the region. */
void lb_rule_share_fork_prepare(void (*take)(uintptr_t pc, uint64_t word))
{
    if (share.off)
        return;
    share_region_t *r = share.own && share.own->owner == getpid() ? share.own : NULL;
    uint64_t claimed = r ? claimed_entries(r) : 0;
    if (r && claimed != share.imported) {
        unsigned long long adds, subs;
        loader_counts(&adds, &subs);
        if (adds == r->adds && subs == r->subs)
            import(r, claimed, take);
        else
            r = NULL;
    }
    if (r &&
        (share.imported >= LB_SHARE_ENTRIES || __atomic_load_n(&share.stopped, __ATOMIC_RELAXED)))
        r = NULL; /* full, or this process met a module it does not list */
    if (!r)
        replace_own();
}
