// The small-kernel dispatch (t3k/core/impl/small_kernels.hpp): on Serial and OpenMP, kernels whose work is below
// the threshold run as plain loops on the calling thread. They must visit every index once, give the same bits as
// when launched, and launch nothing; spaces that always launch (device backends, host spaces on the device code
// paths) must launch exactly as with the threshold at 0.
#include "frame_reference.hpp"
#include "test_devices.hpp"

#include "t3k/algorithms/apply_derivatives_transpose.hpp"
#include "t3k/algorithms/estimate_chunk_size.hpp"
#include "t3k/algorithms/gauge_projection.hpp"
#include "t3k/algorithms/impl/host/host_blocks.hpp"
#include "t3k/algorithms/probe_derivatives.hpp"
#include "t3k/algorithms/probe_derivatives_transpose.hpp"
#include "t3k/algorithms/random_t3.hpp"
#include "t3k/algorithms/tangent_probe_derivatives.hpp"
#include "t3k/algorithms/tangent_to_t3.hpp"
#include "t3k/algorithms/variation_operations.hpp"
#include "t3k/core/impl/free_cores.hpp"
#include "t3k/core/impl/host_random.hpp"
#include "t3k/core/impl/ordered_sum.hpp"
#include "t3k/core/impl/small_kernels.hpp"
#include "t3k/core/launch_counting.hpp"
#include "t3k/optimizers/newton_cg.hpp"
#include "t3k/optimizers/planted_problem.hpp"

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace {

using namespace t3k_test;

constexpr std::size_t every_kernel_launched = 0;
constexpr std::size_t no_kernel_launched = std::numeric_limits<std::size_t>::max();

/// Sets the small-kernel threshold for its lifetime.
class ThresholdScope {
 public:
  explicit ThresholdScope(std::size_t threshold) : previous_(t3k::impl::set_inline_work_threshold(threshold)) {}
  ~ThresholdScope() { t3k::impl::set_inline_work_threshold(previous_); }
  ThresholdScope(ThresholdScope const&) = delete;
  ThresholdScope& operator=(ThresholdScope const&) = delete;

 private:
  std::size_t previous_;
};

/// Sets the free cores that host regions see (free_cores.hpp) for its lifetime; many_free_cores gives every region
/// its whole pool whatever the machine's load.
class FreeCoresScope {
 public:
  explicit FreeCoresScope(int cores) : previous_(t3k::impl::set_free_cores_override(cores)) {}
  ~FreeCoresScope() { t3k::impl::set_free_cores_override(previous_); }
  FreeCoresScope(FreeCoresScope const&) = delete;
  FreeCoresScope& operator=(FreeCoresScope const&) = delete;

 private:
  int previous_;
};
constexpr int many_free_cores = 1 << 20;

/// Adds e + 1 to entry e (the row-major position of the index) at every index of the extents: an index visited twice
/// or never leaves another value than e + 1.
template <class C, std::size_t R>
std::vector<double> visit_counts(int const (&extents)[R]) {
  typename C::execution_space space;
  std::size_t size = 1;
  for (int e : extents) size *= std::size_t(e);
  Kokkos::View<double*, typename C::memory_space> v("visits", size);
  int n[4] = {1, 1, 1, 1};
  for (std::size_t r = 0; r < R; ++r) n[4 - R + r] = extents[r];
  auto const code = [=] KOKKOS_FUNCTION(int i, int j, int k, int l) { return ((i * n[1] + j) * n[2] + k) * n[3] + l; };
  if constexpr (R == 1) {
    t3k::impl::for_each_index(
        space, "t3k_test::visits", extents, 1, KOKKOS_LAMBDA(int l) { v(code(0, 0, 0, l)) += code(0, 0, 0, l) + 1; });
  } else if constexpr (R == 2) {
    t3k::impl::for_each_index(
        space, "t3k_test::visits", extents, 1,
        KOKKOS_LAMBDA(int k, int l) { v(code(0, 0, k, l)) += code(0, 0, k, l) + 1; });
  } else if constexpr (R == 3) {
    t3k::impl::for_each_index(
        space, "t3k_test::visits", extents, 1,
        KOKKOS_LAMBDA(int j, int k, int l) { v(code(0, j, k, l)) += code(0, j, k, l) + 1; });
  } else {
    t3k::impl::for_each_index(
        space, "t3k_test::visits", extents, 1,
        KOKKOS_LAMBDA(int i, int j, int k, int l) { v(code(i, j, k, l)) += code(i, j, k, l) + 1; });
  }
  space.fence();
  return flat_host(v);
}

template <class C, std::size_t R>
void expect_every_index_once(int const (&extents)[R]) {
  for (std::size_t threshold : {every_kernel_launched, no_kernel_launched}) {
    ThresholdScope scope(threshold);
    auto const v = visit_counts<C>(extents);
    for (std::size_t e = 0; e < v.size(); ++e) {
      ASSERT_EQ(v[e], double(e + 1)) << "rank " << R << ", entry " << e << ", threshold " << threshold;
    }
  }
}

// Odd extents, size 1 and a rank-1 range, launched and on the calling thread.
template <class C>
void for_each_index_visits_every_index_once() {
  expect_every_index_once<C>({7});
  expect_every_index_once<C>({3, 5});
  expect_every_index_once<C>({2, 1, 5});
  expect_every_index_once<C>({3, 2, 1, 5});
  expect_every_index_once<C>({1});
}

template <class View>
std::vector<std::uint64_t> bits_of(View const& v) {
  auto const h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
  std::vector<std::uint64_t> out;
  auto const* p = h.data();
  for (std::size_t e = 0; e < h.span(); ++e) {
    double const x = double(p[e]);
    std::uint64_t b = 0;
    std::memcpy(&b, &x, sizeof b);
    out.push_back(b);
  }
  return out;
}

template <class S, class M>
std::vector<std::uint64_t> bits_of(t3k::TuckerTensorTrain<S, M> const& x) {
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i < x.n_modes(); ++i) {
    for (auto b : bits_of(x.tucker_core(i))) out.push_back(b);
    for (auto b : bits_of(x.tt_core(i))) out.push_back(b);
  }
  return out;
}

struct FitBits {
  std::vector<std::uint64_t> model;
  std::vector<double> losses;
  std::vector<std::size_t> ranks;
};

// A rank-continuation newton_cg fit at small ranks (every routed kernel: variation axpys, scales and dots, gauge
// projections, retractions, frames, J and J^T) from rank 1, in the given threshold.
template <class C>
FitBits small_fit(std::size_t threshold) {
  using S = typename C::scalar_type;
  ThresholdScope scope(threshold);
  typename C::execution_space space;
  auto const truth = t3k::random_t3<S>(space, {4, 5, 3, 4}, {2, 3, 2, 2}, {1, 2, 3, 2, 1}, 41);
  auto const problem = t3k::make_planted_problem(space, truth, 90, 1, 0.0, 42);
  auto const x0 = t3k::random_t3<S>(space, {4, 5, 3, 4}, {1, 1, 1, 1}, {1, 1, 1, 1, 1}, 43);
  t3k::NewtonCgOptions o;
  o.common.max_iterations = 12;
  o.common.continuation.max_tucker_ranks = {3, 3, 3, 3};
  o.common.continuation.max_tt_ranks = {1, 3, 3, 3, 1};
  o.common.continuation.stage_iterations = 4;
  o.cg_max_iterations = 20;
  auto const fit = t3k::newton_cg(space, problem, x0, o);
  FitBits out;
  out.model = bits_of(fit.x);
  for (auto const& h : fit.history) out.losses.push_back(h.loss);
  out.ranks = fit.x.tucker_ranks();
  return out;
}

template <class C>
void fit_is_bitwise_the_same_inline_and_launched() {
  auto const launched = small_fit<C>(every_kernel_launched);
  auto const inline_run = small_fit<C>(no_kernel_launched);
  auto const by_default = small_fit<C>(t3k::impl::default_inline_work_threshold);
  ASSERT_GT(launched.losses.size(), 2u) << "the fit must take steps";
  EXPECT_EQ(launched.ranks, inline_run.ranks);
  EXPECT_EQ(launched.losses, inline_run.losses) << "every loss of the history, bitwise";
  EXPECT_EQ(launched.model, inline_run.model) << "the fitted cores, bitwise";
  EXPECT_EQ(launched.losses, by_default.losses);
  EXPECT_EQ(launched.model, by_default.model);
}

// The operations a fit runs most often (docs/performance.md, "Running beside other work"), on a variation of a few
// dozen entries per core.
template <class C>
std::int64_t small_operation_launches(std::size_t threshold) {
  using S = typename C::scalar_type;
  using Mem = typename C::memory_space;
  ThresholdScope scope(threshold);
  typename C::execution_space space;
  auto const f = random_frame<S, Mem>(space, frame_shape_cases()[0], 51);
  auto const x = random_variation_for_test(space, f, 1, 52);
  auto const y = random_variation_for_test(space, f, 1, 53);
  space.fence();
  t3k::LaunchCounter counter;
  auto z = t3k::zero_variation<S>(space, f, 1);
  t3k::axpy_variation(space, S(0.5), x, z);
  t3k::scale_variation(space, S(2), z);
  double const dot = double(t3k::variation_dot(space, y, z));
  t3k::gauge_project_in_place(space, f, z);
  auto const t3 = t3k::tangent_to_t3(space, f, z);
  space.fence();
  std::int64_t const kernels = counter.kernels();
  EXPECT_EQ(dot, double(t3k::variation_dot(space, y, x))) << "z = x (0.5 then 2 are exact)";
  EXPECT_EQ(t3.n_modes(), f.n_modes());
  return kernels;
}

template <class C>
void small_operations_launch_no_kernel() {
  using Space = typename C::execution_space;
  std::int64_t const launched = small_operation_launches<C>(every_kernel_launched);
  std::int64_t const by_default = small_operation_launches<C>(t3k::impl::default_inline_work_threshold);
  // zero, axpy, scale and tangent_to_t3: 2 per mode; the dot: 2 per core and one fill; the projection: 4 per mode,
  // 2 for the last.
  std::int64_t const d = std::int64_t(frame_shape_cases()[0].big_n.size());
  EXPECT_GE(launched, 4 * 2 * d + 2 * 2 * d + 1 + 4 * d - 2) << "the counter must see every launched kernel";
  if (t3k::impl::may_run_inline<Space>()) {
    EXPECT_EQ(by_default, 0) << "kernels of a few dozen entries run on the calling thread";
  } else {
    EXPECT_EQ(by_default, launched) << "this space launches every kernel whatever the threshold";
  }
}

/// Sets how the sweeps' row ranges pick their threads for its lifetime (row_range_threads.hpp).
class RowRangeThreadsScope {
 public:
  explicit RowRangeThreadsScope(t3k::impl::RowRangeThreads mode) : previous_(t3k::impl::set_row_range_threads(mode)) {}
  ~RowRangeThreadsScope() { t3k::impl::set_row_range_threads(previous_); }
  RowRangeThreadsScope(RowRangeThreadsScope const&) = delete;
  RowRangeThreadsScope& operator=(RowRangeThreadsScope const&) = delete;

 private:
  t3k::impl::RowRangeThreads previous_;
};

// The shapes of sweep_outputs: block products large enough for the BLAS to use threads of its own (64 x 256 x 16 and
// up), over three blocks of probes.
std::vector<std::size_t> const sweep_big_n{40, 64, 48, 40}, sweep_n{16, 16, 16, 12}, sweep_r{1, 16, 24, 12, 1};
constexpr std::size_t sweep_order = 2;

// Every output of the sweeps (probe jets, J, summed and per-probe J^T of probes and applies) at the shapes above.
template <class C>
std::vector<std::vector<std::uint64_t>> sweep_outputs(t3k::impl::RowRangeThreads mode, int free_cores) {
  using S = typename C::scalar_type;
  using Mem = typename C::memory_space;
  using Probe = Kokkos::View<S**, Kokkos::LayoutRight, Mem>;
  RowRangeThreadsScope scope(mode);
  FreeCoresScope cores(free_cores);
  typename C::execution_space space;
  auto const &big_n = sweep_big_n, &n = sweep_n, &r = sweep_r;
  std::size_t const k = sweep_order, w = 3 * block_of<C>() - 5;
  auto const sh = t3k::impl::frame_shapes_of_t3("test", big_n, n, r);
  auto const f = random_frame<S, Mem>(space, FrameShapeCase{sh.big_n, sh.nu, sh.no, sh.rl, sh.rr}, 61);
  auto const x = t3k::random_t3<S>(space, big_n, n, r, 62);
  auto const v = random_variation_for_test(space, f, 1, 63);
  t3k::impl::HostNormalGenerator gen(64);
  auto fill = [&](auto view) {
    auto h = Kokkos::create_mirror_view(view);
    for (std::size_t e = 0; e < h.span(); ++e) h.data()[e] = S(gen.normal());
    Kokkos::deep_copy(view, h);
    return view;
  };
  std::vector<Probe> ww, pp;
  std::vector<Kokkos::View<S***, Kokkos::LayoutRight, Mem>> residuals;
  for (std::size_t i = 0; i < big_n.size(); ++i) {
    ww.push_back(fill(Probe("w", w, big_n[i])));
    pp.push_back(fill(Probe("p", w, big_n[i])));
    residuals.push_back(fill(Kokkos::View<S***, Kokkos::LayoutRight, Mem>("r", w, k + 1, big_n[i])));
  }
  std::vector<std::vector<std::uint64_t>> out;
  for (auto const& jets : t3k::probe_derivatives(space, x, ww, pp, k)) out.push_back(bits_of(jets));
  for (auto const& jets : t3k::tangent_probe_derivatives(space, f, v, ww, pp, k)) out.push_back(bits_of(jets));
  // J^T of probes and of applies (the scalar kinds' sweep), automatic chunks and all rows at once: on one free core
  // both run in passes of the free threads' share (rows_of_next_pass), the latter with a tail that is no whole block.
  Kokkos::View<S***, Kokkos::LayoutRight, Mem> apply_residuals("r", 2, w, k + 1);
  fill(apply_residuals);
  auto add_variation = [&](t3k::T3Variation<S, Mem> const& g) {
    for (std::size_t i = 0; i < big_n.size(); ++i) {
      out.push_back(bits_of(g.tucker[i]));
      out.push_back(bits_of(g.tt[i]));
    }
  };
  for (auto chunk : {t3k::ChunkSize::automatic(), t3k::ChunkSize::none()}) {
    for (bool summed : {true, false}) {
      add_variation(t3k::probe_derivatives_transpose(space, f, ww, pp, residuals, {summed, chunk}));
      add_variation(t3k::apply_derivatives_transpose(space, f, ww, pp, apply_residuals, {summed, chunk}));
    }
  }
  return out;
}

template <class C>
void row_ranges_give_the_same_bits_on_one_thread_and_all() {
  if (!t3k::impl::spreads_blocks_over_threads(typename C::execution_space{})) {
    GTEST_SKIP() << "the sweeps' row ranges run on one thread on this space (Serial, or the device code paths)";
  }
  auto const all = sweep_outputs<C>(t3k::impl::RowRangeThreads::all, many_free_cores);
  auto const alone = sweep_outputs<C>(t3k::impl::RowRangeThreads::alone, many_free_cores);
  auto const automatic = sweep_outputs<C>(t3k::impl::RowRangeThreads::automatic, many_free_cores);
  // One free core: every region of the sweeps and of the summed J^T's column slabs on the calling thread.
  auto const one_core = sweep_outputs<C>(t3k::impl::RowRangeThreads::all, 1);
  // On one free core the probes' J^T takes its chunks in several passes (rows_of_next_pass): the one-thread cap of
  // its workspace is below the three blocks of probes.
  auto const sh = t3k::impl::frame_shapes_of_t3("test", sweep_big_n, sweep_n, sweep_r);
  auto const bytes = t3k::impl::transpose_layout_bytes<typename C::scalar_type>(
      t3k::MeasurementKind::probes, sh, 1, t3k::impl::general_jet_length(sweep_order, sh.d()), false, block_of<C>());
  EXPECT_LT(t3k::impl::host_chunk_cap_on(bytes.sweep_per_row, bytes.assembly_per_row, 3 * block_of<C>() - 5, 1),
            3 * block_of<C>() - 5);
  ASSERT_EQ(all.size(), alone.size());
  ASSERT_EQ(all.size(), one_core.size());
  for (std::size_t o = 0; o < all.size(); ++o) {
    EXPECT_EQ(all[o], alone[o]) << "output " << o;
    EXPECT_EQ(all[o], automatic[o]) << "output " << o;
    EXPECT_EQ(all[o], one_core[o]) << "output " << o << ", one free core";
  }
}

// J^T's passes: the chunk where every thread is free; where fewer are, at most the host cap of the chunk's workspace
// on the free threads (whole blocks), the whole chunk where it is within that cap; never more than the rows left; one
// pass per chunk where the space runs blocks in order. The workspace's bytes are asked for only where they matter.
template <class C>
void passes_take_at_most_the_free_threads_cap() {
  typename C::execution_space space;
  std::size_t const b = block_of<C>();
  std::size_t const threads = std::size_t(space.concurrency());
  // 3 KiB of sweep and 1 KiB of Khatri-Rao jets per row: one thread's cap is the Khatri-Rao budget's 1 MiB / 1 KiB
  // = 1024 rows (the workspace budget's 8 MiB / 4 KiB would allow 2048), in whole blocks.
  int asked = 0;
  auto const layout = [&] {
    ++asked;
    return t3k::impl::TransposeLayoutBytes{3 << 10, 1 << 10, 0};
  };
  std::size_t const one_thread = std::max(b, std::size_t(1024) / b * b);
  ASSERT_EQ(t3k::host_chunk_khatri_rao_bytes, std::size_t(1) << 20);
  ASSERT_EQ(t3k::host_chunk_workspace_bytes, std::size_t(8) << 20);
  std::size_t const chunk = 4 * one_thread, many_rows = 100 * chunk;
  auto pass = [&](std::size_t chunk_rows, std::size_t remaining) {
    return t3k::impl::rows_of_next_pass(space, chunk_rows, remaining, layout);
  };
  if (!t3k::impl::spreads_blocks_over_threads(space)) {
    FreeCoresScope cores(1);
    EXPECT_EQ(pass(chunk, many_rows), chunk);
    EXPECT_EQ(asked, 0);
    return;
  }
  {
    FreeCoresScope cores(many_free_cores);
    EXPECT_EQ(pass(chunk, many_rows), chunk);
    EXPECT_EQ(pass(chunk, b + 3), b + 3) << "the last rows";
    EXPECT_EQ(asked, 0) << "every thread free: the chunk, whatever its workspace";
  }
  FreeCoresScope cores(1);
  EXPECT_EQ(pass(chunk, many_rows), one_thread) << "one thread's cap";
  EXPECT_EQ(pass(chunk, 3 * b), 3 * b) << "at most the rows left";
  EXPECT_EQ(pass(3 * b, many_rows), std::min(3 * b, one_thread)) << "a chunk within the cap runs whole";
  EXPECT_EQ(pass(b, many_rows), b) << "a chunk of one block";
  EXPECT_EQ(pass(one_thread + 5, one_thread + 5), one_thread) << "all rows at once: whole blocks";
  EXPECT_GT(asked, 0);
}

template <class C>
void fit_is_bitwise_the_same_with_row_ranges_alone() {
  std::vector<FitBits> fits;
  FreeCoresScope cores(many_free_cores);
  for (auto mode : {t3k::impl::RowRangeThreads::all, t3k::impl::RowRangeThreads::alone}) {
    RowRangeThreadsScope scope(mode);
    fits.push_back(small_fit<C>(t3k::impl::default_inline_work_threshold));
  }
  EXPECT_EQ(fits[0].losses, fits[1].losses);
  EXPECT_EQ(fits[0].model, fits[1].model);
}

// A fit beside busy processes (one free core: every region and kernel on the calling thread) against the same fit
// with every region on all threads and every kernel launched: the same bits.
template <class C>
void fit_is_bitwise_the_same_on_one_free_core() {
  FitBits busy, quiet;
  {
    FreeCoresScope cores(1);
    busy = small_fit<C>(t3k::impl::default_inline_work_threshold);
  }
  {
    FreeCoresScope cores(many_free_cores);
    RowRangeThreadsScope scope(t3k::impl::RowRangeThreads::all);
    quiet = small_fit<C>(every_kernel_launched);
  }
  ASSERT_GT(busy.losses.size(), 2u) << "the fit must take steps";
  EXPECT_EQ(busy.losses, quiet.losses) << "every loss of the history, bitwise";
  EXPECT_EQ(busy.model, quiet.model) << "the fitted cores, bitwise";
}

// ordered_sum gives the sum of its blocks of ordered_sum_block indices in block order, each block summed in index
// order: on the host bitwise, inline and launched; on other spaces to rounding.
template <class C>
void ordered_sum_adds_its_blocks_in_order() {
  using Space = typename C::execution_space;
  using Mem = typename C::memory_space;
  Space space;
  t3k::impl::HostNormalGenerator gen(71);
  for (int n : {0, 1, 255, 256, 257, 5000}) {
    Kokkos::View<double*, Mem> v("t3k_test::terms", std::size_t(n));
    auto h = Kokkos::create_mirror_view(v);
    double magnitude = 0;
    for (int i = 0; i < n; ++i) {
      h(i) = gen.normal() * (1 + i % 7);  // terms of several sizes: the order shows in the last bits
      magnitude += std::abs(h(i));
    }
    Kokkos::deep_copy(v, h);
    double expected = 0;
    for (int b = 0; b < n; b += int(t3k::impl::ordered_sum_block)) {
      double block = 0;
      for (int i = b; i < n && i < b + int(t3k::impl::ordered_sum_block); ++i) block += h(i);
      expected += block;
    }
    for (std::size_t threshold : {every_kernel_launched, no_kernel_launched}) {
      ThresholdScope scope(threshold);
      double const got = t3k::impl::ordered_sum<double>(
          space, "t3k_test::ordered_sum", n, 1, KOKKOS_LAMBDA(int i, double& acc) { acc += v(i); });
      if (t3k::impl::may_run_inline<Space>()) {
        EXPECT_EQ(got, expected) << "n = " << n << ", threshold " << threshold;
      } else {
        EXPECT_NEAR(got, expected, 1e-13 * magnitude) << "n = " << n;
      }
    }
  }
}

// The timing rule on given measurements: four regions judged by their summed wall time against the same rows'
// time alone, streaks alone that double while all threads keep losing and start again at the shortest after a win.
TEST(RowRangeThreadChoice, RegionsThatDoNotPaySendTheNextOnesAlone) {
  using Choice = t3k::impl::RowRangeThreadChoice;
  RowRangeThreadsScope scope(t3k::impl::RowRangeThreads::automatic);
  std::atomic<std::int64_t> least_overhead{-1};
  Choice choice(least_overhead);
  // Regions of 1000 rows that take 1 ms alone; on two threads their work is 1 ms and their wall time `ratio` ms.
  // The overhead they show (50 us at the least) is below what a second thread could save, so the overhead rule
  // stays out of the way.
  choice.record_alone(1000000, 1000);
  auto judge = [&](double ratio_a, double ratio_b) {  // four regions: one at ratio_a, three at ratio_b
    for (int k = 0; k < Choice::regions_judged_together; ++k) {
      EXPECT_FALSE(choice.next_runs_alone(1000, 2));
      choice.record(std::int64_t((k == 0 ? ratio_a : ratio_b) * 1e6), 1000000, 2, 1000);
    }
  };
  auto alone_streak = [&] {
    int n = 0;
    while (choice.next_runs_alone(1000, 2)) {
      choice.record_alone(1000000, 1000);
      ++n;
    }
    return n;
  };
  judge(0.55, 0.6);  // two threads pay
  EXPECT_EQ(alone_streak(), 0);
  judge(1.2, 0.7);  // one slow region: together the four still save more than a tenth
  EXPECT_EQ(alone_streak(), 0);
  judge(3.0, 0.8);  // one region waited for a descheduled thread: it costs what it costs
  EXPECT_EQ(alone_streak(), Choice::shortest_streak);
  judge(2.0, 5.0);
  EXPECT_EQ(alone_streak(), 2 * Choice::shortest_streak);
  for (int k = 0; k < 10; ++k) {
    judge(2.0, 2.0);
    EXPECT_LE(alone_streak(), Choice::longest_streak);
  }
  judge(0.6, 0.6);
  EXPECT_EQ(alone_streak(), 0);
  judge(1.0, 1.0);
  EXPECT_EQ(alone_streak(), Choice::shortest_streak) << "a win starts the streaks again at the shortest";
  choice.record(5000000, -1, 2, 1000);  // unmeasured: ignored
  EXPECT_FALSE(choice.next_runs_alone(1000, 2));
  // The time alone follows the site's last regions: at 2 ms alone, regions of 1.5 ms on two threads pay.
  for (int k = 0; k < 20; ++k) choice.record_alone(2000000, 1000);
  judge(1.5, 1.5);
  EXPECT_EQ(alone_streak(), 0);
}

// The overhead rule on given measurements: a region whose time alone could save no more than the least overhead a
// group of regions on all threads has shown runs alone without a try; a site measures its time alone before it is
// judged by it.
TEST(RowRangeThreadChoice, RegionsTooShortForTheLeastOverheadRunAlone) {
  using Choice = t3k::impl::RowRangeThreadChoice;
  RowRangeThreadsScope scope(t3k::impl::RowRangeThreads::automatic);
  std::atomic<std::int64_t> least_overhead{-1};
  Choice site_a(least_overhead), site_b(least_overhead);
  auto group = [&](Choice& site, std::int64_t wall, std::int64_t work, int threads) {
    for (int k = 0; k < Choice::regions_judged_together; ++k) site.record(wall, work, threads, 100);
  };
  EXPECT_FALSE(site_a.next_runs_alone(100, 2)) << "nothing is known: all threads";
  group(site_a, 100000, 60000, 2);  // 100 us on two threads for 60 us of work: 70 us beyond half the work
  EXPECT_EQ(least_overhead.load(), 70000);
  EXPECT_TRUE(site_b.next_runs_alone(100, 2)) << "a site measures its time alone first";
  site_b.record_alone(100000, 100);  // 1 us per row
  EXPECT_TRUE(site_b.next_runs_alone(100, 2)) << "could save 50 us, less than 70 us";
  EXPECT_TRUE(site_b.next_runs_alone(140, 2)) << "could save 70 us, no more than 70 us";
  EXPECT_FALSE(site_b.next_runs_alone(141, 2)) << "could save more than 70 us: tried";
  EXPECT_FALSE(site_b.next_runs_alone(100, 4)) << "four threads could save 75 us";
  group(site_a, 300000, 400000, 4);  // 200 us beyond a quarter of the work: the least stays
  EXPECT_EQ(least_overhead.load(), 70000);
  group(site_a, 40000, 60000, 2);  // 10 us beyond half the work
  EXPECT_EQ(least_overhead.load(), 10000);
  EXPECT_FALSE(site_b.next_runs_alone(100, 2)) << "could save 50 us, more than 10 us";
}

template <class C>
class SmallKernelTest : public ::testing::Test {};
TYPED_TEST_SUITE(SmallKernelTest, DoubleConfigs);

TYPED_TEST(SmallKernelTest, ForEachIndexVisitsEveryIndexOnce) { for_each_index_visits_every_index_once<TypeParam>(); }
TYPED_TEST(SmallKernelTest, FitIsBitwiseTheSameInlineAndLaunched) {
  fit_is_bitwise_the_same_inline_and_launched<TypeParam>();
}
TYPED_TEST(SmallKernelTest, SmallOperationsLaunchNoKernel) { small_operations_launch_no_kernel<TypeParam>(); }
TYPED_TEST(SmallKernelTest, FitIsBitwiseTheSameWithRowRangesAlone) {
  fit_is_bitwise_the_same_with_row_ranges_alone<TypeParam>();
}
TYPED_TEST(SmallKernelTest, FitIsBitwiseTheSameOnOneFreeCore) { fit_is_bitwise_the_same_on_one_free_core<TypeParam>(); }
TYPED_TEST(SmallKernelTest, OrderedSumAddsItsBlocksInOrder) { ordered_sum_adds_its_blocks_in_order<TypeParam>(); }

// float too: OpenBLAS's sgemm gives other last bits on several threads than on one.
template <class C>
class RowRangeThreadsTest : public ::testing::Test {};
TYPED_TEST_SUITE(RowRangeThreadsTest, TestConfigs);
TYPED_TEST(RowRangeThreadsTest, RowRangesGiveTheSameBitsOnOneThreadAndAll) {
  row_ranges_give_the_same_bits_on_one_thread_and_all<TypeParam>();
}
TYPED_TEST(RowRangeThreadsTest, PassesTakeAtMostTheFreeThreadsCap) {
  passes_take_at_most_the_free_threads_cap<TypeParam>();
}

}  // namespace
