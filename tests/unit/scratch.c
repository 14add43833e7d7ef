/* Unit tests for scratch memory (src/common/scratch.c): before a thread
 * turns it on the functions are libc's; after, the thread's blocks come in
 * order from mappings of their own (no malloc chunk between them), zeroed
 * and aligned, a realloc copies, a free keeps the block, a malloc'd block
 * is still freed by libc, another thread cannot turn it on and frees its
 * blocks without harm, and a u64 map and a row log (the exit write's
 * users) work on it.
 *
 * Each test runs in a process of its own (tests/check.h). */
#include "check.h"

#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "common/rowlog.h"
#include "common/scratch.h"
#include "common/u64map.h"

/* malloc's, by glibc's own account: a block of at least that many bytes. */
static bool from_malloc(void *p, size_t bytes)
{
    return malloc_usable_size(p) >= bytes;
}

/* The chunks' mapper: counts its calls and the bytes asked for, and
 * keeps the chunks' ranges. */
static unsigned maps;
static size_t mapped_bytes;
static char *last_chunk;
static struct {
    char *base;
    size_t size;
} mapped[64];

static void *test_map(size_t bytes)
{
    char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    mapped[maps].base = p;
    mapped[maps].size = bytes;
    maps++;
    mapped_bytes += bytes;
    last_chunk = p;
    return p;
}

static bool in_chunks(const void *p)
{
    for (unsigned i = 0; i < maps; i++)
        if ((const char *)p >= mapped[i].base && (const char *)p < mapped[i].base + mapped[i].size)
            return true;
    return false;
}

static void test_off_is_libc(void)
{
    char *p = lb_scratch_malloc(100);
    ASSERT_NOT_NULL(p);
    ASSERT_TRUE(from_malloc(p, 100));
    p = lb_scratch_realloc(p, 5000);
    ASSERT_TRUE(from_malloc(p, 5000));
    lb_scratch_free(p); /* libc's free: a double free would abort */
    int *z = lb_scratch_calloc(64, sizeof *z);
    ASSERT_TRUE(from_malloc(z, 64 * sizeof *z));
    for (int i = 0; i < 64; i++)
        ASSERT_EQ(z[i], 0);
    lb_scratch_free(z);
}

static void *other_thread(void *arg)
{
    char **shared = arg;
    bool *result = (bool *)&shared[2];
    result[0] = lb_scratch_on(test_map); /* the main thread has it */
    char *mine = lb_scratch_malloc(32);
    result[1] = mine && from_malloc(mine, 32);
    free(mine);
    lb_scratch_free(shared[0]);                    /* the main thread's block: kept */
    char *copy = lb_scratch_realloc(shared[1], 8); /* copied into malloc's memory */
    result[2] = copy && from_malloc(copy, 8) && memcmp(copy, "scratch", 8) == 0;
    free(copy);
    return NULL;
}

static void test_on_allocates_in_order(void)
{
    char *before = malloc(48); /* malloc'd before the switch */
    ASSERT_TRUE(lb_scratch_on(test_map));
    ASSERT_TRUE(lb_scratch_on(test_map)); /* again on the same thread */
    ASSERT_EQ(maps, 0);                   /* a chunk is mapped at the first allocation */

    char *a = lb_scratch_malloc(40);
    ASSERT_EQ(maps, 1);
    ASSERT_UEQ((uintptr_t)a, (uintptr_t)last_chunk + 16);
    char *b = lb_scratch_calloc(3, 100);
    char *c = lb_scratch_malloc(1);
    ASSERT_NOT_NULL(a);
    ASSERT_NOT_NULL(b);
    ASSERT_NOT_NULL(c);
    /* one after another, each behind a 16-byte header, sizes rounded to 16 */
    ASSERT_UEQ((uintptr_t)b, (uintptr_t)a + 48 + 16);
    ASSERT_UEQ((uintptr_t)c, (uintptr_t)b + 304 + 16);
    ASSERT_UEQ((uintptr_t)a % 16, 0);
    for (int i = 0; i < 300; i++)
        ASSERT_EQ(b[i], 0);

    memcpy(a, "0123456789abcdefghijklmnopqrstuvwxyz0123", 40);
    lb_scratch_free(a); /* kept: its bytes stay */
    ASSERT_EQ(memcmp(a, "0123456789", 10), 0);
    char *grown = lb_scratch_realloc(a, 4000);
    ASSERT_NOT_NULL(grown);
    ASSERT_TRUE(grown != a);
    ASSERT_EQ(memcmp(grown, a, 40), 0);
    char *shrunk = lb_scratch_realloc(grown, 8);
    ASSERT_EQ(memcmp(shrunk, "01234567", 8), 0);

    /* a block malloc'd before: still libc's to realloc and free */
    before = lb_scratch_realloc(before, 64);
    ASSERT_TRUE(from_malloc(before, 64));
    lb_scratch_free(before);

    /* larger than a chunk: a mapping of its own, zeroed */
    size_t big = (size_t)3 << 20;
    unsigned char *huge = lb_scratch_malloc(big);
    ASSERT_NOT_NULL(huge);
    ASSERT_EQ(maps, 2);
    ASSERT_UEQ((uintptr_t)huge, (uintptr_t)last_chunk + 16);
    ASSERT_GE(mapped_bytes, big + ((size_t)2 << 20));
    ASSERT_EQ(huge[0], 0);
    ASSERT_EQ(huge[big - 1], 0);
    huge[big - 1] = 1;
    char *after = lb_scratch_malloc(16);
    ASSERT_NOT_NULL(after);
    ASSERT_EQ(maps, 2); /* the big block's chunk had room left */

    char *shared[3] = { b, shrunk, NULL };
    memcpy(shrunk, "scratch", 8);
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, other_thread, shared), 0);
    ASSERT_EQ(pthread_join(t, NULL), 0);
    const bool *result = (const bool *)&shared[2];
    ASSERT_FALSE(result[0]);
    ASSERT_TRUE(result[1]);
    ASSERT_TRUE(result[2]);
    ASSERT_EQ(b[0], 0); /* the other thread's free kept it */
}

/* The last block grows in place, no other; what follows a grown block is
 * still zero; past LB_SCRATCH_MAX the allocations are malloc's. */
static void test_growth_and_cap(void)
{
    ASSERT_TRUE(lb_scratch_on(test_map)); /* each test runs in a process of its own */
    char *x = lb_scratch_malloc(100);
    ASSERT_TRUE(in_chunks(x));
    memset(x, 'x', 100);
    ASSERT_PTR_EQ(lb_scratch_realloc(x, 5000), x); /* the last block: in place */
    ASSERT_EQ(x[99], 'x');
    char *y = lb_scratch_calloc(1, 64);
    ASSERT_UEQ((uintptr_t)y, (uintptr_t)x + 5008 + 16); /* after the grown block */
    for (int i = 0; i < 64; i++)
        ASSERT_EQ(y[i], 0);
    char *moved = lb_scratch_realloc(x, 10000); /* no longer the last: copied */
    ASSERT_TRUE(moved != x);
    ASSERT_EQ(moved[0], 'x');
    ASSERT_EQ(moved[99], 'x');
    char *shrunk = lb_scratch_realloc(moved, 10); /* never shrinks in place */
    ASSERT_TRUE(shrunk != moved);
    ASSERT_EQ(shrunk[9], 'x');
    ASSERT_TRUE(in_chunks(shrunk));

    /* fill up to the cap: then malloc's */
    size_t big = (size_t)10 << 20;
    void *last = NULL;
    for (int i = 0; i < 8; i++)
        last = lb_scratch_malloc(big);
    ASSERT_NOT_NULL(last);
    ASSERT_FALSE(in_chunks(last));
    ASSERT_LE(mapped_bytes, LB_SCRATCH_MAX);
    lb_scratch_free(last); /* libc's free */
}

/* Blocks in more chunks than the table keeps beside the state (the far
 * entries): each is scratch memory to free and realloc (a free that took
 * one for malloc's would crash), its contents kept. */
static void test_many_chunks(void)
{
    ASSERT_TRUE(lb_scratch_on(test_map));
    char *blocks[8];
    size_t size = LB_SCRATCH_CHUNK * 3 / 4; /* one a chunk */
    for (int i = 0; i < 8; i++) {
        blocks[i] = lb_scratch_malloc(size);
        ASSERT_TRUE(in_chunks(blocks[i]));
        memset(blocks[i], 'a' + i, 64);
    }
    ASSERT_GE(maps, 8u);
    lb_scratch_free(blocks[6]); /* a far chunk's block: scratch's free, not libc's */
    char *grown = lb_scratch_realloc(blocks[7], size + 4096);
    ASSERT_NOT_NULL(grown);
    ASSERT_EQ(grown[63], 'h');
    ASSERT_EQ(blocks[0][0], 'a');
}

/* The exit write's users: a map that grows several times and a row log. */
static void test_users_on_scratch(void)
{
    ASSERT_TRUE(lb_scratch_on(test_map));
    lb_u64map_t map;
    ASSERT_EQ(lb_u64map_init(&map, 4), 0);
    for (uint32_t i = 0; i < 5000; i++)
        ASSERT_EQ(lb_u64map_put(&map, (uint64_t)i * 7919u, i), 0);
    for (uint32_t i = 0; i < 5000; i++) {
        uint32_t v;
        ASSERT_TRUE(lb_u64map_get(&map, (uint64_t)i * 7919u, &v));
        ASSERT_EQ(v, i);
    }
    ASSERT_TRUE(in_chunks(map.keys));
    lb_u64map_free(&map);

    lb_rowlog_t log = { 0 };
    lb_rowlog_reset(&log, true);
    lb_rowlog_t values = { 0 };
    for (int i = 0; i < 20000; i++) {
        lb_rowlog_reset(&values, false);
        lb_rowlog_int(&values, 1, i);
        lb_rowlog_add(&log, LB_ROW_FRAME, &values);
    }
    ASSERT_FALSE(lb_rowlog_failed(&log));
    ASSERT_GT(log.len, 20000);
    ASSERT_TRUE(in_chunks(log.bytes));
    lb_rowlog_free(&values);
    lb_rowlog_free(&log);
}

CHECK_MAIN(test_off_is_libc, test_on_allocates_in_order, test_growth_and_cap, test_users_on_scratch,
           test_many_chunks)
