/*
 * gt_futex_cxx: C++20 waits that block in futex system calls made through
 * libc's syscall() (libstdc++'s headers and its futex.cc), each with one
 * culprit that makes three threads wait, built the way users build (g++
 * -std=c++20 -O2 -g). One scenario per run:
 *
 *   semaphore  3 threads acquire a std::counting_semaphore; slow_signaller
 *              computes, then releases it three times over
 *   latch      3 threads wait on a std::latch; slow_signaller computes,
 *              then counts it down
 *   barrier    3 threads arrive_and_wait at a std::barrier; slow_straggler
 *              computes, then arrives last
 *   atomic     3 threads wait on a std::atomic<int>; slow_signaller
 *              computes, stores 1 and calls notify_one three times
 *   future     3 threads get() a std::shared_future; slow_signaller
 *              computes, then sets the std::promise's value
 *
 * The waits and the wake are logged as futex_gt.h describes;
 * tests/lib/futex_truth.py turns the log into the ground truth.
 *
 * Usage: gt_futex_cxx SCENARIO [HOLD_MS]   (HOLD_MS default 150)
 */
#include <atomic>
#include <barrier>
#include <cstring>
#include <future>
#include <latch>
#include <semaphore>
#include <thread>
#include <vector>

#include "futex_gt.h"

std::counting_semaphore<FUTEX_GT_WAITERS> semaphore(0);
std::latch latch(1);
std::barrier<> barrier(FUTEX_GT_WAITERS + 1);
std::atomic<int> flag{ 0 };
std::promise<int> promise;
std::atomic<int> done{ 0 };

template <class Block> static void waiter(int i, Block block)
{
    fgt_arrive(i);
    block();
    fgt_returned(i);
    fgt_linger();
}

__attribute__((noinline)) void slow_signaller(const char *scenario)
{
    fgt_watch();
    fgt_await_blocked();
    gt_spin_until(gt_now() + fgt_hold_ns);
    if (strcmp(scenario, "atomic") == 0) {
        flag.store(1);
        for (int i = 0; i < FUTEX_GT_WAITERS; i++) {
            int wake = fgt_signal("slow_signaller");
            flag.notify_one();
            fgt_signalled(wake);
        }
    } else {
        int wake = fgt_signal("slow_signaller");
        if (strcmp(scenario, "semaphore") == 0)
            semaphore.release(FUTEX_GT_WAITERS);
        else if (strcmp(scenario, "latch") == 0)
            latch.count_down();
        else
            promise.set_value(42);
        fgt_signalled(wake);
    }
    done.fetch_add(1); /* (the wake is no tail call) */
}

__attribute__((noinline)) void slow_straggler()
{
    fgt_watch();
    fgt_await_blocked();
    gt_spin_until(gt_now() + fgt_hold_ns);
    int wake = fgt_signal("slow_straggler");
    barrier.arrive_and_wait();
    fgt_signalled(wake);
    done.fetch_add(1);
}

static int usage(const char *prog)
{
    return fgt_usage(prog, "semaphore|latch|barrier|atomic|future");
}

int main(int argc, char **argv)
{
    const char *scenario = fgt_args(argc, argv);
    if (!scenario)
        return usage(argv[0]);
    std::shared_future<int> future = promise.get_future().share();
    std::vector<std::thread> threads;
    int64_t start = gt_now();
    if (strcmp(scenario, "barrier") == 0) /* the culprit first: it watches the waiters arrive */
        threads.emplace_back(slow_straggler);
    else
        threads.emplace_back(slow_signaller, scenario);
    for (int i = 0; i < FUTEX_GT_WAITERS; i++) {
        if (strcmp(scenario, "semaphore") == 0)
            threads.emplace_back([i] { waiter(i, [] { semaphore.acquire(); }); });
        else if (strcmp(scenario, "latch") == 0)
            threads.emplace_back([i] { waiter(i, [] { latch.wait(); }); });
        else if (strcmp(scenario, "barrier") == 0)
            threads.emplace_back([i] { waiter(i, [] { barrier.arrive_and_wait(); }); });
        else if (strcmp(scenario, "atomic") == 0)
            threads.emplace_back([i] { waiter(i, [] { flag.wait(0); }); });
        else if (strcmp(scenario, "future") == 0)
            threads.emplace_back([i, future] { waiter(i, [&future] { future.get(); }); });
        else
            return usage(argv[0]);
    }
    for (auto &t : threads)
        t.join();
    return fgt_write("gt_futex_cxx", "gt_futex_cxx.cc", (double)(gt_now() - start) / 1e9, 0);
}
