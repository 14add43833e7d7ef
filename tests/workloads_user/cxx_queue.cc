// cxx_queue: two threads push into one mutex-guarded C++ queue, for
// tests/integration/summary_demangle.sh: the release site is the member
// function app::Queue::push(int), whose symbol is mangled. The program
// prints __PRETTY_FUNCTION__ of that function, so the test compares the
// summary with the compiler's own spelling of the name. The holder sleeps
// inside the lock, so the other thread waits on it even on a loaded machine.
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

namespace app
{
struct Queue {
    std::mutex m;
    long n = 0;
    static const char *name;
    __attribute__((noinline)) void push(int k)
    {
        name = __PRETTY_FUNCTION__;
        m.lock();
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        for (volatile int i = 0; i < 1000; i++)
            n += k;
        m.unlock();
        n += 0; // keeps the unlock a real call, not a tail jump
    }
};
const char *Queue::name;
} // namespace app

int main()
{
    app::Queue q;
    std::thread t([&] {
        for (int i = 0; i < 1000; i++)
            q.push(1);
    });
    for (int i = 0; i < 1000; i++)
        q.push(2);
    t.join();
    std::printf("%ld\n%s\n", q.n, app::Queue::name);
}
