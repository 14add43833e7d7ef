/* Unit tests for src/blame/holder_window.h: how much CPU time one timer
 * sample of a thread may owe to a hot mutex's hold. A thread's samples
 * and waits are played at chosen times (ns), and each sample's allowance
 * is checked against the rule: the CPU of the samples since the last one
 * outside a sampled mutex wait, at most the wall time since then spent
 * outside such waits; nothing inside one.
 */
#include "check.h"

#include "blame/holder_window.h"

#define MS 1000000ull

/* The first sample has nothing to bound it by: it may owe its own CPU. */
static void test_first_sample_whole(void)
{
    lb_holder_window_t w = { 0 };
    ASSERT_EQ(lb_holder_window_take(&w, 4 * MS, 100 * MS), 4 * MS);
    ASSERT_EQ(w.from_ns, 100 * MS);
    ASSERT_EQ(w.cpu_ns, 0);
}

/* A thread that ran throughout owes what its samples stood for. */
static void test_running_thread_unbounded(void)
{
    lb_holder_window_t w = { 0 };
    lb_holder_window_take(&w, 4 * MS, 100 * MS);
    ASSERT_EQ(lb_holder_window_take(&w, 4 * MS, 104 * MS), 4 * MS);
    ASSERT_EQ(lb_holder_window_take(&w, 4 * MS, 108 * MS), 4 * MS);
}

/* 3 ms of the 4 since the last sample went to sampled waits, whose
 * wake-ups the ticks never found: the next sample, in a hold, may owe
 * only the 1 ms outside them, not the 4 ms of CPU it stands for. */
static void test_waits_bound_the_next_sample(void)
{
    lb_holder_window_t w = { 0 };
    lb_holder_window_take(&w, 4 * MS, 100 * MS);
    lb_holder_window_waited(&w, 3 * MS);
    ASSERT_EQ(lb_holder_window_take(&w, 4 * MS, 104 * MS), 1 * MS);
}

/* A sample inside a sampled wait owes nothing and hands its CPU on to the
 * next sample outside one, which the wall time outside the waits since
 * the last such sample bounds. */
static void test_sample_in_wait_carries(void)
{
    lb_holder_window_t w = { 0 };
    lb_holder_window_take(&w, 4 * MS, 100 * MS);
    lb_holder_window_in_wait(&w, 1);
    ASSERT_EQ(lb_holder_window_take(&w, 4 * MS, 104 * MS), 0);
    ASSERT_EQ(w.cpu_ns, 4 * MS);
    ASSERT_EQ(w.from_ns, 100 * MS); /* the window goes on */
    lb_holder_window_waited(&w, 5 * MS);
    lb_holder_window_in_wait(&w, 0);
    /* 10 ms since the last sample outside, 5 in the wait: 8 ms of CPU, 5 allowed */
    ASSERT_EQ(lb_holder_window_take(&w, 4 * MS, 110 * MS), 5 * MS);
    /* and with 8 ms outside, all of it */
    lb_holder_window_in_wait(&w, 1);
    lb_holder_window_take(&w, 2 * MS, 112 * MS);
    lb_holder_window_waited(&w, 1 * MS);
    lb_holder_window_in_wait(&w, 0);
    ASSERT_EQ(lb_holder_window_take(&w, 3 * MS, 119 * MS), 5 * MS);
}

/* Waits that took all the wall time leave nothing to owe; a clock that
 * did not move leaves the sample unbounded. */
static void test_edges(void)
{
    lb_holder_window_t w = { 0 };
    lb_holder_window_take(&w, 1 * MS, 100 * MS);
    lb_holder_window_waited(&w, 9 * MS);
    ASSERT_EQ(lb_holder_window_take(&w, 4 * MS, 104 * MS), 0);
    ASSERT_EQ(lb_holder_window_take(&w, 2 * MS, 104 * MS), 2 * MS);
}

/* A fork child starts a window of its own: its parent's CPU is not its. */
static void test_fork_child_forgets(void)
{
    lb_holder_window_t w = { 0 };
    lb_holder_window_take(&w, 4 * MS, 100 * MS);
    lb_holder_window_in_wait(&w, 1);
    lb_holder_window_take(&w, 4 * MS, 104 * MS);
    lb_holder_window_fork_child(&w);
    ASSERT_EQ(w.in_wait, 0);
    ASSERT_EQ(lb_holder_window_take(&w, 1 * MS, 105 * MS), 1 * MS);
}

CHECK_MAIN(test_first_sample_whole, test_running_thread_unbounded, test_waits_bound_the_next_sample,
           test_sample_in_wait_carries, test_edges, test_fork_child_forgets)
