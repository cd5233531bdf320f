// Kernel launches of the device code paths: every product of a chunk is one batched kernel (and summed J^T adds its
// block partials with one more), so the launches plus vendor-BLAS products of a call do not grow with the number of
// reduction blocks a chunk holds. Counted through Kokkos Tools callbacks on device backends and in builds that run
// the device code paths on the host (T3K_DEVICE_CODE_PATHS_ON_HOST); host backends run their blocks as plain loops
// that no tool sees, and are skipped.
#include "frame_reference.hpp"
#include "random_views.hpp"
#include "test_devices.hpp"

#include "t3k/algorithms/probe_derivatives.hpp"
#include "t3k/algorithms/probe_derivatives_transpose.hpp"
#include "t3k/algorithms/random_t3.hpp"
#include "t3k/algorithms/tangent_probe_derivatives.hpp"
#include "t3k/core/launch_counting.hpp"

#include <cstdint>

namespace {

using namespace t3k_test;

/// Launches plus BLAS products of call().
template <class ExecutionSpace, class Call>
std::int64_t count_launches(ExecutionSpace const& space, Call&& call) {
  space.fence();
  t3k::LaunchCounter counter;
  call();
  space.fence();
  return counter.kernels() + counter.blas_products();
}

// One chunk of half a block against one chunk of six blocks and a bit: the same launches for J^T (summed and
// per probe), J, probes and probe jets, and at most 40 per mode for J^T (the bound of the GPU design).
template <class C>
void launches_do_not_grow_with_blocks_per_chunk() {
  using S = typename C::scalar_type;
  using Mem = typename C::memory_space;
  typename C::execution_space space;
  if (t3k::impl::runs_on_host<typename C::execution_space>()) GTEST_SKIP() << "host code paths";
  auto const fc = frame_shape_cases()[3];  // d = 4, ragged ranks
  std::size_t const d = fc.big_n.size(), order = 2, block = block_of<C>();
  auto const f = random_frame<S, Mem>(space, fc, 3);
  auto const v = random_variation_for_test(space, f, 2, 4);
  auto const x = t3k::random_t3<S>(space, fc.big_n, fc.nu, {1, 2, 3, 2, 1}, 5);
  auto const none = t3k::ChunkSize::none();
  struct Counts {
    std::size_t jt_summed, jt_per_probe, j, probes, jets;
  };
  auto count = [&](std::size_t w) {
    auto const ww = probe_stack<C>(fc.big_n, w, 10), pp = probe_stack<C>(fc.big_n, w, 20);
    std::vector<Jets3<C>> r;
    for (std::size_t i = 0; i < d; ++i) r.push_back(random_view(Jets3<C>("r", w, order + 1, fc.big_n[i]), 30 + i));
    Counts c{};
    c.jt_summed = count_launches(space, [&] { t3k::probe_derivatives_transpose(space, f, ww, pp, r, {true, none}); });
    c.jt_per_probe = count_launches(space, [&] {
      t3k::probe_derivatives_transpose(space, f, ww, pp, r, {false, none});
    });
    c.j = count_launches(space, [&] { t3k::tangent_probe_derivatives(space, f, v, ww, pp, order, none); });
    c.probes = count_launches(space, [&] { t3k::probes(space, x, ww); });
    c.jets = count_launches(space, [&] { t3k::probe_derivatives(space, x, ww, pp, order, none); });
    return c;
  };
  Counts const few = count(block / 2 + 3), many = count(6 * block + 1);
  EXPECT_EQ(few.jt_summed, many.jt_summed) << "summed J^T";
  EXPECT_EQ(few.jt_per_probe, many.jt_per_probe) << "per-probe J^T";
  EXPECT_EQ(few.j, many.j) << "J";
  EXPECT_EQ(few.probes, many.probes) << "probes";
  EXPECT_EQ(few.jets, many.jets) << "probe jets";
  EXPECT_LE(many.jt_summed, 40 * d) << "summed J^T: at most 40 launches and BLAS products per mode";
  EXPECT_GT(many.jt_summed, 0u) << "the counter must see the kernels";
}

template <class C>
class LaunchCountTest : public ::testing::Test {};
TYPED_TEST_SUITE(LaunchCountTest, DoubleConfigs);

TYPED_TEST(LaunchCountTest, LaunchesDoNotGrowWithBlocksPerChunk) {
  launches_do_not_grow_with_blocks_per_chunk<TypeParam>();
}

}  // namespace
