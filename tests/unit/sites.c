/* Unit tests for the per-thread call-site table (src/blame/sites.c,
 * src/blame/sites.h): key encoding, the one-probe fast path, linear
 * probing on collisions, overflow counting when full, and compaction at
 * thread exit. Expected placements are computed from the table's own
 * home-slot rule, so the test knows which keys collide.
 */
#include "check.h"

#include <sys/mman.h>

#include "blame/sites.h"
#include "core/thread_tables.h"
#include "util/pages.h"

/* A thread record with a fresh table, as blame_init makes one. */
static lb_thread_t *new_table(void)
{
    lb_thread_t *t = lb_arena_alloc(sizeof *t);
    ASSERT_NOT_NULL(t);
    t->sites = lb_pages_alloc(sizeof *t->sites);
    ASSERT_NOT_NULL(t->sites);
    return t;
}

/* The home slots, as lb_site_probe computes them: in the front, where a
 * key goes while a front slot is free, and in the back. */
static size_t home_of(uintptr_t key)
{
    return LB_SITE_BACK + (lb_site_hash(key) & (LB_SITE_FRONT - 1));
}
static size_t back_home_of(uintptr_t key)
{
    return lb_site_hash(key) & (LB_SITE_BACK - 1);
}

static void test_key_round_trip(void)
{
    const uintptr_t ras[] = { 0x401234, 0x7fffdeadbeef, 0x1 };
    for (size_t i = 0; i < sizeof ras / sizeof ras[0]; i++) {
        for (int k = 0; k < LB_OBJ_KINDS; k++) {
            uintptr_t key = lb_site_key(ras[i], (lb_obj_kind)k);
            ASSERT_NE(key, 0);
            ASSERT_UEQ(lb_site_ra(key), ras[i]);
            ASSERT_EQ(lb_site_kind(key), k);
        }
    }
    /* The same return address under two kinds is two sites. */
    ASSERT_NE(lb_site_key(0x401234, LB_OBJ_MUTEX), lb_site_key(0x401234, LB_OBJ_SPIN));
}

static void test_lookup_claims_then_probe_hits(void)
{
    lb_thread_t *t = new_table();
    uintptr_t key = lb_site_key(0x401000, LB_OBJ_MUTEX);
    ASSERT_NULL(lb_site_probe(t, key));
    lb_site_t *s = lb_site_lookup(t, key);
    ASSERT_NOT_NULL(s);
    ASSERT_PTR_EQ(s, &t->sites->slot[home_of(key)]);
    ASSERT_PTR_EQ(lb_site_probe(t, key), s);
    for (int i = 0; i < 5; i++)
        lb_site_count_release(t, 0x401000, LB_OBJ_MUTEX);
    ASSERT_EQ(s->releases, 5);
    ASSERT_EQ(t->site_overflow, 0);
}

/* Keys that share a front home slot go to the following front slots;
 * the probe finds only the one at home, the lookup finds each. */
static void test_collisions_probe_linearly(void)
{
    lb_thread_t *t = new_table();
    uintptr_t base = lb_site_key(0x500000, LB_OBJ_COND);
    size_t home = home_of(base);
    uintptr_t keys[4];
    int n = 0;
    for (uintptr_t ra = 0x500000; n < 4; ra += 8) {
        uintptr_t key = lb_site_key(ra, LB_OBJ_COND);
        if (home_of(key) == home)
            keys[n++] = key;
    }
    for (int i = 0; i < 4; i++) {
        lb_site_t *s = lb_site_lookup(t, keys[i]);
        ASSERT_PTR_EQ(s,
                      &t->sites->slot[LB_SITE_BACK + ((home + (size_t)i) & (LB_SITE_FRONT - 1))]);
        s->acquisitions = (uint32_t)(i + 1);
    }
    ASSERT_NOT_NULL(lb_site_probe(t, keys[0]));
    ASSERT_NULL(lb_site_probe(t, keys[1]));
    for (int i = 0; i < 4; i++)
        ASSERT_EQ(lb_site_lookup(t, keys[i])->acquisitions, i + 1);
}

/* Once the front is full, keys go to the back from their home there; more
 * keys on one back home slot than the probe limit: the rest are counted,
 * never silently dropped. */
static void test_full_neighbourhood_counts_overflow(void)
{
    lb_thread_t *t = new_table();
    size_t home = back_home_of(lb_site_key(0x600000, LB_OBJ_SEM));
    int found = 0, missed = 0, in_back = 0;
    for (uintptr_t ra = 0x600000; found + missed < 40; ra += 8) {
        uintptr_t key = lb_site_key(ra, LB_OBJ_SEM);
        if (back_home_of(key) != home)
            continue;
        lb_site_t *s = lb_site_lookup(t, key);
        if (s) {
            found++;
            in_back += s < &t->sites->slot[LB_SITE_BACK];
            ASSERT_PTR_EQ(lb_site_lookup(t, key), s);
        } else {
            missed++;
        }
    }
    ASSERT_EQ(found, LB_SITE_FRONT + 16); /* the front, then the back's 16 probes */
    ASSERT_EQ(in_back, 16);
    ASSERT_GT(missed, 0);
    ASSERT_EQ(t->site_overflow, missed);
}

/* A key away from its home slot (another key there first): the probe
 * through the one-entry cache misses it, lb_site_lookup_last finds it and
 * fills the cache, so the next call hits the cache, and its counts land
 * in the one slot. */
static void test_lookup_last_caches_a_key_away_from_home(void)
{
    lb_thread_t *t = new_table();
    uintptr_t first = lb_site_key(0x540000, LB_OBJ_MUTEX);
    uintptr_t away = 0;
    for (uintptr_t ra = 0x540008; !away; ra += 8) {
        uintptr_t key = lb_site_key(ra, LB_OBJ_MUTEX);
        if (home_of(key) == home_of(first))
            away = key;
    }
    ASSERT_NOT_NULL(lb_site_lookup(t, first)); /* takes the home slot */
    uintptr_t last_key = 0;
    lb_site_t *last = NULL;
    ASSERT_NULL(lb_site_probe_last(t, away, &last_key, &last));
    lb_site_t *s = lb_site_lookup_last(t, away, &last_key, &last);
    ASSERT_NOT_NULL(s);
    ASSERT_TRUE(s != &t->sites->slot[home_of(away)]);
    ASSERT_UEQ(last_key, away);
    ASSERT_PTR_EQ(last, s);
    ASSERT_PTR_EQ(lb_site_probe_last(t, away, &last_key, &last), s);
    for (int i = 0; i < 3; i++)
        lb_site_lookup_last(t, away, &last_key, &last)->releases++;
    ASSERT_PTR_EQ(lb_site_lookup(t, away), s);
    ASSERT_EQ(s->releases, 3);
    ASSERT_EQ(t->sites->slot[home_of(away)].releases, 0);
}

static void test_compact_keeps_used_slots(void)
{
    lb_thread_t *t = new_table();
    uint32_t count = 99;
    ASSERT_NULL(lb_sites_compact(t, &count));
    ASSERT_EQ(count, 0);
    uint64_t expect_releases = 0;
    for (uintptr_t i = 0; i < 100; i++) {
        lb_site_t *s = lb_site_lookup(t, lb_site_key(0x700000 + 16 * i, LB_OBJ_RWLOCK));
        ASSERT_NOT_NULL(s);
        s->releases = i + 1;
        s->contended = (uint32_t)i;
        expect_releases += i + 1;
    }
    lb_site_t *kept = lb_sites_compact(t, &count);
    ASSERT_NOT_NULL(kept);
    ASSERT_EQ(count, 100);
    uint64_t releases = 0;
    for (uint32_t i = 0; i < count; i++) {
        ASSERT_EQ(lb_site_kind(kept[i].key), LB_OBJ_RWLOCK);
        uintptr_t index = (lb_site_ra(kept[i].key) - 0x700000) / 16;
        ASSERT_EQ(kept[i].releases, index + 1);
        ASSERT_EQ(kept[i].contended, index);
        releases += kept[i].releases;
    }
    ASSERT_EQ(releases, expect_releases);
}

/* Which of a table's pages are resident (at most 8). */
static void resident_pages(const lb_site_table_t *table, unsigned char resident[8])
{
    size_t page = 4096, pages = (sizeof *table + page - 1) / page;
    ASSERT_TRUE(pages <= 8);
    ASSERT_EQ(mincore((void *)table, pages * page, resident), 0);
}

/* Compaction reads only the pages where slots were claimed: the table's
 * other pages stay unmapped (on a fresh table each read would fault in a
 * page, a page fault a thread). The claim's record of its page is kept
 * in the thread record, so the table's first page is not written either. */
static void test_compact_reads_only_claimed_pages(void)
{
    lb_thread_t *t = new_table();
    uintptr_t key = lb_site_key(0x700000 + 16 * 7, LB_OBJ_MUTEX);
    ASSERT_NOT_NULL(lb_site_lookup(t, key));
    uint32_t count = 0;
    lb_site_t *kept = lb_sites_compact(t, &count);
    ASSERT_NOT_NULL(kept);
    ASSERT_EQ(count, 1);
    ASSERT_UEQ(kept[0].key, key);
    size_t page = 4096, pages = (sizeof *t->sites + page - 1) / page;
    unsigned char resident[8] = { 0 };
    resident_pages(t->sites, resident);
    uintptr_t slot_page = ((uintptr_t)&t->sites->slot[home_of(key)] - (uintptr_t)t->sites) / page;
    ASSERT_UEQ(slot_page, pages - 1); /* the front: the table's last page */
    for (size_t i = 0; i < pages; i++)
        ASSERT_EQ(resident[i] & 1, i == slot_page);
}

/* A table with no claim is never read: lb_site_in_use (a fork child's
 * reset, the final write) and compaction leave all its pages unmapped. */
static void test_unused_table_is_never_read(void)
{
    lb_thread_t *t = new_table();
    for (uint32_t i = 0; i < LB_SITE_SLOTS; i++)
        ASSERT_FALSE(lb_site_in_use(t, i));
    uint32_t count = 99;
    ASSERT_NULL(lb_sites_compact(t, &count));
    ASSERT_EQ(count, 0);
    unsigned char resident[8] = { 0 };
    resident_pages(t->sites, resident);
    for (size_t i = 0; i < (sizeof *t->sites + 4095) / 4096; i++)
        ASSERT_EQ(resident[i] & 1, 0);
}

/* A slot that crosses a page boundary (24-byte slots: back slots 170 and
 * 341): a thread that counted there gives its tables back, and the next
 * thread, handed the same block with only its written pages zeroed,
 * finds the slot's counts zero (the page the slot crosses into was
 * marked too). */
static lb_thread_t *with_thread_tables(void)
{
    lb_thread_t *t = lb_arena_alloc(sizeof *t);
    ASSERT_NOT_NULL(t);
    t->tables = lb_pages_alloc_recycled(LB_TT_BYTES);
    ASSERT_NOT_NULL(t->tables);
    t->sites = lb_thread_tables_take(t, LB_TT_PART_SITES, LB_TT_SITES);
    return t;
}

static uintptr_t key_with_back_home(size_t slot)
{
    for (uintptr_t ra = 0x400001;; ra++) {
        uintptr_t k = lb_site_key(ra, LB_OBJ_MUTEX);
        if ((lb_site_hash(k) & (LB_SITE_BACK - 1)) == slot)
            return k;
    }
}

static void recycled_slot_starts_at_zero(size_t slot)
{
    lb_thread_t *a = with_thread_tables();
    void *block = a->tables;
    for (uintptr_t i = 0; i < LB_SITE_FRONT; i++) /* the front full: the key goes to the back */
        ASSERT_NOT_NULL(lb_site_lookup(a, lb_site_key(0x500000 + 16 * i, LB_OBJ_MUTEX)));
    uintptr_t k = key_with_back_home(slot);
    lb_site_t *s = lb_site_lookup(a, k);
    ASSERT_PTR_EQ(s, &a->sites->slot[slot]);
    s->releases = 1111;
    s->acquisitions = 2222;
    s->contended = 3333;
    /* given back as blame_compact gives it */
    lb_thread_tables_wrote(a, a->site_pages << (LB_TT_SITES / LB_TT_PAGE));
    lb_thread_tables_release(a, LB_TT_PART_SITES);
    lb_thread_t *b = with_thread_tables();
    ASSERT_PTR_EQ(b->tables, block);
    for (uintptr_t i = 0; i < LB_SITE_FRONT; i++)
        ASSERT_NOT_NULL(lb_site_lookup(b, lb_site_key(0x700000 + 16 * i, LB_OBJ_MUTEX)));
    lb_site_t *again = lb_site_lookup(b, k);
    ASSERT_PTR_EQ(again, &b->sites->slot[slot]);
    ASSERT_EQ(again->releases, 0);
    ASSERT_EQ(again->acquisitions, 0);
    ASSERT_EQ(again->contended, 0);
    lb_thread_tables_release(b, LB_TT_PART_SITES);
}

static void test_recycled_slots_start_at_zero(void)
{
    ASSERT_TRUE((170 * sizeof(lb_site_t)) / LB_SITE_PAGE !=
                (171 * sizeof(lb_site_t) - 1) / LB_SITE_PAGE);
    recycled_slot_starts_at_zero(100);
    recycled_slot_starts_at_zero(170); /* crosses from page 0 into page 1 */
    recycled_slot_starts_at_zero(341); /* from page 1 into page 2 */
}

CHECK_MAIN(test_key_round_trip, test_lookup_claims_then_probe_hits, test_collisions_probe_linearly,
           test_lookup_last_caches_a_key_away_from_home, test_full_neighbourhood_counts_overflow,
           test_compact_keeps_used_slots, test_compact_reads_only_claimed_pages,
           test_unused_table_is_never_read, test_recycled_slots_start_at_zero)
