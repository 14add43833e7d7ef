/* What one CPU sample costs: CFI walk (sampler/unwind.c) + CCT insert, at call depth 10
 * and 30, and the whole handler including the kernel's signal delivery.
 * Prints figures; never passes or fails. Not wired into make. Build:
 *
 *   make build/obj/src/sampler/cct.o   # or compile the sources directly:
 *   gcc -std=gnu11 -O2 -g -D_GNU_SOURCE -Isrc -pthread -fno-omit-frame-pointer \
 *       -fno-optimize-sibling-calls bench/sample_cost.c src/sampler/STAR.c \
 *       src/util/STAR.c -lpfm -ldl -lrt -o /tmp/sample_cost
 *   (STAR being the shell's glob star) and run /tmp/sample_cost [ITERATIONS]
 *
 * Figures (depth = frames on the stack, main and libc's start included):
 *  - signal: lb_unwind_signal + lb_cct_insert inside a real signal handler
 *    (what the sampling handler does), warm frame-rule cache, path
 *    already in the CCT;
 *  - here: lb_unwind_here + lb_cct_insert (a release-site unwind);
 *  - first: the same, the first time (cold trace cache, new CCT nodes);
 *  - handler: tgkill of the sampling signal to ourselves, minus tgkill of a
 *    signal whose handler is empty = the sampling handler's own cost;
 *  - fallback: lb_unwind_signal from a getcontext() context instead of a
 *    signal's (the same walk since the CFI unwinder; libunwind used to take
 *    a slow unw_step path here).
 * The sampler is linked into this executable, so no frame counts as
 * lockblame's own; every frame is walked and kept. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/thread.h"
#include "sampler/cct.h"
#include "sampler/foreign.h"
#include "sampler/sampler.h"
#include "sampler/unwind.h"
#include "util/clock.h"
#include "util/pages.h"

/* stubs for src/interpose */
LB_TLS lb_thread_t *lb_self;

/* stubs for src/sampler/foreign.c (which needs core's registry): no raw
 * clones here, the one thread is its own record */
lb_thread_t *lb_thread_foreign(lb_thread_t *self, bool may_attach)
{
    return self;
}
void lb_foreign_sampled(lb_thread_t *t)
{
}
bool lb_foreign_ended(lb_thread_t *t)
{
    return false;
}
static lb_thread_t *registry;
lb_thread_t *lb_thread_registry(void)
{
    return registry;
}

typedef void (*bottom_fn)(void *arg);

static long iterations = 200000;

struct walk_result {
    double signal_ns, here_ns, first_signal_ns, first_here_ns, handler_ns, slow_ns;
    int frames;
};

static void empty_handler(int sig)
{
    (void)sig;
}

static double ns_per(uint64_t t0, uint64_t t1, long n)
{
    return (double)(t1 - t0) / (double)n;
}

static struct walk_result *current;

/* SIGUSR2 at the bottom of the recursion: time the walk the sampling
 * handler does, from this real signal context, many times over. */
static void walk_handler(int sig, siginfo_t *info, void *ucontext)
{
    struct walk_result *r = current;
    lb_thread_t *t = lb_self;
    uintptr_t pcs[LB_MAX_DEPTH];
    bool in_sync;
    uint64_t t0 = lb_now_ns();
    int n = lb_unwind_signal(ucontext, pcs, LB_MAX_DEPTH, &in_sync);
    lb_cct_insert(t->cct, pcs, n);
    uint64_t t1 = lb_now_ns();
    r->first_signal_ns = (double)(t1 - t0);
    r->frames = n;
    t0 = lb_now_ns();
    for (long i = 0; i < iterations; i++) {
        n = lb_unwind_signal(ucontext, pcs, LB_MAX_DEPTH, &in_sync);
        lb_cct_insert(t->cct, pcs, n)->m.work_samples++;
    }
    t1 = lb_now_ns();
    r->signal_ns = ns_per(t0, t1, iterations);
}

static void measure_at_bottom(void *arg)
{
    struct walk_result *r = arg;
    lb_thread_t *t = lb_self;
    uintptr_t pcs[LB_MAX_DEPTH];
    bool in_sync;
    int n;
    pid_t pid = getpid(), tid = gettid();

    current = r;
    syscall(SYS_tgkill, pid, tid, SIGUSR2);

    uint64_t t0 = lb_now_ns();
    n = lb_unwind_here(pcs, LB_MAX_DEPTH);
    lb_cct_insert(t->cct, pcs, n);
    uint64_t t1 = lb_now_ns();
    r->first_here_ns = (double)(t1 - t0);
    t0 = lb_now_ns();
    for (long i = 0; i < iterations; i++) {
        n = lb_unwind_here(pcs, LB_MAX_DEPTH);
        lb_cct_insert(t->cct, pcs, n)->m.work_samples++;
    }
    t1 = lb_now_ns();
    r->here_ns = ns_per(t0, t1, iterations);

    /* A context from getcontext rather than a signal: the same walk. */
    ucontext_t uc;
    getcontext(&uc);
    long k = iterations / 20 + 1;
    t0 = lb_now_ns();
    for (long i = 0; i < k; i++) {
        n = lb_unwind_signal(&uc, pcs, LB_MAX_DEPTH, &in_sync);
        lb_cct_insert(t->cct, pcs, n)->m.work_samples++;
    }
    t1 = lb_now_ns();
    r->slow_ns = ns_per(t0, t1, k);

    /* the real handler vs an empty one, both delivered by tgkill; the best
     * of several alternating rounds, since the machine may be noisy */
    int sig = lb_sampler_signal();
    k = iterations / 20 + 1;
    double best_with = 1e18, best_without = 1e18;
    uint64_t before = t->sampler->samples;
    for (int round = 0; round < 7; round++) {
        t0 = lb_now_ns();
        for (long i = 0; i < k; i++)
            syscall(SYS_tgkill, pid, tid, sig);
        t1 = lb_now_ns();
        if (ns_per(t0, t1, k) < best_with)
            best_with = ns_per(t0, t1, k);
        t0 = lb_now_ns();
        for (long i = 0; i < k; i++)
            syscall(SYS_tgkill, pid, tid, SIGUSR1);
        t1 = lb_now_ns();
        if (ns_per(t0, t1, k) < best_without)
            best_without = ns_per(t0, t1, k);
    }
    if (t->sampler->samples - before < (uint64_t)(7 * k) / 2)
        fprintf(stderr, "warning: only %llu of %ld signals were recorded\n",
                (unsigned long long)(t->sampler->samples - before), 7 * k);
    r->handler_ns = best_with - best_without;
}

/* Recursion that stays a real call chain (no tail calls, no inlining). */
__attribute__((noinline)) static void descend(int depth, bottom_fn fn, void *arg)
{
    if (depth <= 0)
        fn(arg);
    else
        descend(depth - 1, fn, arg);
    __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
    if (argc > 1)
        iterations = atol(argv[1]);
    if (lb_sampler_setup() < 0) {
        fprintf(stderr, "sampling unavailable; the handler figure will be missing\n");
    }
    signal(SIGUSR1, empty_handler);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = walk_handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR2, &sa, NULL);
    lb_thread_t *t = lb_pages_alloc(sizeof *t);
    t->cct = lb_pages_alloc(sizeof *t->cct);
    t->sampler = lb_pages_alloc(sizeof *t->sampler);
    if (!t || !t->cct || !t->sampler || lb_cct_init(t->cct) < 0)
        return 1;
    t->sampler->perf_fd = -1;
    registry = t;
    lb_self = t;
    /* The program frames under main: main, __libc_start_call_main,
     * __libc_start_main, _start, plus descend() and the bottom function. */
    printf("event %s; %ld iterations\n", lb_sampler_event_name(), iterations);
    printf("%6s %7s %10s %10s %13s %13s %11s %13s\n", "depth", "frames", "signal ns", "here ns",
           "first sig ns", "first here ns", "handler ns", "fallback ns");
    static const int depths[] = { 10, 30, 100 };
    for (unsigned i = 0; i < sizeof depths / sizeof depths[0]; i++) {
        struct walk_result r;
        /* depth counts every frame on the stack, main and libc start included */
        descend(depths[i] - 6, measure_at_bottom, &r);
        printf("%6d %7d %10.0f %10.0f %13.0f %13.0f %11.0f %13.0f\n", depths[i], r.frames,
               r.signal_ns, r.here_ns, r.first_signal_ns, r.first_here_ns, r.handler_ns, r.slow_ns);
    }
    printf("CCT nodes %u, dropped %llu\n", t->cct->nodes, (unsigned long long)t->sampler->dropped);
    return 0;
}
