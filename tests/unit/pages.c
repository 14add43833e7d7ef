/* Unit tests for per-thread tables (src/util/pages.c): blocks are carved
 * one after another from a slab, zeroed; a freed block is handed out
 * again, zeroed; a fork child does not reuse its parent's free blocks
 * (zeroing one would copy its pages from the parent); a block too large
 * for the slabs is a mapping of its own, unmapped when freed; a block
 * freed with the pages its owner wrote is zeroed on those pages only; and
 * the blocks stay usable for the tables' real sizes. Two tables reserved
 * apart from one point meet mid-way through a 2 MiB block, each writable
 * to its end (the lower one once opened) and inaccessible past it, and
 * none is made under a limit on the address space. An arena block, and
 * a page given to lb_pages_write_first, is mapped for writing before its
 * owner's first read: reading then writing it costs no page fault. */
#include "check.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/pages.h"

#define TABLE 10000u /* two pages and a bit: a block of 4 pages (3 and the spacer) */
#define BLOCK 16384u

static bool all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

static bool mapped(const void *p)
{
    unsigned char vec;
    return mincore((void *)((uintptr_t)p & ~(uintptr_t)4095), 4096, &vec) == 0;
}

static void test_carved_in_order_and_recycled(void)
{
    unsigned char *a = lb_pages_alloc_recycled(TABLE);
    unsigned char *b = lb_pages_alloc_recycled(TABLE);
    ASSERT_NOT_NULL(a);
    ASSERT_NOT_NULL(b);
    ASSERT_UEQ((uintptr_t)b, (uintptr_t)a + BLOCK); /* one after another, one slab */
    ASSERT_TRUE(all_zero(a, TABLE));
    ASSERT_TRUE(all_zero(b, TABLE));
    memset(a, 0x5a, TABLE);
    lb_pages_free_recycled(a, TABLE);
    unsigned char *again = lb_pages_alloc_recycled(TABLE);
    ASSERT_PTR_EQ(again, a); /* the freed block, handed out zeroed */
    ASSERT_TRUE(all_zero(again, TABLE));
    unsigned char *c = lb_pages_alloc_recycled(TABLE);
    ASSERT_UEQ((uintptr_t)c, (uintptr_t)b + BLOCK);
}

static void test_fork_child_forgets_free_blocks(void)
{
    unsigned char *a = lb_pages_alloc_recycled(TABLE);
    unsigned char *b = lb_pages_alloc_recycled(TABLE);
    memset(a, 0x5a, TABLE);
    lb_pages_free_recycled(a, TABLE); /* the parent's free block */
    lb_arena_fork_prepare();
    pid_t pid = fork();
    if (pid == 0) {
        lb_arena_fork_done(true);
        unsigned char *mine = lb_pages_alloc_recycled(TABLE);
        int rc = mine == a ? 1 : mine != b + BLOCK ? 2 : !all_zero(mine, TABLE) ? 3 : 0;
        _exit(rc); /* a fresh block after b: never the parent's */
    }
    lb_arena_fork_done(false);
    int status;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
    ASSERT_PTR_EQ(lb_pages_alloc_recycled(TABLE), a); /* the parent still has it */
}

static void test_large_block_is_its_own_mapping(void)
{
    size_t big = (size_t)3 << 20;
    unsigned char *p = lb_pages_alloc_recycled(big);
    ASSERT_NOT_NULL(p);
    ASSERT_TRUE(all_zero(p, 4096));
    p[big - 1] = 1;
    lb_pages_free_recycled(p, big);
    ASSERT_FALSE(mapped(p)); /* unmapped, not kept on a list it is never taken from */
}

/* Is the page at p resident? */
static bool resident(const void *p)
{
    unsigned char vec = 0;
    ASSERT_EQ(mincore((void *)((uintptr_t)p & ~(uintptr_t)4095), 4096, &vec), 0);
    return vec & 1;
}

/* A block freed with the pages its owner wrote comes back zeroed, and
 * its pages no owner wrote are not touched by the zeroing. */
/* Transparent huge pages on every mapping: a first touch may map 2 MiB,
 * so which pages are resident says nothing of which were written. */
static bool huge_pages_always(void)
{
    char line[128] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f) {
        if (!fgets(line, sizeof line, f))
            line[0] = '\0';
        fclose(f);
    }
    return strstr(line, "[always]") != NULL;
}

static void test_dirty_pages_only_are_zeroed(void)
{
    const size_t size = 7 * 4096 + 100; /* a class of its own */
    unsigned char *a = lb_pages_alloc_recycled(size);
    ASSERT_NOT_NULL(a);
    memset(a + 4096, 0xab, 4096);
    a[3 * 4096 + 5] = 1;
    lb_pages_free_recycled_dirty(a, size, 1u << 1 | 1u << 3);
    unsigned char *again = lb_pages_alloc_recycled(size);
    ASSERT_PTR_EQ(again, a);
    for (int page = 0; page < 8 && !huge_pages_always(); page++) /* before any read */
        ASSERT_EQ(resident(a + page * 4096), page == 1 || page == 3);
    ASSERT_TRUE(all_zero(again, size));
    lb_pages_free_recycled(again, size);
}

/* The permissions /proc/self/maps gives the page at p ("" if unmapped). */
static void perms_at(const void *p, char perms[5])
{
    FILE *f = fopen("/proc/self/maps", "r");
    ASSERT_NOT_NULL(f);
    perms[0] = '\0';
    char line[512];
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char seen[5];
        if (sscanf(line, "%lx-%lx %4s", &lo, &hi, seen) == 3 && (uintptr_t)p >= lo &&
            (uintptr_t)p < hi) {
            memcpy(perms, seen, 5);
            break;
        }
    }
    fclose(f);
}

static void test_split_reservation_meets_mid_block(void)
{
    const size_t below = (size_t)5 << 20, above = (size_t)3 << 20;
    for (int round = 0; round < 4; round++) { /* wherever the kernel places it */
        unsigned char *point = lb_pages_reserve_split(below, above);
        ASSERT_NOT_NULL(point);
        ASSERT_EQ((uintptr_t)point % ((size_t)2 << 20), (size_t)1 << 20);
        char perms[5];
        perms_at(point - 1, perms);
        ASSERT_STR_EQ(perms, "---p"); /* the lower table: address space until opened */
        ASSERT_TRUE(lb_pages_open(point - below, below));
        ASSERT_TRUE(all_zero(point - 4096, 8192));
        point[-1] = point[0] = 1; /* the first entries of both tables */
        point[-(ptrdiff_t)below] = point[above - 1] = 1;
        perms_at(point - below, perms);
        ASSERT_STR_EQ(perms, "rw-p");
        perms_at(point + above - 1, perms);
        ASSERT_STR_EQ(perms, "rw-p");
        perms_at(point - below - 1, perms);
        ASSERT_STR_EQ(perms, "---p");
        perms_at(point + above, perms);
        ASSERT_STR_EQ(perms, "---p");
        mmap(NULL, (size_t)1 << 20 | 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    }
}

static void test_split_reservation_not_under_address_space_limit(void)
{
    pid_t child = fork();
    ASSERT_TRUE(child >= 0);
    if (child == 0) {
        struct rlimit as = { (rlim_t)8 << 30, (rlim_t)8 << 30 };
        _exit(setrlimit(RLIMIT_AS, &as) == 0 && lb_pages_reserve_split(4096, 4096) == NULL ? 0 : 1);
    }
    int status;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static long minor_faults(void)
{
    struct rusage u;
    getrusage(RUSAGE_THREAD, &u);
    return u.ru_minflt;
}

/* Reads then writes a word of each page of [p, p + bytes): the page
 * faults that took. */
static long faults_reading_then_writing(volatile unsigned char *p, size_t bytes)
{
    long before = minor_faults();
    for (size_t at = 0; at < bytes; at += 4096) {
        unsigned char seen = p[at];
        p[at] = (unsigned char)(seen + 1);
    }
    return minor_faults() - before;
}

static void test_arena_blocks_are_written_before_their_first_read(void)
{
    /* past the arena's first chunk: its blocks lie on pages no one
     * touched before (a chunk's blocks are handed out in order) */
    size_t bytes = 3 * 4096;
    for (int i = 0; i < 300; i++)
        ASSERT_TRUE(lb_arena_alloc(4096) != NULL);
    unsigned char *block = lb_arena_alloc(bytes);
    ASSERT_TRUE(block != NULL);
    ASSERT_TRUE(all_zero(block, bytes));
    ASSERT_EQ(faults_reading_then_writing(block, bytes), 0);

    /* the control: a fresh mapping read first faults twice a page (the
     * zero page, then its copy) */
    unsigned char *fresh =
        mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_TRUE(fresh != MAP_FAILED);
    ASSERT_TRUE(faults_reading_then_writing(fresh, bytes) >= 3);
    munmap(fresh, bytes);

    fresh = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_TRUE(fresh != MAP_FAILED);
    lb_pages_write_first(fresh, bytes);
    ASSERT_TRUE(all_zero(fresh, bytes));
    ASSERT_EQ(faults_reading_then_writing(fresh, bytes), 0);
    munmap(fresh, bytes);
}

CHECK_MAIN(test_carved_in_order_and_recycled, test_fork_child_forgets_free_blocks,
           test_large_block_is_its_own_mapping, test_dirty_pages_only_are_zeroed,
           test_split_reservation_meets_mid_block,
           test_split_reservation_not_under_address_space_limit,
           test_arena_blocks_are_written_before_their_first_read)
