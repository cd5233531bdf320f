#pragma once
/// \file memory_tracking.hpp
/// Measures the bytes Kokkos allocates (current and peak, per memory space name) through the Kokkos Tools
/// allocation callbacks, independently of T3K's own accounting. Used by tests and benchmarks to check the memory
/// model against what is really allocated.
///
/// The execution spaces' own scratch pools (labels "Kokkos::...scratch..." / "...Scratch...", e.g.
/// "Kokkos::Serial::scratch_mem") are counted apart, in runtime_pool_bytes: Kokkos 4 grows them on first use of an
/// instance (a Kokkos Kernels team kernel on Kokkos 4.6's Serial backend adds 34848 bytes; J^T did so while its
/// Serial products missed the BLAS TPL, see kokkos_blas_gemm) and keeps them for later kernels, so they belong to
/// the runtime, not to the call that happened to be first.

#include "t3k/core/impl/kokkos_compat.hpp"

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

namespace t3k {

/// While alive, records every Kokkos allocation and deallocation. One tracker at a time per process; it chains to
/// nothing and restores empty callbacks when destroyed (do not combine with a loaded Kokkos Tools library).
/// **Blocking:** no. Thread-safe for concurrent allocations.
class AllocationTracker {
 public:
  AllocationTracker() {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.current.clear();
    s.peak.clear();
    s.count.clear();
    s.sizes.clear();
    s.pools.clear();
    Kokkos::Tools::Experimental::set_allocate_data_callback(&on_allocate);
    Kokkos::Tools::Experimental::set_deallocate_data_callback(&on_deallocate);
  }
  ~AllocationTracker() {
    Kokkos::Tools::Experimental::set_allocate_data_callback(nullptr);
    Kokkos::Tools::Experimental::set_deallocate_data_callback(nullptr);
  }
  AllocationTracker(AllocationTracker const&) = delete;
  AllocationTracker& operator=(AllocationTracker const&) = delete;

  /// Starts a new peak measurement from the bytes alive now (allocations made before stay counted in current()),
  /// and a new allocation count.
  void reset_peak() {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.peak = s.current;
    s.count.clear();
  }
  /// Bytes alive now in the memory space named `space_name` (e.g. Kokkos::HostSpace::name()), counted since the
  /// tracker was created (allocations made before it are not seen; their release is ignored).
  std::int64_t current(std::string const& space_name) const { return lookup(state().current, space_name); }
  /// The most bytes alive at once in that memory space since the tracker was created (or reset_peak was called).
  std::int64_t peak(std::string const& space_name) const { return lookup(state().peak, space_name); }
  /// Number of allocations made in that memory space since the tracker was created (or reset_peak was called
  /// last): what tests use to show that a loop over chunks or iterations allocates nothing per pass.
  std::int64_t allocations(std::string const& space_name) const { return lookup(state().count, space_name); }
  /// Bytes the Kokkos runtime allocated for execution-space scratch pools in that memory space while the tracker was
  /// alive (not in current, peak or allocations; see the file comment).
  std::int64_t runtime_pool_bytes(std::string const& space_name) const { return lookup(state().pools, space_name); }

  /// Whether an allocation label names a Kokkos execution space's scratch pool.
  static bool is_runtime_pool(char const* label) {
    return label != nullptr && std::strncmp(label, "Kokkos::", 8) == 0 &&
           (std::strstr(label, "scratch") != nullptr || std::strstr(label, "Scratch") != nullptr);
  }

 private:
  struct State {
    std::mutex mutex;
    std::map<std::string, std::int64_t> current, peak, count, pools;
    std::map<void const*, std::pair<std::string, std::int64_t>> sizes;
  };
  static State& state() {
    static State s;
    return s;
  }
  static std::int64_t lookup(std::map<std::string, std::int64_t> const& m, std::string const& key) {
    std::lock_guard<std::mutex> lock(state().mutex);
    auto it = m.find(key);
    return it == m.end() ? 0 : it->second;
  }
  static void on_allocate(Kokkos::Tools::SpaceHandle handle, char const* label, void const* ptr, std::uint64_t size) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    std::string const space(handle.name);
    if (is_runtime_pool(label)) {  // its release is ignored too: it is not in `sizes`
      s.pools[space] += std::int64_t(size);
      return;
    }
    s.sizes[ptr] = {space, std::int64_t(size)};
    std::int64_t& cur = s.current[space];
    cur += std::int64_t(size);
    std::int64_t& pk = s.peak[space];
    if (cur > pk) pk = cur;
    ++s.count[space];
  }
  static void on_deallocate(Kokkos::Tools::SpaceHandle, char const*, void const* ptr, std::uint64_t) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = s.sizes.find(ptr);
    if (it == s.sizes.end()) return;
    s.current[it->second.first] -= it->second.second;
    s.sizes.erase(it);
  }
};

}  // namespace t3k
