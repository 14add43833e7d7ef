/* Unit tests for stack bounds, lockblame's own stack and the guard page at
 * the end of every mapping (src/util/stack_bounds.h, own_stack.c,
 * pages.c). */
#include "check.h"

#include <errno.h>
#include <execinfo.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <ucontext.h>

#include "sampler/unwind_cfi.h"
#include "util/own_memory.h"
#include "util/own_stack.h"
#include "util/pages.h"
#include "util/stack_bounds.h"
#include "util/stack_switch.h"

static int readable(const void *p)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    ssize_t w = write(fds[1], p, 1); /* EFAULT if p cannot be read */
    close(fds[0]);
    close(fds[1]);
    return w == 1;
}

static void test_bounds_known_after_init(void)
{
    lb_stack_bounds_init(true);
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    ASSERT_NE(lb_stack_bounds.lo, 0);
    ASSERT_UEQ(here >= lb_stack_bounds.lo && here < lb_stack_bounds.hi, 1);
    ASSERT_TRUE(lb_stack_room(64 << 10));         /* the main thread: megabytes */
    ASSERT_FALSE(lb_stack_room((size_t)1 << 40)); /* but not a terabyte */
}

/* The main thread's bounds (read from /proc/self/maps by lockblame
 * itself) are exactly glibc's. */
static lb_stack_bounds_t glibc_bounds(void)
{
    pthread_attr_t a;
    void *lo = NULL;
    size_t size = 0;
    ASSERT_EQ(pthread_getattr_np(pthread_self(), &a), 0);
    ASSERT_EQ(pthread_attr_getstack(&a, &lo, &size), 0);
    pthread_attr_destroy(&a);
    return (lb_stack_bounds_t){ .lo = (uintptr_t)lo, .hi = (uintptr_t)lo + size };
}

static void test_main_thread_bounds_as_glibc(void)
{
    lb_stack_bounds_t glibc = glibc_bounds();
    lb_stack_bounds.lo = lb_stack_bounds.hi = 0;
    lb_stack_bounds_init(true);
    ASSERT_UEQ(lb_stack_bounds.lo, glibc.lo);
    ASSERT_UEQ(lb_stack_bounds.hi, glibc.hi);
}

/* The same where the stack's room is bounded by a mapping below it (the
 * kernel's query steps to it) and where the stack's limit is unlimited
 * (more mappings below than the query steps over: the file is read), each
 * in a child of its own, whose mappings and limits the test changes. */
static void main_thread_bounds_as_glibc_in_child(int (*change)(void), bool glibc_first)
{
    pid_t child = fork();
    ASSERT_TRUE(child >= 0);
    if (child == 0) {
        /* glibc's answer before a change that stops its own read (a
         * filter), after one that moves it (a mapping, a limit) */
        lb_stack_bounds_t glibc = glibc_first ? glibc_bounds() : (lb_stack_bounds_t){ 0, 0 };
        int changed = change();
        if (changed != 0)
            _exit(changed == 3 ? 3 : 2);
        if (!glibc_first)
            glibc = glibc_bounds();
        lb_stack_bounds.lo = lb_stack_bounds.hi = 0;
        lb_stack_bounds_init(true);
        _exit(lb_stack_bounds.lo == glibc.lo && lb_stack_bounds.hi == glibc.hi ? 0 : 1);
    }
    int status;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    if (WEXITSTATUS(status) == 3) {
        printf("# skipped: the stack's hard limit is finite\n");
        return;
    }
    ASSERT_EQ(WEXITSTATUS(status), 0);
}

/* Two pages mapped 1 MiB below the stack's mapping, inside its room. */
static int map_below_stack(void)
{
    uintptr_t lo, hi;
    if (lb_stack_mapping_of((uintptr_t)__builtin_frame_address(0), &lo, &hi) != 0)
        return -1;
    void *want = (void *)(lo - (1u << 20));
    void *got =
        mmap(want, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    return got == want ? 0 : -1;
}

/* The soft limit lifted to an unlimited hard one; 3 (skip) where the
 * hard limit is finite. */
static int unlimited_stack(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_STACK, &rl) != 0)
        return -1;
    if (rl.rlim_max != RLIM_INFINITY)
        return 3;
    rl.rlim_cur = RLIM_INFINITY;
    return setrlimit(RLIMIT_STACK, &rl);
}

/* A seccomp filter that fails every `syscall_nr` (with arg1's low word
 * `arg1` where arg1 is not ~0u) with `err`. */
static int fail_syscall(int syscall_nr, unsigned arg1, int err)
{
    struct sock_filter only_nr[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)syscall_nr, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args) + 8),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arg1, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)err),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    if (arg1 == ~0u) /* any arg1: the compare made always true */
        only_nr[3] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, 0, 0, 0);
    struct sock_fprog prog = { .len = sizeof only_nr / sizeof *only_nr, .filter = only_nr };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0 ? 0 : 3;
}

#define LB_TEST_PROCMAP_QUERY 0xC0686611u /* _IOWR('f', 17, 104 bytes) */

/* Whether this kernel answers PROCMAP_QUERY (Linux 6.11). */
static bool kernel_has_procmap_query(void)
{
    unsigned char q[104] = { 0 };
    *(uint64_t *)q = sizeof q;                      /* size */
    *(uint64_t *)(q + 16) = (uint64_t)(uintptr_t)q; /* query_addr: this stack */
    int fd = open("/proc/self/maps", O_RDONLY);
    bool has = fd >= 0 && ioctl(fd, LB_TEST_PROCMAP_QUERY, q) == 0;
    if (fd >= 0)
        close(fd);
    return has;
}

/* The kernel's query alone: read(2) fails in the child, so the file
 * cannot be what answers. */
static int no_read(void)
{
    return kernel_has_procmap_query() ? fail_syscall(SYS_read, ~0u, EPERM) : 3;
}

/* The file alone, as on a kernel without the query (Debian 12's 6.1):
 * the answer is glibc's (lockblame's read of the file, or glibc's own
 * call where that failed). */
static int no_query(void)
{
    return fail_syscall(SYS_ioctl, LB_TEST_PROCMAP_QUERY, ENOTTY);
}

static void test_main_thread_bounds_as_glibc_by_query_alone(void)
{
    main_thread_bounds_as_glibc_in_child(no_read, true);
}

static void test_main_thread_bounds_as_glibc_without_query(void)
{
    main_thread_bounds_as_glibc_in_child(no_query, true);
}

static void test_main_thread_bounds_as_glibc_below_a_mapping(void)
{
    main_thread_bounds_as_glibc_in_child(map_below_stack, false);
}

static void test_main_thread_bounds_as_glibc_unlimited(void)
{
    main_thread_bounds_as_glibc_in_child(unlimited_stack, false);
}

/* Other threads: the bounds read from the thread's descriptor (learnt from
 * the first thread's glibc answer) are exactly glibc's, for glibc's stacks
 * of any size (fresh or from its cache) and a stack of the program's; and
 * a thread gets them without a malloc arena of its own. */
typedef struct {
    pthread_barrier_t *ready, *go;
    lb_stack_bounds_t ours, glibc;
} bounds_seen_t;

static void *bounds_thread(void *p)
{
    bounds_seen_t *s = p;
    lb_stack_bounds.lo = lb_stack_bounds.hi = 0;
    lb_stack_bounds_init(true);
    s->ours = lb_stack_bounds;
    if (s->ready) {
        pthread_barrier_wait(s->ready); /* the main thread counts arenas */
        pthread_barrier_wait(s->go);
    }
    s->glibc = glibc_bounds();
    return NULL;
}

static int arenas(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return -1;
    malloc_info(0, f);
    fclose(f);
    int n = 0;
    for (const char *p = text; (p = strstr(p, "<heap nr=")); p++)
        n++;
    free(text);
    return n;
}

#define AT_ONCE 5 /* threads alive at once */

static void test_thread_bounds_as_glibc(void)
{
    bounds_seen_t first = { 0 };
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, bounds_thread, &first), 0);
    pthread_join(t, NULL);
    ASSERT_NE(first.ours.lo, 0);
    ASSERT_UEQ(first.ours.lo, first.glibc.lo);
    ASSERT_UEQ(first.ours.hi, first.glibc.hi);

    static char own_stack[300000] __attribute__((aligned(64)));
    size_t sizes[AT_ONCE] = { 0, 100000 + 123, 1 << 20, 600000, 0 }; /* 0: glibc's default */
    pthread_barrier_t ready, go;
    pthread_barrier_init(&ready, NULL, AT_ONCE + 1);
    pthread_barrier_init(&go, NULL, AT_ONCE + 1);
    bounds_seen_t seen[AT_ONCE];
    pthread_t th[AT_ONCE];
    /* a 1 MiB stack in glibc's cache, which the 600,000-byte thread may reuse */
    pthread_attr_t big;
    pthread_attr_init(&big);
    pthread_attr_setstacksize(&big, 1 << 20);
    bounds_seen_t cached = { 0 };
    ASSERT_EQ(pthread_create(&t, &big, bounds_thread, &cached), 0);
    pthread_join(t, NULL);
    pthread_attr_destroy(&big);
    int before = arenas();
    for (int i = 0; i < AT_ONCE; i++) {
        seen[i] = (bounds_seen_t){ .ready = &ready, .go = &go };
        pthread_attr_t a;
        pthread_attr_init(&a);
        if (sizes[i])
            pthread_attr_setstacksize(&a, sizes[i]);
        if (i == AT_ONCE - 1)
            pthread_attr_setstack(&a, own_stack + 64, sizeof own_stack - 64);
        ASSERT_EQ(pthread_create(&th[i], &a, bounds_thread, &seen[i]), 0);
        pthread_attr_destroy(&a);
    }
    pthread_barrier_wait(&ready);
    int after = arenas();
    pthread_barrier_wait(&go);
    for (int i = 0; i < AT_ONCE; i++) {
        pthread_join(th[i], NULL);
        ASSERT_NE(seen[i].ours.lo, 0);
        ASSERT_UEQ(seen[i].ours.lo, seen[i].glibc.lo);
        ASSERT_UEQ(seen[i].ours.hi, seen[i].glibc.hi);
    }
    ASSERT_NE(before, -1);
    ASSERT_EQ(after, before); /* none of the threads made an arena */
    pthread_barrier_destroy(&ready);
    pthread_barrier_destroy(&go);
}

/* A process whose main thread has started (as lockblame's start does it)
 * knows where a descriptor keeps the stack block before any thread exists:
 * its first thread (a fork child's, say) gets glibc's bounds without a
 * malloc arena of its own. The test runs in a child of the test program
 * that has made no thread. */
static void test_first_thread_bounds_learnt_at_main(void)
{
    lb_stack_bounds.lo = lb_stack_bounds.hi = 0;
    lb_stack_bounds_init(true);
    pthread_barrier_t ready, go;
    pthread_barrier_init(&ready, NULL, 2);
    pthread_barrier_init(&go, NULL, 2);
    bounds_seen_t first = { .ready = &ready, .go = &go };
    int before = arenas();
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, bounds_thread, &first), 0);
    pthread_barrier_wait(&ready);
    int after = arenas();
    pthread_barrier_wait(&go);
    pthread_join(t, NULL);
    ASSERT_NE(first.ours.lo, 0);
    ASSERT_UEQ(first.ours.lo, first.glibc.lo);
    ASSERT_UEQ(first.ours.hi, first.glibc.hi);
    ASSERT_NE(before, -1);
    ASSERT_EQ(after, before);
    pthread_barrier_destroy(&ready);
    pthread_barrier_destroy(&go);
}

static void test_unknown_bounds_mean_room(void)
{
    lb_stack_bounds.lo = lb_stack_bounds.hi = 0;
    ASSERT_TRUE(lb_stack_room((size_t)1 << 40));
}

static void *small_thread(void *arg)
{
    lb_stack_bounds_init(true);
    *(int *)arg = lb_stack_room(LB_STACK_BUDGET_HANDLER);
    return NULL;
}

static void test_no_room_on_a_16k_stack(void)
{
    static char stack[16384] __attribute__((aligned(64)));
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstack(&a, stack, sizeof stack);
    int room = -1;
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, &a, small_thread, &room), 0);
    pthread_join(t, NULL);
    ASSERT_EQ(room, 0);
}

static ucontext_t main_ctx, coro_ctx;
static int coro_room = -1;

static void coro(void)
{
    coro_room = lb_stack_room(1); /* a stack the thread's bounds do not know */
}

static void test_no_room_on_a_foreign_stack(void)
{
    lb_stack_bounds_init(true);
    static char stack[1 << 20];
    getcontext(&coro_ctx);
    coro_ctx.uc_stack.ss_sp = stack;
    coro_ctx.uc_stack.ss_size = sizeof stack;
    coro_ctx.uc_link = &main_ctx;
    makecontext(&coro_ctx, coro, 0);
    swapcontext(&main_ctx, &coro_ctx);
    ASSERT_EQ(coro_room, 0);
}

typedef struct {
    uintptr_t frame;
    int room_8m_minus, cancel_state;
    lb_stack_bounds_t bounds;
} seen_t;

static void on_own_stack(void *p)
{
    seen_t *s = p;
    s->frame = (uintptr_t)__builtin_frame_address(0);
    s->bounds = lb_stack_bounds;
    s->room_8m_minus = lb_stack_room(LB_OWN_STACK_SIZE - (64 << 10));
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &s->cancel_state);
}

static void test_own_stack_runs_fn_there(void)
{
    lb_stack_bounds_init(true);
    lb_stack_bounds_t before = lb_stack_bounds;
    seen_t s = { 0 };
    errno = 0;
    ASSERT_EQ(lb_call_on_own_stack(on_own_stack, &s, LB_OWN_STACK_SIZE, true), 0);
    ASSERT_UEQ(s.frame >= s.bounds.lo && s.frame < s.bounds.hi, 1);
    ASSERT_UEQ(s.bounds.hi - s.bounds.lo, LB_OWN_STACK_SIZE);
    ASSERT_UEQ(s.frame < before.lo || s.frame >= before.hi, 1); /* not the thread's stack */
    ASSERT_EQ(s.room_8m_minus, 1);
    ASSERT_EQ(s.cancel_state, PTHREAD_CANCEL_DISABLE);
    ASSERT_UEQ(lb_stack_bounds.lo, before.lo);         /* restored */
    ASSERT_EQ(readable((void *)(s.bounds.lo - 1)), 0); /* the guard page */
    int state;
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &state);
    ASSERT_EQ(state, PTHREAD_CANCEL_ENABLE);           /* restored */
    ASSERT_EQ(readable((void *)(s.bounds.hi - 1)), 1); /* kept */
}

/* A call made again and again (a forking parent's) leaves no stack. */
static void test_own_stack_not_kept(void)
{
    lb_stack_bounds_init(true);
    seen_t s = { 0 };
    ASSERT_EQ(lb_call_on_own_stack(on_own_stack, &s, LB_OWN_STACK_SIZE, false), 0);
    ASSERT_UEQ(s.frame >= s.bounds.lo && s.frame < s.bounds.hi, 1);
    int state;
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &state);
    ASSERT_EQ(readable((void *)(s.bounds.hi - 1)), 0);
    ASSERT_EQ(readable((void *)s.frame), 0);
}

typedef struct {
    seen_t seen;
    char *area, *again, *too_big;
} kept_seen_t;

static void on_kept_stack(void *p)
{
    kept_seen_t *k = p;
    on_own_stack(&k->seen);
    k->too_big = lb_own_stack_area((2u << 20) + 1);
    k->area = lb_own_stack_area(2u << 20);
    k->again = lb_own_stack_area(4096);
    memset(k->area, 1, 4096); /* the scratch's first block */
}

/* The final write's stack: its area lies directly above the stack's top,
 * the two share one 2 MiB block (one page-table page), a guard page on
 * either side; handed out once, and kept. */
static void test_kept_stack_shares_a_block_with_its_area(void)
{
    lb_stack_bounds_init(true);
    ASSERT_NULL(lb_own_stack_area(4096)); /* none before the call */
    kept_seen_t k = { 0 };
    ASSERT_EQ(lb_call_on_kept_stack(on_kept_stack, &k, LB_OWN_STACK_SIZE, 2u << 20), 0);
    int state;
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &state);
    ASSERT_UEQ(k.seen.frame >= k.seen.bounds.lo && k.seen.frame < k.seen.bounds.hi, 1);
    ASSERT_UEQ(k.seen.bounds.hi - k.seen.bounds.lo, LB_OWN_STACK_SIZE);
    ASSERT_NULL(k.too_big);
    ASSERT_UEQ((uintptr_t)k.area, k.seen.bounds.hi);
    ASSERT_UEQ((k.seen.bounds.hi - 1) >> 21, (uintptr_t)k.area >> 21);
    ASSERT_NULL(k.again);
    ASSERT_NULL(lb_own_stack_area(4096));
    ASSERT_EQ(readable((void *)(k.seen.bounds.lo - 1)), 0); /* the guard below */
    ASSERT_EQ(readable(k.area + (2u << 20) - 1), 1);        /* kept */
    ASSERT_EQ(readable(k.area + (2u << 20)), 0);            /* the guard above */
    ASSERT_EQ(k.area[4095], 1);
    ASSERT_EQ(k.area[4096], 0); /* zeroed */
}

/* One mapping of /proc/self/smaps: its range, protections and resident
 * kB; end 0 when no mapping holds addr. */
typedef struct {
    uintptr_t start, end;
    char perms[5];
    unsigned long rss_kb;
} vma_t;

static vma_t vma_at(uintptr_t addr)
{
    vma_t v = { 0 }, cur = { 0 };
    FILE *f = fopen("/proc/self/smaps", "r");
    ASSERT_TRUE(f != NULL);
    char line[512];
    int in = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi, kb;
        char perms[5];
        if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 &&
            strchr(line, '-') < strchr(line, ' ')) {
            in = addr >= lo && addr < hi;
            if (in) {
                cur.start = lo;
                cur.end = hi;
                memcpy(cur.perms, perms, sizeof cur.perms);
            }
        } else if (in && sscanf(line, "Rss: %lu kB", &kb) == 1) {
            cur.rss_kb = kb;
            v = cur;
        }
    }
    fclose(f);
    return v;
}

#define LB_TEST_AREA (2u << 20)

/* The reserved kept stack: [PROT_NONE, the slack and a guard][the stack
 * and the area, readable and writable][PROT_NONE, a guard and what the
 * slack leaves], as lb_call_on_kept_stack maps it, and not a page of it
 * resident. */
static void assert_reserved_untouched(char *top)
{
    uintptr_t lo = (uintptr_t)top - LB_OWN_STACK_SIZE, hi = (uintptr_t)top + LB_TEST_AREA;
    ASSERT_UEQ((uintptr_t)top & ((2u << 20) - 1), 512u << 10);
    vma_t used = vma_at((uintptr_t)top);
    ASSERT_UEQ(used.start, lo);
    ASSERT_UEQ(used.end, hi);
    ASSERT_EQ(strcmp(used.perms, "rw-p"), 0);
    ASSERT_UEQ(used.rss_kb, 0);
    vma_t below = vma_at(lo - 1), above = vma_at(hi);
    ASSERT_EQ(strcmp(below.perms, "---p"), 0);
    ASSERT_EQ(strcmp(above.perms, "---p"), 0);
    ASSERT_UEQ(below.rss_kb, 0);
    ASSERT_UEQ(above.rss_kb, 0);
}

static int on_stack_below(const kept_seen_t *k, const char *top)
{
    return k->seen.frame < (uintptr_t)top && k->seen.frame >= (uintptr_t)top - LB_OWN_STACK_SIZE;
}

/* A forking parent reserves the kept stack untouched; its fork child's
 * exit write runs on that reservation (no mapping of its own: the same
 * address), and so does the parent's own; a later call maps another. */
static void test_kept_stack_reserved_for_fork_children(void)
{
    lb_stack_bounds_init(true);
    char *top = lb_kept_stack_reserve(LB_OWN_STACK_SIZE, LB_TEST_AREA);
    ASSERT_TRUE(top != NULL);
    ASSERT_TRUE(lb_kept_stack_reserve(LB_OWN_STACK_SIZE, LB_TEST_AREA) == top); /* once */
    assert_reserved_untouched(top);
    pid_t child = fork();
    ASSERT_TRUE(child >= 0);
    if (child == 0) {
        kept_seen_t k = { 0 };
        ASSERT_EQ(lb_call_on_kept_stack(on_kept_stack, &k, LB_OWN_STACK_SIZE, LB_TEST_AREA), 0);
        ASSERT_TRUE(k.area == top);
        ASSERT_TRUE(on_stack_below(&k, top));
        ASSERT_UEQ(k.seen.bounds.hi, (uintptr_t)top);
        ASSERT_EQ(readable((void *)(k.seen.bounds.lo - 1)), 0); /* the guard below */
        ASSERT_EQ(readable(k.area + LB_TEST_AREA), 0);          /* the guard above */
        ASSERT_EQ(k.area[4096], 0);                             /* zeroed */
        _exit(0);
    }
    int status;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_reserved_untouched(top); /* the child's writes were its own */
    kept_seen_t first = { 0 }, second = { 0 };
    ASSERT_EQ(lb_call_on_kept_stack(on_kept_stack, &first, LB_OWN_STACK_SIZE, LB_TEST_AREA), 0);
    ASSERT_TRUE(first.area == top);
    ASSERT_TRUE(on_stack_below(&first, top));
    ASSERT_NULL(lb_kept_stack_reserve(LB_OWN_STACK_SIZE, LB_TEST_AREA)); /* taken: not again */
    ASSERT_EQ(lb_call_on_kept_stack(on_kept_stack, &second, LB_OWN_STACK_SIZE, LB_TEST_AREA), 0);
    ASSERT_TRUE(second.area != NULL && second.area != top);
    ASSERT_FALSE(on_stack_below(&second, top));
    ASSERT_EQ(first.area[4095], 1); /* the first's, still kept */
}

/* Only a kept call for the sizes reserved takes the reservation: not an
 * own stack, kept or not, nor a kept stack with another area. */
static void test_kept_stack_reservation_only_for_its_call(void)
{
    lb_stack_bounds_init(true);
    char *top = lb_kept_stack_reserve(LB_OWN_STACK_SIZE, LB_TEST_AREA);
    ASSERT_TRUE(top != NULL);
    kept_seen_t k = { 0 };
    ASSERT_EQ(lb_call_on_own_stack(on_own_stack, &k.seen, LB_OWN_STACK_SIZE, false), 0);
    ASSERT_FALSE(on_stack_below(&k, top));
    ASSERT_EQ(lb_call_on_own_stack(on_own_stack, &k.seen, LB_OWN_STACK_SIZE, true), 0);
    ASSERT_FALSE(on_stack_below(&k, top));
    ASSERT_EQ(lb_call_on_kept_stack(on_own_stack, &k.seen, LB_OWN_STACK_SIZE, 4096), 0);
    ASSERT_FALSE(on_stack_below(&k, top));
    assert_reserved_untouched(top);
    ASSERT_EQ(lb_call_on_kept_stack(on_own_stack, &k.seen, LB_OWN_STACK_SIZE, LB_TEST_AREA), 0);
    ASSERT_TRUE(on_stack_below(&k, top));
}

/* Two threads' kept calls at once (an exit beside another, or beside a
 * fork child's): both run their fn at the same time, at most one on the
 * reservation. Each round in a process of its own, reserving afresh. */
typedef struct {
    pthread_barrier_t *start, *inside;
    kept_seen_t seen;
    int rc;
} racing_call_t;

static void on_racing_stack(void *p)
{
    racing_call_t *r = p;
    r->seen.seen.frame = (uintptr_t)__builtin_frame_address(0);
    pthread_barrier_wait(r->inside); /* both on their stacks now */
}

static void *racing_call(void *p)
{
    racing_call_t *r = p;
    pthread_barrier_wait(r->start);
    r->rc = lb_call_on_kept_stack(on_racing_stack, r, LB_OWN_STACK_SIZE, LB_TEST_AREA);
    return NULL;
}

static void test_kept_stack_reservation_taken_once(void)
{
    for (int round = 0; round < 20; round++) {
        pid_t child = fork();
        ASSERT_TRUE(child >= 0);
        if (child == 0) {
            char *top = lb_kept_stack_reserve(LB_OWN_STACK_SIZE, LB_TEST_AREA);
            ASSERT_TRUE(top != NULL);
            pthread_barrier_t start, inside;
            pthread_barrier_init(&start, NULL, 2);
            pthread_barrier_init(&inside, NULL, 2);
            racing_call_t r[2] = { { .start = &start, .inside = &inside, .rc = -1 },
                                   { .start = &start, .inside = &inside, .rc = -1 } };
            pthread_t t[2];
            for (int i = 0; i < 2; i++)
                ASSERT_EQ(pthread_create(&t[i], NULL, racing_call, &r[i]), 0);
            for (int i = 0; i < 2; i++)
                pthread_join(t[i], NULL);
            ASSERT_EQ(r[0].rc, 0);
            ASSERT_EQ(r[1].rc, 0);
            ASSERT_EQ(on_stack_below(&r[0].seen, top) + on_stack_below(&r[1].seen, top), 1);
            _exit(0);
        }
        int status;
        ASSERT_EQ(waitpid(child, &status, 0), child);
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
}

/* What fn sees of the switch: where it runs, what it was given, how the
 * stack is aligned, the signal mask, and where an unwind from it ends. */
typedef struct {
    void *arg;
    uintptr_t cfa, local;
    lb_stack_bounds_t bounds;
    sigset_t mask;
    char formatted[32];
    uintptr_t last_pc, ret;
    int frames;
    uint8_t ret_rule;
} switch_seen_t;

static void on_switched_stack(void *p)
{
    switch_seen_t *s = p;
    volatile char local = 1;
    s->arg = p;
    s->cfa = (uintptr_t)__builtin_dwarf_cfa(); /* rsp before the call pushed the return address */
    s->local = (uintptr_t)&local;
    s->bounds = lb_stack_bounds;
    sigprocmask(SIG_BLOCK, NULL, &s->mask);
    /* a variadic call with a double saves the vector registers with
     * aligned stores: it faults on a stack misaligned at the call */
    snprintf(s->formatted, sizeof s->formatted, "%.3f", 2.5);
    void *pcs[64];
    s->frames = backtrace(pcs, 64);
    s->last_pc = s->frames > 0 ? (uintptr_t)pcs[s->frames - 1] : 0;
    s->ret = (uintptr_t)__builtin_return_address(0);
    s->ret_rule = lb_frame_rule(s->ret - 1).kind;
}

static bool same_mask(const sigset_t *a, const sigset_t *b)
{
    for (int sig = 1; sig < NSIG; sig++)
        if (sigismember(a, sig) != sigismember(b, sig))
            return false;
    return true;
}

/* fn runs on the new stack with its argument, a call's alignment and the
 * caller's signal mask; the mask and errno are the same after; unwinds
 * from fn (libgcc's, and the sampler's rule) end at the switch. */
static void test_own_stack_switch_as_a_call(void)
{
    lb_stack_bounds_init(true);
    sigset_t mask, inside_expected, after;
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR2);
    sigaddset(&mask, SIGRTMIN + 3);
    ASSERT_EQ(sigprocmask(SIG_BLOCK, &mask, &inside_expected), 0);
    sigprocmask(SIG_BLOCK, NULL, &inside_expected);
    switch_seen_t s = { 0 };
    errno = EDOM;
    ASSERT_EQ(lb_call_on_own_stack(on_switched_stack, &s, 256 << 10, false), 0);
    ASSERT_EQ(errno, EDOM);
    ASSERT_PTR_EQ(s.arg, &s);
    ASSERT_UEQ(s.bounds.hi - s.bounds.lo, 256 << 10);
    ASSERT_TRUE(s.local >= s.bounds.lo && s.local < s.bounds.hi);
    ASSERT_TRUE(s.cfa > s.bounds.lo && s.cfa <= s.bounds.hi);
    ASSERT_UEQ(s.cfa % 16, 0); /* the ABI: rsp + 8 is a multiple of 16 at a function's entry */
    ASSERT_STR_EQ(s.formatted, "2.500");
    ASSERT_TRUE(same_mask(&s.mask, &inside_expected));
    sigprocmask(SIG_BLOCK, NULL, &after);
    ASSERT_TRUE(same_mask(&after, &inside_expected));
    /* the walk: fn, then the switch's frame, where it ends */
    ASSERT_GE(s.frames, 2);
    ASSERT_LT(s.frames, 64);
    ASSERT_UEQ(s.last_pc, s.ret);
    ASSERT_TRUE(s.ret > (uintptr_t)lb_stack_switch_call &&
                s.ret < (uintptr_t)lb_stack_switch_call + 64);
    ASSERT_EQ(s.ret_rule, LB_RULE_END);
}

/* marked_call(target, a, b, c, d, out): target(a, b, c, d) with rbx, rbp
 * and r12-r15 set to known values; out[0..5] holds them after the call,
 * out[6] target's return value. */
__asm__(".text\n"
        ".p2align 4\n"
        "marked_call:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    pushq %r9\n" /* out; rsp is a multiple of 16 again */
        "    movq %rdi, %rax\n"
        "    movq %rsi, %rdi\n"
        "    movq %rdx, %rsi\n"
        "    movq %rcx, %rdx\n"
        "    movq %r8, %rcx\n"
        "    movabsq $0x1111111111111111, %rbx\n"
        "    movabsq $0x2222222222222222, %rbp\n"
        "    movabsq $0x3333333333333333, %r12\n"
        "    movabsq $0x4444444444444444, %r13\n"
        "    movabsq $0x5555555555555555, %r14\n"
        "    movabsq $0x6666666666666666, %r15\n"
        "    call *%rax\n"
        "    popq %r9\n"
        "    movq %rbx, 0(%r9)\n"
        "    movq %rbp, 8(%r9)\n"
        "    movq %r12, 16(%r9)\n"
        "    movq %r13, 24(%r9)\n"
        "    movq %r14, 32(%r9)\n"
        "    movq %r15, 40(%r9)\n"
        "    movq %rax, 48(%r9)\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n");
void marked_call(const void *target, uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d,
                 uint64_t out[7]);

static void assert_marks_kept(const uint64_t out[7])
{
    for (int i = 0; i < 6; i++)
        ASSERT_UEQ(out[i], 0x1111111111111111ull * (uint64_t)(i + 1));
}

static void count_call(void *p)
{
    ++*(int *)p;
}

/* The callee-saved registers are the caller's after the switch and back,
 * both through the routine alone and through lb_call_on_own_stack. */
static void test_own_stack_keeps_callee_saved_registers(void)
{
    static char stack[64 << 10] __attribute__((aligned(16)));
    int calls = 0;
    uint64_t out[7];
    marked_call((const void *)lb_stack_switch_call, (uintptr_t)count_call, (uintptr_t)&calls,
                (uintptr_t)(stack + sizeof stack), 0, out);
    assert_marks_kept(out);
    ASSERT_EQ(calls, 1);
    lb_stack_bounds_init(true);
    memset(out, 0, sizeof(uint64_t[7]));
    marked_call((const void *)lb_call_on_own_stack, (uintptr_t)count_call, (uintptr_t)&calls,
                64 << 10, 0, out);
    assert_marks_kept(out);
    ASSERT_UEQ(out[6] & 0xffffffffu, 0); /* int 0: fn ran on a new stack */
    ASSERT_EQ(calls, 2);
}

typedef struct {
    seen_t outer, inner;
    lb_stack_bounds_t outer_after;
    int rc;
} nested_seen_t;

static void on_nested_stack(void *p)
{
    nested_seen_t *n = p;
    on_own_stack(&n->inner);
}

static void on_outer_stack(void *p)
{
    nested_seen_t *n = p;
    on_own_stack(&n->outer);
    n->rc = lb_call_on_own_stack(on_nested_stack, n, 128 << 10, false);
    n->outer_after = lb_stack_bounds;
}

/* A call from fn switches to a stack of its own and back to fn's. */
static void test_own_stack_nested_call(void)
{
    lb_stack_bounds_init(true);
    nested_seen_t n = { 0 };
    ASSERT_EQ(lb_call_on_own_stack(on_outer_stack, &n, LB_OWN_STACK_SIZE, false), 0);
    ASSERT_EQ(n.rc, 0);
    ASSERT_UEQ(n.inner.bounds.hi - n.inner.bounds.lo, 128 << 10);
    ASSERT_TRUE(n.inner.frame >= n.inner.bounds.lo && n.inner.frame < n.inner.bounds.hi);
    ASSERT_TRUE(n.inner.frame < n.outer.bounds.lo || n.inner.frame >= n.outer.bounds.hi);
    ASSERT_UEQ(n.outer_after.lo, n.outer.bounds.lo); /* back on the outer stack */
    ASSERT_UEQ(n.outer_after.hi, n.outer.bounds.hi);
}

typedef struct {
    int depth;
    uintptr_t deepest, lo;
} recursion_t;

/* 1 KiB frames down to 16 KiB above the stack's bottom */
static __attribute__((noinline)) int recurse(recursion_t *r, int depth)
{
    volatile char frame[1024];
    frame[0] = (char)depth;
    uintptr_t here = (uintptr_t)frame;
    if (here < r->deepest || !r->deepest)
        r->deepest = here;
    r->depth = depth > r->depth ? depth : r->depth;
    int below = here - lb_stack_bounds.lo > (16u << 10) ? recurse(r, depth + 1) : 0;
    return below + frame[0];
}

static void on_recursion_stack(void *p)
{
    recursion_t *r = p;
    r->lo = lb_stack_bounds.lo;
    recurse(r, 1);
}

/* fn can use the whole size asked for: a recursion down to the stack's
 * last pages, above the guard. */
static void test_own_stack_holds_a_deep_recursion(void)
{
    lb_stack_bounds_init(true);
    recursion_t r = { 0 };
    ASSERT_EQ(lb_call_on_own_stack(on_recursion_stack, &r, 1u << 20, false), 0);
    ASSERT_GT(r.depth, 800); /* over 800 KiB of frames */
    ASSERT_TRUE(r.deepest >= r.lo && r.deepest - r.lo < (20u << 10));
}

static void test_pages_end_in_a_guard(void)
{
    char *p = lb_pages_alloc(10000);
    ASSERT_NOT_NULL(p);
    ASSERT_EQ(readable(p + 9999), 1);
    ASSERT_EQ(readable(p + 12288), 0); /* the page after the rounded size */
    lb_pages_free(p, 10000);
    ASSERT_EQ(readable(p), 0);
}

/* The main thread's descriptor is read only as far as its memory goes:
 * glibc's struct pthread is shorter than the words the learning looks at,
 * and the loader may have placed it at the end of a mapping (a Python
 * 3.11 build with a large static TLS crashed at start-up in one run of
 * five, reading the page after). lb_read_own_prefix copies up to the first
 * unreadable page, unmapped or PROT_NONE, and no further. */
static void test_descriptor_copy_stops_at_unreadable_page(void)
{
    char *p = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_TRUE(p != MAP_FAILED);
    memset(p, 7, 2 * 4096);
    ASSERT_EQ(munmap(p + 2 * 4096, 4096), 0);
    uintptr_t copy[512];
    char *near_end = p + 2 * 4096 - 96; /* 12 words before the hole */
    ASSERT_UEQ(lb_read_own_prefix(near_end, copy, sizeof copy), 96);
    ASSERT_UEQ(copy[11], 0x0707070707070707ull);
    ASSERT_UEQ(lb_read_own_prefix(p + 4096 + 8, copy, sizeof copy), 4096 - 8); /* up to the hole */
    ASSERT_UEQ(lb_read_own_prefix(p, copy, sizeof copy), sizeof copy);         /* all readable */
    ASSERT_EQ(mprotect(p + 4096, 4096, PROT_NONE), 0);
    ASSERT_UEQ(lb_read_own_prefix(p + 4096 - 16, copy, sizeof copy), 16);
    ASSERT_UEQ(lb_read_own_prefix(p + 4096, copy, sizeof copy), 0);
    munmap(p, 2 * 4096);
}

/* A process whose private writable memory is limited (RLIMIT_DATA, as
 * strict overcommit charges it too) reserves nothing ahead: the exit
 * write maps its stack then, as before. (Each test runs in a process of
 * its own: the limit stays there.) */
static void test_kept_stack_not_reserved_under_a_data_limit(void)
{
    struct rlimit data = { 64ul << 30, 64ul << 30 };
    ASSERT_EQ(setrlimit(RLIMIT_DATA, &data), 0);
    ASSERT_TRUE(lb_kept_stack_reserve(LB_OWN_STACK_SIZE, LB_TEST_AREA) == NULL);
    ASSERT_TRUE(lb_kept_stack_reserve(LB_OWN_STACK_SIZE, LB_TEST_AREA) == NULL); /* not again */
}

CHECK_MAIN(test_bounds_known_after_init, test_descriptor_copy_stops_at_unreadable_page,
           test_main_thread_bounds_as_glibc, test_main_thread_bounds_as_glibc_below_a_mapping,
           test_main_thread_bounds_as_glibc_unlimited,
           test_main_thread_bounds_as_glibc_by_query_alone,
           test_main_thread_bounds_as_glibc_without_query, test_thread_bounds_as_glibc,
           test_first_thread_bounds_learnt_at_main, test_unknown_bounds_mean_room,
           test_no_room_on_a_16k_stack, test_no_room_on_a_foreign_stack,
           test_own_stack_runs_fn_there, test_own_stack_not_kept, test_own_stack_switch_as_a_call,
           test_own_stack_keeps_callee_saved_registers, test_own_stack_nested_call,
           test_own_stack_holds_a_deep_recursion, test_kept_stack_shares_a_block_with_its_area,
           test_kept_stack_reserved_for_fork_children,
           test_kept_stack_reservation_only_for_its_call, test_kept_stack_reservation_taken_once,
           test_pages_end_in_a_guard, test_kept_stack_not_reserved_under_a_data_limit)
