// The library half of std_threads.cc: std::threads started inside a
// shared library, as db_bench's start inside librocksdb.so. One runs a
// function (flush_worker, exported as a C++ library's functions are),
// one a lambda of start_workers; both only sleep, so that no sample or
// wait of theirs tells what they ran.
#include <chrono>
#include <thread>
#include <vector>

namespace std_threads_lib
{

void flush_worker(int ms)
{
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

static std::vector<std::thread> *workers;

void start_workers()
{
    workers = new std::vector<std::thread>;
    workers->emplace_back(flush_worker, 40);
    workers->emplace_back([] { std::this_thread::sleep_for(std::chrono::milliseconds(30)); });
}

void join_workers()
{
    for (auto &t : *workers)
        t.join();
    delete workers;
}

} // namespace std_threads_lib
