// The memory model of J^T against measured allocations, and the chunk-size policies (docs/math.md).
#include "frame_reference.hpp"
#include "shape_cases.hpp"
#include "test_devices.hpp"

#include "t3k/algorithms/apply_derivatives_transpose.hpp"
#include "t3k/algorithms/estimate_chunk_size.hpp"
#include "t3k/algorithms/probe_derivatives_transpose.hpp"
#include "t3k/algorithms/tangent_probe_derivatives.hpp"
#include "t3k/core/memory_tracking.hpp"

namespace {

using namespace t3k_test;

// A T3's shapes with the order and the stack of residual sets of its J^T.
struct T3Shapes : T3ShapeCase {
  std::size_t order, n_tangent;
};

// Six shape sets: ragged, N >> n, large r, n_t > 1, K = 0, d = 1.
std::vector<T3Shapes> model_cases() {
  return {{{{4, 5, 6, 3}, {3, 4, 2, 3}, {1, 2, 3, 2, 1}}, 2, 1},
          {{{200, 150, 180}, {3, 2, 4}, {1, 3, 4, 1}}, 2, 1},                // N >> n: Tucker side dominates
          {{{8, 8, 8, 8, 8}, {8, 8, 8, 8, 8}, {1, 8, 32, 32, 8, 1}}, 2, 1},  // large r: TT assembly dominates
          {{{6, 7, 5, 6}, {4, 4, 4, 4}, {1, 4, 9, 4, 1}}, 1, 3},             // stacks of residuals
          {{{9, 4, 7}, {3, 4, 3}, {1, 3, 5, 1}}, 0, 2},                      // order 0
          {{{12}, {5}, {1, 1}}, 3, 1}};                                      // d = 1
}

FrameShapeCase frame_case_of(T3Shapes const& c) {
  auto sh = t3k::impl::frame_shapes_of_t3("test", c.big_n, c.n, c.r);
  return {sh.big_n, sh.nu, sh.no, sh.rl, sh.rr};
}

template <class C>
using Jets4 = Kokkos::View<typename C::scalar_type****, Kokkos::LayoutRight, typename C::memory_space>;
template <class C>
using Probe2 = Kokkos::View<typename C::scalar_type**, Kokkos::LayoutRight, typename C::memory_space>;

// Measured peak bytes of J^T equal the model (within 5% required; the model is exact by construction, so the
// test asserts equality up to 64 bytes of allocation rounding per View).
template <class C>
void measured_peak_matches_model() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  t3k::ScalarType const type = sizeof(S) == 4 ? t3k::ScalarType::float32 : t3k::ScalarType::float64;
  // Chunks of one block, two blocks and all rows, in the space's reduction blocks.
  std::size_t const w = block_of<C>() * 3 + 8;
  for (auto const& mc : model_cases()) {
    auto fc = frame_case_of(mc);
    std::size_t const d = fc.big_n.size();
    auto f = random_frame<S, typename C::memory_space>(space, fc, 2);
    std::vector<Probe2<C>> ww, pp;
    std::vector<Jets4<C>> r;
    for (std::size_t i = 0; i < d; ++i) {
      ww.push_back(Probe2<C>("w", w, fc.big_n[i]));
      pp.push_back(Probe2<C>("p", w, fc.big_n[i]));
      r.push_back(Jets4<C>("r", mc.n_tangent, w, mc.order + 1, fc.big_n[i]));
    }
    for (bool summed : {true, false}) {
      auto model =
          t3k::transpose_memory_model(mc.big_n, mc.n, mc.r, mc.order, mc.n_tangent, summed, type, block_of<C>());
      // Inputs as the model counts them: w, p and the residual stack.
      std::size_t sum_n = 0;
      for (auto n : fc.big_n) sum_n += n;
      EXPECT_EQ(model.input_bytes_per_row, sizeof(S) * (2 + mc.n_tangent * (mc.order + 1)) * sum_n);
      for (std::size_t chunk : {std::size_t(1), 2 * block_of<C>() + 22, w}) {  // one block, two blocks, all rows
        space.fence();
        std::int64_t measured = 0;
        {
          t3k::AllocationTracker tracker;
          auto g = t3k::probe_derivatives_transpose(space, f, ww, pp, r, {summed, t3k::ChunkSize::of(chunk)});
          space.fence();
          measured = tracker.peak(typename C::memory_space().name());
        }
        double const predicted = double(model.allocated_bytes(w, chunk));
        EXPECT_NEAR(double(measured), predicted, 64.0 * (4 * d + 2))
            << "d=" << d << " K=" << mc.order << " n_t=" << mc.n_tangent << " chunk " << chunk
            << (summed ? " summed" : " per probe");
        EXPECT_LE(std::abs(double(measured) - predicted), 0.05 * predicted);
      }
    }
  }
}

// The same for the scalar kinds: the measured peak of entries and applies J^T (summed and per sample, chunks of one
// block, two blocks and all rows) stays within transpose_memory_model(kind, ...) and equals it up to allocation
// rounding. Few samples (a few blocks), so that it runs in seconds on every backend.
template <class C>
void scalar_measured_peak_matches_model() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  t3k::ScalarType const type = sizeof(S) == 4 ? t3k::ScalarType::float32 : t3k::ScalarType::float64;
  std::size_t const w = block_of<C>() * 3 + 8;
  for (auto const& mc : model_cases()) {
    auto fc = frame_case_of(mc);
    std::size_t const d = fc.big_n.size();
    auto f = random_frame<S, typename C::memory_space>(space, fc, 2);
    std::vector<Probe2<C>> ww, pp;
    for (std::size_t i = 0; i < d; ++i) {
      ww.push_back(Probe2<C>("w", w, fc.big_n[i]));
      pp.push_back(Probe2<C>("p", w, fc.big_n[i]));
    }
    if (mc.order == 0) pp.clear();
    t3k::EntryIndices<typename C::memory_space> idx("indices", w, d);
    auto idx_host = Kokkos::create_mirror_view(idx);
    for (std::size_t s = 0; s < w; ++s)
      for (std::size_t i = 0; i < d; ++i) idx_host(s, i) = int((7 * s + 3 * i) % fc.big_n[i]);
    Kokkos::deep_copy(idx, idx_host);
    Kokkos::View<S***, Kokkos::LayoutRight, typename C::memory_space> r("r", mc.n_tangent, w, mc.order + 1);
    for (auto kind : {t3k::MeasurementKind::entries, t3k::MeasurementKind::applies}) {
      for (bool summed : {true, false}) {
        auto model = t3k::transpose_memory_model(kind, mc.big_n, mc.n, mc.r, mc.order, mc.n_tangent, summed, type,
                                                 block_of<C>());
        for (std::size_t chunk : {std::size_t(1), 2 * block_of<C>() + 22, w}) {
          t3k::TransposeOptions const options{summed, t3k::ChunkSize::of(chunk)};
          space.fence();
          std::int64_t measured = 0;
          {
            t3k::AllocationTracker tracker;
            auto g = kind == t3k::MeasurementKind::entries
                         ? t3k::entry_derivatives_transpose(space, f, idx, pp, r, options)
                         : t3k::apply_derivatives_transpose(space, f, ww, pp, r, options);
            space.fence();
            measured = tracker.peak(typename C::memory_space().name());
          }
          double const predicted = double(model.allocated_bytes(w, chunk));
          std::string const what = std::string(t3k::to_string(kind)) + " d=" + std::to_string(d) +
                                   " K=" + std::to_string(mc.order) + " n_t=" + std::to_string(mc.n_tangent) +
                                   " chunk " + std::to_string(chunk) + (summed ? " summed" : " per sample");
          EXPECT_LE(double(measured), predicted + 64.0 * (4 * d + 2)) << what;
          EXPECT_NEAR(double(measured), predicted, 64.0 * (4 * d + 2)) << what;
        }
      }
    }
  }
}

// The balance estimate: the largest chunk (to the reduction block) whose workspace stays within the probe data, for
// the host backends' block (the default) and the device backends' one.
void estimate_follows_balance_policy() {
  for (std::size_t b : {t3k::reduction_block_size, t3k::device_reduction_block_size}) {
    for (auto const& mc : model_cases()) {
      for (std::size_t w : {std::size_t(1), std::size_t(100), std::size_t(100000), std::size_t(1000000)}) {
        std::size_t const c =
            t3k::estimate_chunk_size(mc.big_n, mc.n, mc.r, mc.order, w, mc.n_tangent, 1, t3k::ScalarType::float64, b);
        auto const m = t3k::transpose_memory_model(mc.big_n, mc.n, mc.r, mc.order, mc.n_tangent, true,
                                                   t3k::ScalarType::float64, b);
        EXPECT_EQ(m.block_rows, b);
        std::size_t const per_row = m.sweep_bytes_per_row + m.assembly_bytes_per_row;
        ASSERT_GE(c, 1u);
        ASSERT_LE(c, w);
        if (c < w) {
          // Whole reduction blocks, at least one; the minimum block may exceed the data, a larger chunk never does.
          EXPECT_EQ(c % b, 0u) << "block " << b;
          if (c > b) {
            EXPECT_LE(double(c) * per_row, double(w) * m.input_bytes_per_row);  // never the tallest pole
          }
          // Maximal up to the rounding to whole reduction blocks.
          EXPECT_GT(double(c + b) * per_row, double(w) * m.input_bytes_per_row) << "block " << b;
        } else {
          EXPECT_TRUE(per_row * w <= w * m.input_bytes_per_row || c == w);
        }
      }
    }
  }
  // Large ranks with small data: chunking is needed; shards shrink the local rows.
  std::vector<std::size_t> big_n(8, 64), n(8, 16), r{1, 16, 32, 32, 32, 32, 32, 16, 1};
  std::size_t const one = t3k::estimate_chunk_size(big_n, n, r, 2, 100000);
  std::size_t const four = t3k::estimate_chunk_size(big_n, n, r, 2, 100000, 1, 4);
  EXPECT_LT(one, 100000u);
  EXPECT_LE(four, (100000u + 3) / 4);
  EXPECT_GE(four, one / 4 - t3k::reduction_block_size);
  EXPECT_THROW(t3k::estimate_chunk_size(big_n, n, r, 2, 1000, 1, 0), t3k::InvalidArgument);
  // The device block: the same balance, rounded to 2048-probe blocks; cached apart from the host one.
  std::size_t const device = t3k::estimate_chunk_size(big_n, n, r, 2, 100000, 1, 1, t3k::ScalarType::float64,
                                                      t3k::device_reduction_block_size);
  EXPECT_EQ(device, one - one % t3k::device_reduction_block_size);
  EXPECT_EQ(t3k::estimate_chunk_size(big_n, n, r, 2, 100000), one);
  try {
    (void)t3k::estimate_chunk_size(big_n, n, r, 2, 1000, 1, 1, t3k::ScalarType::float64, 0);
    ADD_FAILURE() << "block_rows = 0 accepted";
  } catch (t3k::InvalidArgument const& e) {
    EXPECT_NE(std::string(e.what()).find("t3k::estimate_chunk_size: block_rows must be >= 1"), std::string::npos)
        << e.what();
  }
  // (Its cost per call, cached and not, is BM_EstimateChunkSize_Warm and _Cold in perf/.)
}

// Fixed chunk sizes are rounded down to whole reduction blocks (at least one), and cover all probes when they can.
void chunk_sizes_round_to_whole_blocks() {
  std::size_t const b = t3k::reduction_block_size;
  EXPECT_EQ(b, 64u);
  if (t3k::impl::runs_on_host<Kokkos::DefaultHostExecutionSpace>()) {  // not in T3K_DEVICE_CODE_PATHS_ON_HOST builds
    EXPECT_EQ(t3k::reduction_block_size_for<Kokkos::DefaultHostExecutionSpace>(), b);
    EXPECT_EQ(t3k::reduction_block_size_for<Kokkos::Serial>(), b);
  } else {
    EXPECT_EQ(t3k::reduction_block_size_for<Kokkos::DefaultHostExecutionSpace>(), t3k::device_reduction_block_size);
  }
#ifdef KOKKOS_ENABLE_CUDA
  EXPECT_EQ(t3k::reduction_block_size_for<Kokkos::Cuda>(), t3k::device_reduction_block_size);
#endif
  for (std::size_t block : {b, t3k::device_reduction_block_size}) {
    std::size_t const n = 20 * block;
    EXPECT_EQ(t3k::impl::rows_per_chunk(1, n, block), block);
    EXPECT_EQ(t3k::impl::rows_per_chunk(block + 5, n, block), block);
    EXPECT_EQ(t3k::impl::rows_per_chunk(3 * block, n, block), 3 * block);
    EXPECT_EQ(t3k::impl::rows_per_chunk(n - 1, n, block), n - block);
    EXPECT_EQ(t3k::impl::rows_per_chunk(n, n, block), n);                  // covers the probes: one pass, no rounding
    EXPECT_EQ(t3k::impl::rows_per_chunk(5, block - 1, block), block - 1);  // one block is more than all of them
  }
  EXPECT_EQ(t3k::impl::rows_per_chunk(999, 1000, b), 999 - 999 % b);
  EXPECT_EQ(t3k::impl::rows_per_chunk(999, 5000, t3k::device_reduction_block_size), 2048u);  // at least one block
  // The host cap of `auto`: per thread, the whole blocks within the workspace budget, in whole rounds of one block
  // per thread (at least one round), at most all rows (a row of budget / (5 b) bytes: exactly 5 blocks fit).
  std::size_t const five_blocks = t3k::host_chunk_workspace_bytes / (5 * b);
  EXPECT_EQ(t3k::impl::host_chunk_rows(five_blocks, 100000, 1), 5 * b);
  EXPECT_EQ(t3k::impl::host_chunk_rows(five_blocks, 100000, 2), 10 * b);  // 5 blocks for each thread
  EXPECT_EQ(t3k::impl::host_chunk_rows(five_blocks, 100000, 3), 15 * b);
  EXPECT_EQ(t3k::impl::host_chunk_rows(t3k::host_chunk_workspace_bytes / (3 * b) + 1, 100000, 2), 4 * b);  // not 5
  EXPECT_EQ(t3k::impl::host_chunk_rows(five_blocks, 200, 8), 200u);  // fewer rows than that: all of them
  EXPECT_EQ(t3k::impl::host_chunk_rows(t3k::host_chunk_workspace_bytes, 100000, 1), b);      // at least one block
  EXPECT_EQ(t3k::impl::host_chunk_rows(t3k::host_chunk_workspace_bytes, 100000, 4), 4 * b);  // one each
  EXPECT_EQ(t3k::impl::host_chunk_rows(0, 1000, 2), 1000u);  // no workspace per row: one pass
  EXPECT_EQ(t3k::impl::rows_per_chunk(t3k::ChunkSize::of(b + 1), 1000, b), b);
  EXPECT_EQ(t3k::impl::rows_per_chunk(t3k::ChunkSize::of(5000), 10000, t3k::device_reduction_block_size), 4096u);
  EXPECT_EQ(t3k::impl::rows_per_chunk(t3k::ChunkSize::none(), 1000, b), 1000u);
}

// On a device backend, chunk_size auto is the balance estimate in whole device blocks, with no cap.
template <class DeviceSpace>
void expect_device_auto_chunk_is_balance() {
  std::vector<std::size_t> big_n(8, 64), n(8, 16), r{1, 16, 32, 32, 32, 32, 32, 16, 1};
  EXPECT_EQ(t3k::automatic_chunk_size<DeviceSpace>(big_n, n, r, 2, 100000),
            t3k::estimate_chunk_size(big_n, n, r, 2, 100000, 1, 1, t3k::ScalarType::float64,
                                     t3k::device_reduction_block_size));
}

// chunk_size auto: the balance estimate, and on host backends at most the chunk whose workspace fits
// host_chunk_workspace_bytes and whose Khatri-Rao jets fit host_chunk_khatri_rao_bytes per thread the space spreads
// block products over (whole blocks, maximal, as many for each thread); device backends take the balance estimate
// as it is.
void automatic_chunk_caps_host_workspace() {
  using Host = Kokkos::DefaultHostExecutionSpace;
  if (!t3k::impl::runs_on_host<Host>()) {
    // A T3K_DEVICE_CODE_PATHS_ON_HOST build: the host space takes the device backends' rule (below, for CUDA).
    expect_device_auto_chunk_is_balance<Host>();
    return;
  }
  std::size_t const b = t3k::reduction_block_size;
  std::size_t const threads = t3k::impl::block_threads(Host());
  // Per thread the most whole blocks within both budgets (at least one), the same number for every thread.
  auto expected_blocks_each = [&](t3k::TransposeMemoryModel const& m) {
    std::size_t const per_row = m.sweep_bytes_per_row + m.assembly_bytes_per_row;
    std::size_t blocks_each = 1;
    while ((blocks_each + 1) * b * per_row <= t3k::host_chunk_workspace_bytes &&
           (blocks_each + 1) * b * m.assembly_bytes_per_row <= t3k::host_chunk_khatri_rao_bytes) {
      ++blocks_each;
    }
    return blocks_each;
  };
  std::vector<std::size_t> big_n(8, 64), n(8, 16), r{1, 16, 32, 32, 32, 32, 32, 16, 1};
  for (auto scalar : {t3k::ScalarType::float64, t3k::ScalarType::float32}) {
    auto const m = t3k::transpose_memory_model(big_n, n, r, 2, 1, true, scalar);
    std::size_t const balance = t3k::estimate_chunk_size(big_n, n, r, 2, 100000, 1, 1, scalar);
    std::size_t const c = t3k::automatic_chunk_size<Host>(big_n, n, r, 2, 100000, 1, 1, scalar);
    ASSERT_LT(c, balance) << "this shape's balance workspace is far beyond the host cap";
    EXPECT_EQ(c, threads * expected_blocks_each(m) * b) << threads << " threads";
  }
  // The J^T target shape in float: two blocks' workspace fit the workspace budget but not their Khatri-Rao jets the
  // Khatri-Rao budget, so each thread gets one block; at small ranks the workspace budget binds (several blocks).
  {
    auto const m = t3k::transpose_memory_model(big_n, n, r, 2, 1, true, t3k::ScalarType::float32);
    ASSERT_LE(2 * b * (m.sweep_bytes_per_row + m.assembly_bytes_per_row), t3k::host_chunk_workspace_bytes);
    ASSERT_GT(2 * b * m.assembly_bytes_per_row, t3k::host_chunk_khatri_rao_bytes);
    EXPECT_EQ(t3k::automatic_chunk_size<Host>(big_n, n, r, 2, 100000, 1, 1, t3k::ScalarType::float32), threads * b);
    std::vector<std::size_t> n8(8, 8), r8{1, 8, 8, 8, 8, 8, 8, 8, 1};
    auto const m8 = t3k::transpose_memory_model(big_n, n8, r8, 2);
    std::size_t const blocks8 = expected_blocks_each(m8);
    ASSERT_GT(blocks8, 1u);
    ASSERT_LE((blocks8 + 1) * b * m8.assembly_bytes_per_row, t3k::host_chunk_khatri_rao_bytes)
        << "the workspace budget, not the Khatri-Rao one, binds here";
    ASSERT_GT(t3k::estimate_chunk_size(big_n, n8, r8, 2, 100000), threads * blocks8 * b);
    EXPECT_EQ(t3k::automatic_chunk_size<Host>(big_n, n8, r8, 2, 100000), threads * blocks8 * b);
  }
  // Small shapes whose balance workspace fits the cap keep the balance estimate; so do few probes.
  std::vector<std::size_t> small_n{6, 7, 5, 6}, small_t{3, 4, 3, 3}, small_r{1, 3, 6, 3, 1};
  EXPECT_EQ(t3k::automatic_chunk_size<Host>(small_n, small_t, small_r, 2, 2400),
            t3k::estimate_chunk_size(small_n, small_t, small_r, 2, 2400));
  EXPECT_EQ(t3k::automatic_chunk_size<Host>(big_n, n, r, 2, 10), 10u);
#ifdef KOKKOS_ENABLE_CUDA
  expect_device_auto_chunk_is_balance<Kokkos::Cuda>();
#endif
}

// For the host backends' block (the default) and the device backends' one.
void max_chunk_within_cap() {
  std::vector<std::size_t> big_n{64, 64, 64, 64}, n{8, 8, 8, 8}, r{1, 8, 32, 8, 1};
  auto const f64 = t3k::ScalarType::float64;
  for (std::size_t block : {t3k::reduction_block_size, t3k::device_reduction_block_size}) {
    auto const m = t3k::transpose_memory_model(big_n, n, r, 2, 1, true, f64, block);
    std::size_t const w = 5 * block + 17;
    std::size_t const cap = m.peak_bytes(w, 3 * block + 10) + 10;  // 3 blocks and a bit: rounds down to 3 blocks
    std::size_t const c = t3k::max_chunk_size_within(big_n, n, r, 2, w, cap, 1, 1, f64, block);
    EXPECT_EQ(c, 3 * block);
    EXPECT_LE(m.peak_bytes(w, c), cap);
    EXPECT_GT(m.peak_bytes(w, c + block), cap);
    EXPECT_EQ(m.peak_bytes(w, c + 1), m.peak_bytes(w, c)) << "the model rounds chunks to its block as J^T does";
    EXPECT_EQ(t3k::max_chunk_size_within(big_n, n, r, 2, w, std::size_t(1) << 50, 1, 1, f64, block), w);
    try {
      t3k::max_chunk_size_within(big_n, n, r, 2, w, 1000, 1, 1, f64, block);
      ADD_FAILURE() << "a cap below one block accepted";
    } catch (t3k::InvalidArgument const& e) {
      EXPECT_NE(
          std::string(e.what()).find("even the smallest chunk (" + std::to_string(block) +
                                     " probes, one reduction block) needs " + std::to_string(m.peak_bytes(w, block))),
          std::string::npos)
          << e.what();
    }
  }
}

// chunk_size auto inside J^T gives the bits of chunk_size none.
template <class C>
void auto_chunk_equals_none_bitwise() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  T3Shapes mc{{{8, 8, 8, 8}, {8, 8, 8, 8}, {1, 8, 16, 8, 1}}, 2, 1};
  auto fc = frame_case_of(mc);
  auto f = random_frame<S, typename C::memory_space>(space, fc, 3);
  std::size_t const w = 11 * block_of<C>() - 4;  // 700 on host backends: the estimate chunks it
  std::vector<Probe2<C>> ww, pp;
  std::vector<Kokkos::View<S***, Kokkos::LayoutRight, typename C::memory_space>> r;
  t3k::impl::HostNormalGenerator gen(4);
  auto fill = [&](auto v) {
    auto h = Kokkos::create_mirror_view(v);
    for (std::size_t e = 0; e < h.span(); ++e) h.data()[e] = S(gen.normal());
    Kokkos::deep_copy(v, h);
    return v;
  };
  for (std::size_t i = 0; i < 4; ++i) {
    ww.push_back(fill(Probe2<C>("w", w, 8)));
    pp.push_back(fill(Probe2<C>("p", w, 8)));
    r.push_back(fill(Kokkos::View<S***, Kokkos::LayoutRight, typename C::memory_space>("r", w, 3, 8)));
  }
  std::size_t const c =
      t3k::estimate_chunk_size(mc.big_n, mc.n, mc.r, 2, w, 1, 1, t3k::ScalarType::float64, block_of<C>());
  ASSERT_LT(c, w) << "the case must actually chunk";
  auto a = t3k::probe_derivatives_transpose(space, f, ww, pp, r, {true, t3k::ChunkSize::automatic()});
  auto b = t3k::probe_derivatives_transpose(space, f, ww, pp, r, {true, t3k::ChunkSize::none()});
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(flat_host(a.tt[i]), flat_host(b.tt[i]));
    EXPECT_EQ(flat_host(a.tucker[i]), flat_host(b.tucker[i]));
  }
}

// Nothing in the chunk loops allocates: J^T (summed and per probe) and J make the same allocations whatever the
// number of chunks (one workspace per call, reused by every chunk), counted by the Kokkos allocation hooks.
template <class C>
void chunk_loops_allocate_once_per_call() {
  using S = typename C::scalar_type;
  using Mem = typename C::memory_space;
  typename C::execution_space space;
  T3Shapes mc{{{8, 7, 9, 8}, {4, 5, 4, 4}, {1, 4, 9, 4, 1}}, 2, 2};
  auto fc = frame_case_of(mc);
  auto f = random_frame<S, Mem>(space, fc, 5);
  auto v = random_variation_for_test<S, Mem>(space, f, 1, 6);
  std::size_t const w = 10 * block_of<C>() + 7;  // 11 chunks of one block, or one pass
  std::vector<Probe2<C>> ww, pp;
  std::vector<Jets4<C>> r;
  for (std::size_t i = 0; i < 4; ++i) {
    ww.push_back(Probe2<C>("w", w, fc.big_n[i]));
    pp.push_back(Probe2<C>("p", w, fc.big_n[i]));
    r.push_back(Jets4<C>("r", mc.n_tangent, w, mc.order + 1, fc.big_n[i]));
  }
  auto count = [&](auto&& call) {
    space.fence();
    t3k::AllocationTracker tracker;
    call();
    space.fence();
    return tracker.allocations(Mem().name());
  };
  for (bool summed : {true, false}) {
    auto jt = [&](t3k::ChunkSize c) {
      return count([&] { auto g = t3k::probe_derivatives_transpose(space, f, ww, pp, r, {summed, c}); });
    };
    std::int64_t const one_pass = jt(t3k::ChunkSize::none());
    EXPECT_GT(one_pass, 0);
    EXPECT_EQ(jt(t3k::ChunkSize::of(block_of<C>())), one_pass) << "summed " << summed;
    EXPECT_EQ(jt(t3k::ChunkSize::of(3 * block_of<C>())), one_pass) << "summed " << summed;
  }
  auto j = [&](t3k::ChunkSize c) {
    return count([&] { auto z = t3k::tangent_probe_derivatives(space, f, v, ww, pp, mc.order, c); });
  };
  EXPECT_EQ(j(t3k::ChunkSize::of(block_of<C>())), j(t3k::ChunkSize::none()));
}

// The probe sweeps (here J) take `auto` as their default: all probes at once on device backends, on host backends
// the whole blocks whose workspace fits host_sweep_chunk_workspace_bytes per thread (impl::host_chunk_rows). The
// result equals one pass bitwise, and the measured workspace is the one of the predicted chunk (the workspace is affine
// in the chunk rows).
template <class C>
void probe_sweep_auto_chunk_is_cache_sized_on_host() {
  using S = typename C::scalar_type;
  using Mem = typename C::memory_space;
  using Exec = typename C::execution_space;
  Exec space;
  T3Shapes mc{{{8, 7, 9, 8}, {4, 5, 4, 4}, {1, 4, 9, 4, 1}}, 2, 2};
  auto fc = frame_case_of(mc);
  auto f = random_frame<S, Mem>(space, fc, 5);
  auto v = random_variation_for_test<S, Mem>(space, f, 1, 6);
  std::size_t const w = 192 * t3k::reduction_block_size;  // beyond the cap in float on two threads too (host block)
  t3k::impl::HostNormalGenerator gen(7);
  auto fill = [&](Probe2<C> v) {
    auto h = Kokkos::create_mirror_view(v);
    for (std::size_t e = 0; e < h.span(); ++e) h.data()[e] = S(gen.normal());
    Kokkos::deep_copy(v, h);
    return v;
  };
  std::vector<Probe2<C>> ww, pp;
  for (std::size_t i = 0; i < 4; ++i) {
    ww.push_back(fill(Probe2<C>("w", w, fc.big_n[i])));
    pp.push_back(fill(Probe2<C>("p", w, fc.big_n[i])));
  }
  auto peak = [&](t3k::ChunkSize c) {
    space.fence();
    t3k::AllocationTracker tracker;
    { auto z = t3k::tangent_probe_derivatives(space, f, v, ww, pp, mc.order, c); }
    space.fence();
    return tracker.peak(Mem().name());
  };
  // The workspace is affine in the rows from one block per row range on (below it the probe pack buffer grows by a
  // block per range): measure the bytes per row there.
  std::size_t const b = block_of<C>() * t3k::impl::block_threads(space);
  std::size_t const per_row = (peak(t3k::ChunkSize::of(2 * b)) - peak(t3k::ChunkSize::of(b))) / b;
  ASSERT_GT(per_row, 0u);
  std::size_t const expected_rows = t3k::impl::runs_on_host<Exec>()
                                        ? t3k::impl::host_chunk_rows(per_row, w, t3k::impl::block_threads(space),
                                                                     t3k::host_sweep_chunk_workspace_bytes)
                                        : w;
  if (t3k::impl::runs_on_host<Exec>()) {
    ASSERT_LT(expected_rows, w) << "the case must exceed the host cap";
  }
  EXPECT_EQ(peak(t3k::ChunkSize::automatic()), peak(t3k::ChunkSize::of(b)) + (expected_rows - b) * per_row);
  EXPECT_EQ(peak(t3k::ChunkSize::automatic()), peak(t3k::ChunkSize::of(expected_rows)));

  auto const by_default = t3k::tangent_probe_derivatives(space, f, v, ww, pp, mc.order);
  auto const one_pass = t3k::tangent_probe_derivatives(space, f, v, ww, pp, mc.order, t3k::ChunkSize::none());
  for (std::size_t i = 0; i < 4; ++i) {
    auto const a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), by_default[i]);
    auto const e = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), one_pass[i]);
    ASSERT_EQ(a.size(), e.size());
    std::size_t mismatches = 0;
    for (std::size_t k = 0; k < a.size(); ++k) mismatches += a.data()[k] == e.data()[k] ? 0 : 1;
    EXPECT_EQ(mismatches, 0u) << "mode " << i;
  }
}

template <class C>
class MemoryModelTest : public ::testing::Test {};
TYPED_TEST_SUITE(MemoryModelTest, TestConfigs);

TYPED_TEST(MemoryModelTest, MeasuredPeakMatchesModel) { measured_peak_matches_model<TypeParam>(); }
TYPED_TEST(MemoryModelTest, ScalarKindsMeasuredPeakMatchesModel) { scalar_measured_peak_matches_model<TypeParam>(); }
TYPED_TEST(MemoryModelTest, AutoChunkEqualsNoneBitwise) { auto_chunk_equals_none_bitwise<TypeParam>(); }
TYPED_TEST(MemoryModelTest, ChunkLoopsAllocateOncePerCall) { chunk_loops_allocate_once_per_call<TypeParam>(); }
TYPED_TEST(MemoryModelTest, ProbeSweepAutoChunkIsCacheSizedOnHost) {
  probe_sweep_auto_chunk_is_cache_sized_on_host<TypeParam>();
}
// The tracker counts a View's bytes, and counts an execution space's scratch pool (by its Kokkos label) apart.
TEST(AllocationTracker, CountsViewsAndSetsRuntimePoolsApart) {
  std::string const host = Kokkos::HostSpace::name();
  t3k::AllocationTracker tracker;
  {
    Kokkos::View<double*, Kokkos::HostSpace> a("t3k::test::a", 100);
    Kokkos::View<char*, Kokkos::HostSpace> pool("Kokkos::Serial::scratch_mem", 4096);
    EXPECT_EQ(tracker.current(host), 800);
    EXPECT_EQ(tracker.runtime_pool_bytes(host), 4096);
    EXPECT_EQ(tracker.allocations(host), 1);
  }
  EXPECT_EQ(tracker.current(host), 0);
  EXPECT_EQ(tracker.peak(host), 800);
  EXPECT_TRUE(t3k::AllocationTracker::is_runtime_pool("Kokkos::OpenMP::scratch_mem"));
  EXPECT_TRUE(t3k::AllocationTracker::is_runtime_pool("Kokkos::InternalScratchSpace"));
  EXPECT_FALSE(t3k::AllocationTracker::is_runtime_pool("t3k::probe_derivatives_transpose::workspace"));
  EXPECT_FALSE(t3k::AllocationTracker::is_runtime_pool("my_scratch"));
  EXPECT_FALSE(t3k::AllocationTracker::is_runtime_pool(nullptr));
}
TEST(ChunkEstimator, FollowsBalancePolicy) { estimate_follows_balance_policy(); }
TEST(ChunkEstimator, MaxChunkWithinCap) { max_chunk_within_cap(); }
TEST(ChunkEstimator, ChunkSizesRoundToWholeBlocks) { chunk_sizes_round_to_whole_blocks(); }
TEST(ChunkEstimator, AutomaticChunkCapsHostWorkspace) { automatic_chunk_caps_host_workspace(); }

}  // namespace
