// std::threads started in a shared library (lib/std_threads_lib.cc,
// libstd_threads.so beside this program): --by-thread must name each by
// what it ran, not by libstdc++'s thread start.
namespace std_threads_lib
{
void start_workers();
void join_workers();
} // namespace std_threads_lib

int main()
{
    std_threads_lib::start_workers();
    std_threads_lib::join_workers();
    return 0;
}
