// The cores other processes leave free (t3k/core/impl/free_cores.hpp): the arithmetic on given counts, and on Linux
// the counts themselves against threads this test keeps busy.
#include "t3k/core/impl/free_cores.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace {

using t3k::impl::threads_on_free_cores;

TEST(FreeCores, OtherProcessesRunnableThreadsTakeTheirCores) {
  // (runnable on the machine, processors, this process's runnable, pool threads)
  EXPECT_EQ(threads_on_free_cores(1, 2, 1, 2), 2) << "a quiet machine: every thread";
  EXPECT_EQ(threads_on_free_cores(2, 2, 1, 2), 1) << "one busy process on two cores: one core left";
  EXPECT_EQ(threads_on_free_cores(3, 2, 1, 2), 1) << "two busy processes: still one thread, never none";
  EXPECT_EQ(threads_on_free_cores(7, 2, 1, 2), 1);
  EXPECT_EQ(threads_on_free_cores(3, 2, 3, 2), 2) << "this process's own runnable threads are not others'";
  EXPECT_EQ(threads_on_free_cores(5, 16, 1, 16), 12) << "four others on sixteen cores";
  EXPECT_EQ(threads_on_free_cores(5, 16, 1, 8), 8) << "never more than the pool";
  EXPECT_EQ(threads_on_free_cores(40, 16, 1, 8), 1);
  EXPECT_EQ(threads_on_free_cores(-1, 2, 1, 2), 2) << "an unknown count leaves the pool";
  EXPECT_EQ(threads_on_free_cores(3, -1, 1, 2), 2);
  EXPECT_EQ(threads_on_free_cores(3, 2, -1, 2), 2);
}

TEST(FreeCores, ATestSettingWinsOverTheMachine) {
  int const before = t3k::impl::set_free_cores_override(1);
  EXPECT_EQ(t3k::impl::free_host_threads(8), 1);
  t3k::impl::set_free_cores_override(3);
  EXPECT_EQ(t3k::impl::free_host_threads(8), 3);
  EXPECT_EQ(t3k::impl::free_host_threads(2), 2) << "never more than the pool";
  t3k::impl::set_free_cores_override(before);
  int const read = t3k::impl::free_host_threads(2);
  EXPECT_GE(read, 1);
  EXPECT_LE(read, 2);
}

#if defined(__linux__)
// A thread of this process that spins until told to stop: runnable throughout, on a core or waiting for one.
class Spinner {
 public:
  Spinner()
      : thread_([this] {
          while (!stop_.load(std::memory_order_relaxed)) {
          }
        }) {}
  ~Spinner() {
    stop_ = true;
    thread_.join();
  }
  Spinner(Spinner const&) = delete;
  Spinner& operator=(Spinner const&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST(FreeCores, TheCountsSeeTheCallerAndABusyThread) {
  EXPECT_GE(t3k::impl::online_processors(), 1);
  EXPECT_GE(t3k::impl::runnable_threads_now(), 1) << "the calling thread runs";
  EXPECT_GE(t3k::impl::own_runnable_threads(), 1) << "the calling thread runs";
  Spinner spinner;
  // The spinner is runnable from its start; give it up to 5 s to be counted (a loaded machine may start it late).
  int own = 0, machine = 0;
  for (auto const end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
       (own < 2 || machine < 2) && std::chrono::steady_clock::now() < end;) {
    own = t3k::impl::own_runnable_threads();
    machine = t3k::impl::runnable_threads_now();
  }
  EXPECT_GE(own, 2) << "this process: the caller and the spinner";
  EXPECT_GE(machine, 2) << "the machine: at least this process's two";
}
#endif

}  // namespace
