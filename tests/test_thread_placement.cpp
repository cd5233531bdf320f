// Where Kokkos' host threads start and stop (t3k/core/kokkos_scope.hpp, impl/thread_placement.hpp): a thread started
// while the caller is pinned runs on the caller's core, both get the caller's mask back on release, gather pins them
// to one core again, threads that existed before are never touched, and a user's request for thread binding leaves
// everything alone. Linux only (affinity masks).
#if defined(__linux__)

#include "t3k/core/kokkos_scope.hpp"

#include <gtest/gtest.h>

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace {

using t3k::impl::ThreadPlacement;

cpu_set_t mask_of(int thread) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  EXPECT_EQ(::sched_getaffinity(thread, sizeof mask, &mask), 0) << "thread " << thread;
  return mask;
}

bool same(cpu_set_t a, cpu_set_t b) { return CPU_EQUAL(&a, &b); }

bool only_core(cpu_set_t const& mask, int core) { return CPU_COUNT(&mask) == 1 && CPU_ISSET(core, &mask); }

/// The masks of every thread of the process now.
std::map<int, cpu_set_t> masks_of_all_threads() {
  std::map<int, cpu_set_t> masks;
  for (int const id : t3k::impl::process_thread_ids()) masks[id] = mask_of(id);
  return masks;
}

/// A thread that records its id and mask when it starts, then waits until told to end.
class WaitingThread {
 public:
  WaitingThread()
      : thread_([this] {
          std::unique_lock<std::mutex> lock(mutex_);
          id_ = int(::syscall(SYS_gettid));
          mask_at_start_ = mask_of(0);
          core_at_start_ = ::sched_getcpu();
          changed_.notify_all();
          changed_.wait(lock, [this] { return end_; });
        }) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return id_ != 0; });
  }
  ~WaitingThread() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      end_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  int id() const { return id_; }
  cpu_set_t const& mask_at_start() const { return mask_at_start_; }
  int core_at_start() const { return core_at_start_; }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int id_ = 0;
  int core_at_start_ = -1;
  cpu_set_t mask_at_start_{};
  bool end_ = false;
  std::thread thread_;
};

TEST(ThreadPlacement, BindingTheUserAskedForIsLeftAlone) {
  auto requested = [](std::map<std::string, std::string> const& env) {
    return t3k::impl::thread_binding_requested([&env](char const* name) -> char const* {
      auto const it = env.find(name);
      return it == env.end() ? nullptr : it->second.c_str();
    });
  };
  EXPECT_FALSE(requested({}));
  EXPECT_FALSE(requested({{"OMP_PROC_BIND", "false"}}));
  EXPECT_FALSE(requested({{"OMP_PROC_BIND", "FALSE"}, {"OMP_NUM_THREADS", "2"}}));
  EXPECT_FALSE(requested({{"OMP_PROC_BIND", "False"}}));
  for (char const* bind : {"true", "close", "spread", "master", "primary", "spread,close"}) {
    EXPECT_TRUE(requested({{"OMP_PROC_BIND", bind}})) << bind;
  }
  EXPECT_TRUE(requested({{"OMP_PLACES", "cores"}}));
  EXPECT_TRUE(requested({{"OMP_PROC_BIND", "false"}, {"OMP_PLACES", "threads"}}));
  EXPECT_TRUE(requested({{"GOMP_CPU_AFFINITY", "0-3"}}));
  EXPECT_TRUE(requested({{"KMP_AFFINITY", "compact"}}));
}

TEST(ThreadPlacement, ThreadsStartOnTheCallersCoreAndGetItsMaskBack) {
  cpu_set_t const mask = mask_of(0);
  if (CPU_COUNT(&mask) < 2) GTEST_SKIP() << "this process may run on one core only: nothing to place";
  auto const before = masks_of_all_threads();  // the test program's own threads (Kokkos' pool among them)

  ThreadPlacement placement(true);
  ASSERT_TRUE(placement.active());
  cpu_set_t const pinned = mask_of(0);
  ASSERT_EQ(CPU_COUNT(&pinned), 1);
  int core = 0;
  while (!CPU_ISSET(core, &pinned)) ++core;
  {
    WaitingThread started;
    EXPECT_TRUE(only_core(started.mask_at_start(), core));
    EXPECT_EQ(started.core_at_start(), core);

    placement.release();
    EXPECT_EQ(placement.started_threads(), std::vector<int>{started.id()});
    EXPECT_TRUE(same(mask, mask_of(0)));
    EXPECT_TRUE(same(mask, mask_of(started.id())));

    placement.gather();
    int const now = ::sched_getcpu();
    EXPECT_TRUE(only_core(mask_of(0), now));
    EXPECT_TRUE(only_core(mask_of(started.id()), now));

    placement.restore_caller();
    EXPECT_TRUE(same(mask, mask_of(0)));
  }
  for (auto const& [id, old] : before) {
    if (id == int(::syscall(SYS_gettid))) continue;
    EXPECT_TRUE(same(old, mask_of(id))) << "thread " << id << " existed before and was moved";
  }
}

TEST(ThreadPlacement, DisabledPlacementMovesNothing) {
  cpu_set_t const mask = mask_of(0);
  ThreadPlacement placement(false);
  EXPECT_FALSE(placement.active());
  WaitingThread started;
  EXPECT_TRUE(same(mask, started.mask_at_start()));
  placement.release();
  EXPECT_TRUE(placement.started_threads().empty());
  placement.gather();
  EXPECT_TRUE(same(mask, mask_of(0)));
  EXPECT_TRUE(same(mask, mask_of(started.id())));
  placement.restore_caller();
  EXPECT_TRUE(same(mask, mask_of(0)));
}

// The test program started Kokkos before: a scope then leaves it running, moves no thread and, asked to end the
// idle pool threads, ends none (they are not its own).
TEST(KokkosScope, LeavesAKokkosStartedBeforeAlone) {
  ASSERT_TRUE(Kokkos::is_initialized());
  auto const before = masks_of_all_threads();
  for (auto const idle : {t3k::IdleHostThreads::kept, t3k::IdleHostThreads::released}) {
    {
      int argc = 1;
      char name[] = "t3k_test";
      char* argv[] = {name, nullptr};
      t3k::KokkosScope scope(argc, argv, idle);
      EXPECT_TRUE(Kokkos::is_initialized());
    }
    EXPECT_TRUE(Kokkos::is_initialized());
    auto const after = masks_of_all_threads();
    for (auto const& [id, old] : before) {
      ASSERT_EQ(after.count(id), 1u) << "thread " << id << " ended";
      EXPECT_TRUE(same(old, after.at(id))) << "thread " << id << " was moved";
    }
  }
}

}  // namespace

#endif  // defined(__linux__)
