/*
 * gt_cxx_guard: ground truth for release sites in C++ built with g++ -O2 -g
 * (docs/DESIGN.md rule 5): std::lock_guard, std::mutex, std::thread and
 * std::condition_variable, whose unlock/notify frames are inline frames
 * from the C++ runtime's headers (gthr-default.h, std_mutex.h).
 *
 * WORKERS std::threads loop until the deadline:
 *   record()   takes a std::lock_guard on `stats`, computes RECORD_HOLD:
 *              the guard's destructor at the closing brace releases, so the
 *              release site is record() (not the guard, not the caller);
 *   tally()    the same with TALLY_HOLD on the same mutex.
 * One more thread sleeps on a std::condition_variable until main notifies
 * it at the end, to show the cond path is named in the program too
 * (not checked: the structural-waits test covers parked threads).
 *
 * Ground truth as in tests/workloads/gt.h: each lock call is logged as a
 * wait, each hold [acquired, just before the guard's unlock] at its site;
 * the holders sweep gives the blame per site. The JSON names the source
 * file ("source") so the checker knows it is a .cc.
 *
 * Usage: gt_cxx_guard [WORKERS [DURATION_MS]]   (defaults 3 and 1000)
 */
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <time.h>
#include <vector>

namespace
{

enum {
    SITE_RECORD,
    SITE_TALLY,
    N_SITES
};
const char *const site_names[N_SITES] = { "record", "tally" };
constexpr int64_t RECORD_HOLD_NS = 80000, TALLY_HOLD_NS = 25000, THINK_NS = 40000;

int64_t now_ns()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void spin_until(int64_t t)
{
    while (now_ns() < t)
        ;
}

struct span {
    int64_t t0, t1;
    int site; // -1: a wait
};

struct thread_log {
    std::vector<span> s;
};

std::mutex stats;
long counts[N_SITES];
int64_t deadline;
std::atomic<int> ready{ 0 }, go{ 0 };

std::mutex park_m;
std::condition_variable park_cv;
bool done;

} // namespace

// The release is the guard's destructor at the closing brace.
__attribute__((noinline)) void record(thread_log &lg, long v)
{
    int64_t t0 = now_ns();
    std::lock_guard<std::mutex> guard(stats);
    int64_t t1 = now_ns();
    lg.s.push_back({ t0, t1, -1 });
    counts[SITE_RECORD] += v;
    spin_until(t1 + RECORD_HOLD_NS);
    lg.s.push_back({ t1, now_ns(), SITE_RECORD });
}

__attribute__((noinline)) void tally(thread_log &lg)
{
    int64_t t0 = now_ns();
    std::lock_guard<std::mutex> guard(stats);
    int64_t t1 = now_ns();
    lg.s.push_back({ t0, t1, -1 });
    counts[SITE_TALLY]++;
    spin_until(t1 + TALLY_HOLD_NS);
    lg.s.push_back({ t1, now_ns(), SITE_TALLY });
}

namespace
{

void worker(thread_log *lg)
{
    lg->s.reserve(1 << 16);
    ready++;
    while (!go.load())
        std::this_thread::yield();
    for (long i = 0; now_ns() < deadline; i++) {
        record(*lg, i);
        spin_until(now_ns() + THINK_NS);
        tally(*lg);
        timespec ts = { 0, THINK_NS };
        nanosleep(&ts, nullptr);
    }
}

void parked()
{
    std::unique_lock<std::mutex> lk(park_m);
    park_cv.wait(lk, [] { return done; });
}

struct event {
    int64_t t;
    int dw, site, dh;
    bool operator<(const event &o) const
    {
        return t != o.t ? t < o.t : dh < o.dh; // a release before an acquire
    }
};

} // namespace

int main(int argc, char **argv)
{
    int nworkers = argc > 1 ? atoi(argv[1]) : 3;
    int ms = argc > 2 ? atoi(argv[2]) : 1000;
    if (nworkers < 1 || nworkers > 16 || ms < 1) {
        fprintf(stderr, "usage: %s [WORKERS 1..16 [DURATION_MS]]\n", argv[0]);
        return 2;
    }
    std::vector<thread_log> logs(nworkers);
    std::thread helper(parked);
    std::vector<std::thread> threads;
    for (int i = 0; i < nworkers; i++)
        threads.emplace_back(worker, &logs[i]);
    while (ready.load() < nworkers)
        std::this_thread::yield();
    int64_t t0 = now_ns();
    deadline = t0 + (int64_t)ms * 1000000;
    go = 1;
    for (auto &t : threads)
        t.join();
    double duration = (double)(now_ns() - t0) / 1e9;
    {
        std::lock_guard<std::mutex> lk(park_m);
        done = true;
    }
    park_cv.notify_one();
    helper.join();

    // Holders sweep: w(t)/k to each holder's site; no holder: hand-off.
    std::vector<event> ev;
    double total = 0, handoff = 0, blame[N_SITES] = { 0 };
    long holds[N_SITES] = { 0 };
    for (auto &lg : logs)
        for (auto &s : lg.s) {
            if (s.site < 0) {
                ev.push_back({ s.t0, +1, -1, 0 });
                ev.push_back({ s.t1, -1, -1, 0 });
                total += (double)(s.t1 - s.t0);
            } else {
                ev.push_back({ s.t0, 0, s.site, +1 });
                ev.push_back({ s.t1, 0, s.site, -1 });
                holds[s.site]++;
            }
        }
    std::sort(ev.begin(), ev.end());
    int w = 0, k = 0, h[N_SITES] = { 0 };
    for (size_t i = 0; i < ev.size(); i++) {
        if (i > 0 && w > 0) {
            double acc = (double)w * (double)(ev[i].t - ev[i - 1].t);
            if (k == 0)
                handoff += acc;
            else
                for (int s = 0; s < N_SITES; s++)
                    blame[s] += acc * h[s] / k;
        }
        w += ev[i].dw;
        if (ev[i].site >= 0) {
            h[ev[i].site] += ev[i].dh;
            k += ev[i].dh;
        }
    }

    FILE *out = stdout;
    const char *gt = getenv("GROUND_TRUTH");
    if (gt && *gt && !(out = fopen(gt, "w"))) {
        perror(gt);
        return 1;
    }
    fprintf(out, "{\"workload\": \"gt_cxx_guard\", \"source\": \"gt_cxx_guard.cc\",");
    fprintf(out, " \"object\": \"mutex\", \"object_address\": %llu,\n",
            (unsigned long long)(uintptr_t)&stats);
    fprintf(out, " \"threads\": %d, \"duration_s\": %.6f,\n", nworkers, duration);
    fprintf(out, " \"total_wait_s\": %.9f, \"handoff_s\": %.9f,\n", total / 1e9, handoff / 1e9);
    fprintf(out, " \"sites\": {");
    for (int s = 0; s < N_SITES; s++)
        fprintf(out, "%s\"%s\": %.9f", s ? ", " : "", site_names[s], blame[s] / 1e9);
    fprintf(out, "},\n \"holds\": {");
    for (int s = 0; s < N_SITES; s++)
        fprintf(out, "%s\"%s\": %ld", s ? ", " : "", site_names[s], holds[s]);
    fprintf(out, "}}\n");
    if (out != stdout)
        fclose(out);
    return 0;
}
