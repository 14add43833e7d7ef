/* Unit tests for the rules fork children hand to their later siblings
 * (src/sampler/rule_share.c). A process maps its region at a fork
 * (lb_rule_share_fork_prepare); a fork child appends rules for pcs in the
 * modules listed then; the parent's next fork_prepare hands each complete
 * entry to its callback once. An entry whose writer was killed between
 * claiming it and sealing it is never handed on, nor one for a module the
 * region does not list, nor any after such a module was met. */
#include "check.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>

#include "sampler/rule_share.h"

#define MAX_TAKEN 16

static uintptr_t taken_pc[MAX_TAKEN];
static uint64_t taken_word[MAX_TAKEN];
static int taken;

static void take(uintptr_t pc, uint64_t word)
{
    if (taken < MAX_TAKEN) {
        taken_pc[taken] = pc;
        taken_word[taken] = word;
    }
    taken++;
}

__attribute__((noinline)) static int some_code(int x)
{
    return x * 3 + 1;
}

static struct dl_find_object object_of(const void *pc)
{
    struct dl_find_object dlfo;
    ASSERT_EQ(_dl_find_object((void *)pc, &dlfo), 0);
    return dlfo;
}

/* Fork a child that runs body, and wait for it to exit 0. */
static void in_child(void (*body)(void))
{
    pid_t pid = fork();
    ASSERT_TRUE(pid >= 0);
    if (pid == 0) {
        body();
        _exit(0);
    }
    int status;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void offer_two(void)
{
    struct dl_find_object dlfo = object_of((void *)some_code);
    lb_rule_share_offer((uintptr_t)some_code + 4, 0x1111, &dlfo);
    lb_rule_share_offer((uintptr_t)some_code + 8, 0x2223, &dlfo);
}

static void test_child_rules_reach_parent_once(void)
{
    lb_rule_share_setup();
    lb_rule_share_fork_prepare(take); /* the first fork: the region */
    ASSERT_EQ(taken, 0);
    in_child(offer_two);
    lb_rule_share_fork_prepare(take);
    ASSERT_EQ(taken, 2);
    ASSERT_EQ(taken_pc[0], (uintptr_t)some_code + 4);
    ASSERT_EQ(taken_word[0], 0x1111);
    ASSERT_EQ(taken_pc[1], (uintptr_t)some_code + 8);
    ASSERT_EQ(taken_word[1], 0x2223);
    lb_rule_share_fork_prepare(take); /* nothing new */
    ASSERT_EQ(taken, 2);
    ASSERT_EQ(some_code(1), 4);
}

static void offer_unlisted_then_listed(void)
{
    struct dl_find_object dlfo = object_of((void *)some_code);
    struct dl_find_object other = dlfo;
    other.dlfo_map_start = (char *)other.dlfo_map_start + 4096; /* no such module */
    lb_rule_share_offer((uintptr_t)some_code + 4, 0x1111, &dlfo);
    lb_rule_share_offer((uintptr_t)some_code + 8, 0x3333, &other);
    lb_rule_share_offer((uintptr_t)some_code + 12, 0x5555, &dlfo); /* stopped */
}

static void test_unlisted_module_stops_appends(void)
{
    lb_rule_share_setup();
    lb_rule_share_fork_prepare(take);
    in_child(offer_unlisted_then_listed);
    lb_rule_share_fork_prepare(take);
    ASSERT_EQ(taken, 1);
    ASSERT_EQ(taken_word[0], 0x1111);
}

/* A child killed at a random point of a stream of appends: every entry
 * handed on is one it wrote whole. It says when its first appends are
 * made (a byte on `ready`), so that a busy machine, which may not run it
 * before the kill, still leaves some. */
static void offer_forever(int ready)
{
    struct dl_find_object dlfo = object_of((void *)some_code);
    for (uint64_t i = 0;; i++) {
        lb_rule_share_offer((uintptr_t)some_code + (i % 64), 0x100001 + (i % 64) * 2, &dlfo);
        if (i == 7 && write(ready, "r", 1) != 1)
            _exit(1);
    }
}

static int torn;

static void check_whole(uintptr_t pc, uint64_t word)
{
    uint64_t i = pc - (uintptr_t)some_code;
    if (i >= 64 || word != 0x100001 + i * 2)
        torn++;
    taken++;
}

static void test_killed_writer_leaves_no_torn_entry(void)
{
    lb_rule_share_setup();
    lb_rule_share_fork_prepare(check_whole);
    for (int round = 0; round < 20; round++) {
        int ready[2];
        ASSERT_EQ(pipe(ready), 0);
        pid_t pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
            close(ready[0]);
            offer_forever(ready[1]);
            _exit(0);
        }
        close(ready[1]);
        char byte;
        ASSERT_EQ(read(ready[0], &byte, 1), 1);
        close(ready[0]);
        usleep(50 * round);
        kill(pid, SIGKILL);
        int status;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        lb_rule_share_fork_prepare(check_whole);
    }
    ASSERT_EQ(torn, 0);
    ASSERT_TRUE(taken > 0);
}

CHECK_MAIN(test_child_rules_reach_parent_once, test_unlisted_module_stops_appends,
           test_killed_writer_leaves_no_torn_entry)
