/* Many distinct calling contexts, for the cost of writing the database at
 * exit. Leaf number i (0 <= i < LEAVES) is reached through a recursion of
 * depth ceil(log2 LEAVES) whose call site at level k is one of two,
 * chosen by bit k of i, so every leaf has its own call path; below that a
 * plain recursion of TAIL more frames gives each leaf TAIL nodes of its
 * own. Each leaf spins for SPIN_US of CPU so that a sample (run with a
 * sampling period a bit shorter than SPIN_US) lands in every leaf. About
 * TAIL + 3 CCT nodes per leaf result (the prefix tree adds ~2 per leaf).
 *
 *   cctgen LEAVES TAIL SPIN_US -> "end_mono_ns T", printed just before main
 *                                 returns (CLOCK_MONOTONIC; bench/spawn.c
 *                                 reads it and times the process exit) */
#include <stdint.h>

#include "bench.h"

static volatile unsigned sink;
static long spin_iters;

__attribute__((noinline)) static void leaf(void)
{
    for (long i = 0; i < spin_iters; i++)
        __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void tail(int left)
{
    if (left > 0)
        tail(left - 1);
    else
        leaf();
    sink = 5;
}

static int tail_depth;

__attribute__((noinline)) static void rec(int level, int depth, unsigned long idx)
{
    if (level == depth) {
        tail(tail_depth);
        sink = 0;
        return;
    }
    if ((idx >> level) & 1) {
        sink = 1;
        rec(level + 1, depth, idx);
        sink = 2;
    } else {
        sink = 3;
        rec(level + 1, depth, idx);
        sink = 4;
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s LEAVES TAIL SPIN_US\n", argv[0]);
        return 2;
    }
    unsigned long leaves = strtoul(argv[1], NULL, 10);
    tail_depth = atoi(argv[2]);
    double spin_us = atof(argv[3]);
    int depth = 0;
    while ((1ul << depth) < leaves)
        depth++;
    /* calibrate the leaf loop: the fastest of five 5M-iteration runs */
    spin_iters = 5000000;
    long long best = -1;
    for (int k = 0; k < 5; k++) {
        long long t0 = bench_now_ns();
        leaf();
        long long dt = bench_now_ns() - t0;
        if (best < 0 || dt < best)
            best = dt;
    }
    double per_us = 5e6 * 1000.0 / (double)(best > 0 ? best : 1);
    spin_iters = (long)(per_us * spin_us);
    for (unsigned long i = 0; i < leaves; i++)
        rec(0, depth, i);
    printf("depth %d\n", depth + tail_depth);
    printf("end_mono_ns %lld\n", bench_now_ns());
    fflush(stdout);
    return 0;
}
