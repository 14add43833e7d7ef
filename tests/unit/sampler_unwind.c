/* Unit tests for lockblame's CFI unwinder (src/sampler/unwind*.c).
 *
 * A recursion records each level's return address with
 * __builtin_return_address; walks from the bottom (lb_unwind_here, and
 * lb_unwind_signal from a signal raised there) must report exactly those
 * call sites, through frames built with and without a frame pointer and
 * through an alloca frame (CFA from rbp). A walk into code without CFI
 * stops after that frame. The sampler is linked into this executable, so
 * lb_pc_in_self() is false and no frame is dropped as lockblame's own. */
#include "check.h"

#include <alloca.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <ucontext.h>

#include "sampler/cct.h"
#include "common/marker_frames.h"
#include "sampler/unwind.h"
#include "sampler/unwind_cfi.h"

#define DEPTH 12

static uintptr_t ra[DEPTH];          /* ra[k]: return address of level k */
static uintptr_t here[LB_MAX_DEPTH]; /* the walk from the bottom */
static int here_n;
static uintptr_t sig[LB_MAX_DEPTH]; /* the walk from the signal context */
static int sig_n;
static volatile uintptr_t sink;

static void on_signal(int signo, siginfo_t *info, void *uc)
{
    bool in_sync;
    sig_n = lb_unwind_signal(uc, sig, LB_MAX_DEPTH, &in_sync);
}

static int level(int k);

/* The three shapes of frame: frame pointer, none, and alloca (rbp-based
 * CFA even without -fno-omit-frame-pointer). */
__attribute__((noinline, optimize("omit-frame-pointer"))) static int level_nofp(int k)
{
    ra[k] = (uintptr_t)__builtin_return_address(0);
    int r = level(k - 1);
    sink += (uintptr_t)r;
    return r + 1;
}

__attribute__((noinline)) static int level_fp(int k)
{
    ra[k] = (uintptr_t)__builtin_return_address(0);
    int r = level(k - 1);
    sink += (uintptr_t)r;
    return r + 1;
}

__attribute__((noinline, optimize("omit-frame-pointer"))) static int level_alloca(int k)
{
    ra[k] = (uintptr_t)__builtin_return_address(0);
    volatile char *buf = alloca(64 + (size_t)(sink & 7));
    buf[0] = (char)k;
    int r = level(k - 1);
    sink += (uintptr_t)r + (uintptr_t)buf[0];
    return r + 1;
}

__attribute__((noinline)) static int bottom(void)
{
    here_n = lb_unwind_here(here, LB_MAX_DEPTH);
    raise(SIGUSR1);
    sink += (uintptr_t)here_n;
    return 0;
}

__attribute__((noinline)) static int level(int k)
{
    if (k < 0)
        return bottom();
    switch (k % 3) {
    case 0:
        return level_nofp(k);
    case 1:
        return level_fp(k);
    default:
        return level_alloca(k);
    }
}

/* The index in pcs[0..n) where the recorded call sites begin, innermost
 * first (ra[0] - 1, ra[1] - 1, ...), or -1. */
static int find_chain(const uintptr_t *pcs, int n)
{
    for (int i = 0; i + DEPTH <= n; i++) {
        int k = 0;
        while (k < DEPTH && pcs[i + k] == ra[k] - 1)
            k++;
        if (k == DEPTH)
            return i;
    }
    return -1;
}

static void run_recursion(void)
{
    struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO };
    sigemptyset(&sa.sa_mask);
    ASSERT_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    lb_unwind_setup();
    level(DEPTH - 1);
}

static void test_here_walk_reports_every_call_site(void)
{
    run_recursion();
    ASSERT_GT(here_n, DEPTH + 2);
    /* here[0]: inside lb_unwind_here; here[1]: bottom's call of it;
     * here[2]: level 0's call of bottom (level() tail-jumps at -O2);
     * then level 0's own return address, ra[0] - 1, and so on */
    ASSERT_EQ(find_chain(here, here_n), 3);
}

static void test_signal_walk_reports_every_call_site(void)
{
    run_recursion();
    ASSERT_GT(sig_n, DEPTH);
    ASSERT_GE(find_chain(sig, sig_n), 1);
}

static void test_walk_stops_at_code_without_cfi(void)
{
    void *page = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_TRUE(page != MAP_FAILED);
    lb_regs_t r;
    LB_REGS_HERE(r);
    r.pc = (uintptr_t)page + 16;
    ASSERT_EQ(lb_frame_rule(r.pc).kind, LB_RULE_UNKNOWN);
    uintptr_t pcs[8];
    /* the frame, then the marker that says the path is cut there (no
     * frame-pointer step: this thread's stack bounds are not known) */
    ASSERT_EQ(lb_unwind_from(&r, pcs, 8, NULL), 2);
    ASSERT_UEQ(pcs[0], r.pc);
    ASSERT_UEQ(pcs[1], LB_CUT_FRAME_PC(r.pc));
}

static void test_trace_lists_return_address_slots(void)
{
    uint32_t off[64];
    lb_walk_trace_t trace = { .off = off, .max = 64 };
    lb_regs_t r;
    LB_REGS_HERE(r);
    uintptr_t pcs[LB_MAX_DEPTH];
    int n = lb_unwind_from(&r, pcs, LB_MAX_DEPTH, &trace);
    ASSERT_GT(n, 1);
    ASSERT_FALSE(trace.overflow);
    ASSERT_GE(trace.n, n - 1);
    /* the first slot holds the return address into our caller */
    ASSERT_UEQ(*(const uintptr_t *)(r.sp + off[0]) - 1, pcs[1]);
}

/* Look-ups of pc that computed the rule (cache misses). */
static uint64_t misses_of(uintptr_t pc, int lookups, lb_frame_rule_t *rule)
{
    uint64_t before = lb_frame_rule_misses();
    for (int i = 0; i < lookups; i++)
        *rule = lb_frame_rule(pc);
    return lb_frame_rule_misses() - before;
}

static __attribute__((noinline)) int rule_target(int x)
{
    sink += (uintptr_t)x;
    return (int)sink * 3 + x;
}

/* A rule is cached from its cache page's fourth miss in a process on (a
 * page a short process computes a rule or two on is never written), and
 * a fork child counts its own misses afresh while it reads what its
 * parent cached. */
static void test_rule_cached_from_a_pages_fourth_miss(void)
{
    ASSERT_GT(rule_target(1), 0);
    uintptr_t parents = (uintptr_t)rule_target + 1, childs = (uintptr_t)rule_target + 4;
    lb_frame_rule_t first, later;
    ASSERT_UEQ(misses_of(parents, 1, &first), 1);
    ASSERT_EQ(first.kind, LB_RULE_STEP);
    misses_of(parents, 3, &later); /* the page's fourth miss at the latest */
    ASSERT_UEQ(misses_of(parents, 5, &later), 0);
    ASSERT_EQ(later.kind, first.kind);
    ASSERT_EQ(later.cfa_off, first.cfa_off);
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    ASSERT_TRUE(pid >= 0);
    if (pid == 0) {
        lb_unwind_cfi_fork_child();
        uint64_t seen[3];
        seen[0] = misses_of(parents, 2, &later);
        seen[1] = misses_of(childs, 3, &later); /* the page's first three misses here */
        seen[2] = misses_of(childs, 5, &later); /* its fourth fills the slot */
        _exit(write(fds[1], seen, sizeof seen) == sizeof seen ? 0 : 1);
    }
    close(fds[1]);
    uint64_t seen[3] = { 9, 9, 9 };
    ASSERT_EQ(read(fds[0], seen, sizeof seen), (ssize_t)sizeof seen);
    close(fds[0]);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_UEQ(seen[0], 0);
    ASSERT_UEQ(seen[1], 3);
    ASSERT_UEQ(seen[2], 1);
}

CHECK_MAIN(test_here_walk_reports_every_call_site, test_signal_walk_reports_every_call_site,
           test_walk_stops_at_code_without_cfi, test_trace_lists_return_address_slots,
           test_rule_cached_from_a_pages_fourth_miss)
