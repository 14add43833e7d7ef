/* Unit tests for reads through block copies (src/util/own_blocks.h): they
 * give what lb_read_own gives, succeed and fail where it does (a block
 * lies in one page, readable whole or not at all), and make one copy a
 * block. */
#include "check.h"

#include <string.h>
#include <sys/mman.h>

#include "util/own_blocks.h"
#include "util/own_memory.h"

#define PAGE 4096

static uint8_t room[LB_OWN_BLOCKS_KEPT * LB_OWN_BLOCK];

/* Three pages of a pattern, the middle one PROT_NONE. */
static uint8_t *three_pages(void)
{
    uint8_t *p = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_TRUE(p != MAP_FAILED);
    for (size_t i = 0; i < 3 * PAGE; i++)
        p[i] = (uint8_t)(i * 7 + 1);
    ASSERT_EQ(mprotect(p + PAGE, PAGE, PROT_NONE), 0);
    return p;
}

static void test_reads_as_read_own_does(void)
{
    uint8_t *mem = three_pages();
    lb_own_blocks_t blocks = { .room = room };
    uint8_t got[64], want[64];
    /* inside one block, twice: one copy */
    ASSERT_TRUE(lb_own_blocks_read(&blocks, (uintptr_t)mem + 100, got, sizeof got));
    ASSERT_TRUE(lb_read_own(mem + 100, want, sizeof want));
    ASSERT_EQ(memcmp(got, want, sizeof got), 0);
    ASSERT_TRUE(lb_own_blocks_read(&blocks, (uintptr_t)mem + 300, got, 8));
    ASSERT_EQ(memcmp(got, mem + 300, 8), 0);
    ASSERT_EQ(lb_own_blocks_held(&blocks), 1u);
    /* across two blocks of one page: two copies */
    ASSERT_TRUE(lb_own_blocks_read(&blocks, (uintptr_t)mem + LB_OWN_BLOCK - 4, got, 11));
    ASSERT_EQ(memcmp(got, mem + LB_OWN_BLOCK - 4, 11), 0);
    ASSERT_EQ(lb_own_blocks_held(&blocks), 2u);
    /* into the unreadable page, or within it: false, as lb_read_own */
    uintptr_t edge = (uintptr_t)mem + PAGE - 8;
    ASSERT_FALSE(lb_read_own((const void *)edge, want, 16));
    ASSERT_FALSE(lb_own_blocks_read(&blocks, edge, got, 16));
    ASSERT_FALSE(lb_own_blocks_read(&blocks, (uintptr_t)mem + PAGE + 10, got, 4));
    ASSERT_EQ(lb_own_blocks_held(&blocks),
              3u); /* the readable block at the edge; none of the other page */
    /* the third page */
    ASSERT_TRUE(lb_own_blocks_read(&blocks, (uintptr_t)mem + 2 * PAGE + 5, got, 11));
    ASSERT_EQ(memcmp(got, mem + 2 * PAGE + 5, 11), 0);
    /* readable again: read again, not remembered as unreadable */
    ASSERT_EQ(mprotect(mem + PAGE, PAGE, PROT_READ), 0);
    ASSERT_TRUE(lb_own_blocks_read(&blocks, edge, got, 16));
    ASSERT_EQ(memcmp(got, (const void *)edge, 16), 0);
    ASSERT_EQ(lb_own_blocks_held(&blocks), 5u);
    munmap(mem, 3 * PAGE);
}

static void test_copies_are_of_their_time(void)
{
    uint8_t *mem = three_pages();
    lb_own_blocks_t blocks = { .room = room };
    uint8_t got = 0;
    ASSERT_TRUE(lb_own_blocks_read(&blocks, (uintptr_t)mem, &got, 1));
    uint8_t before = mem[0];
    mem[0] = (uint8_t)(before + 1);
    ASSERT_TRUE(lb_own_blocks_read(&blocks, (uintptr_t)mem, &got, 1));
    ASSERT_EQ(got, before); /* the copy's */
    lb_own_blocks_forget(&blocks);
    ASSERT_TRUE(lb_own_blocks_read(&blocks, (uintptr_t)mem, &got, 1));
    ASSERT_EQ(got, mem[0]);
    munmap(mem, 3 * PAGE);
}

static void test_oldest_copy_gives_way(void)
{
    size_t n = LB_OWN_BLOCKS_KEPT + 2, bytes = (n * LB_OWN_BLOCK + PAGE - 1) / PAGE * PAGE;
    uint8_t *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_TRUE(mem != MAP_FAILED);
    for (size_t i = 0; i < n; i++)
        mem[i * LB_OWN_BLOCK] = (uint8_t)i;
    lb_own_blocks_t blocks = { .room = room };
    for (size_t round = 0; round < 2; round++)
        for (size_t i = 0; i < n; i++) {
            uint8_t got = 0xff;
            ASSERT_TRUE(lb_own_blocks_read(&blocks, (uintptr_t)mem + i * LB_OWN_BLOCK, &got, 1));
            ASSERT_EQ(got, (uint8_t)i);
        }
    ASSERT_EQ(lb_own_blocks_held(&blocks), (unsigned)LB_OWN_BLOCKS_KEPT);
    /* more than two blocks at once, and no room: lb_read_own's answer */
    uint8_t big[3 * LB_OWN_BLOCK];
    ASSERT_TRUE(lb_own_blocks_read(&blocks, (uintptr_t)mem + 1, big, sizeof big));
    ASSERT_EQ(memcmp(big, mem + 1, sizeof big), 0);
    ASSERT_TRUE(lb_own_blocks_read(NULL, (uintptr_t)mem + 1, big, 16));
    ASSERT_EQ(memcmp(big, mem + 1, 16), 0);
    munmap(mem, bytes);
}

CHECK_MAIN(test_reads_as_read_own_does, test_copies_are_of_their_time, test_oldest_copy_gives_way)
