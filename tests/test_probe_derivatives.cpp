// Probe jets of T3s (docs/math.md) against the brute-force subset expansion of dense tensors.
#include "reference.hpp"
#include "shape_cases.hpp"
#include "test_devices.hpp"

#include "t3k/algorithms/probe_derivatives.hpp"
#include "t3k/algorithms/probe_mode_derivatives.hpp"
#include "t3k/algorithms/random_t3.hpp"
#include "t3k/algorithms/to_dense.hpp"
#include "t3k/core/impl/host_random.hpp"

#include <limits>

namespace {

using namespace t3k_test;

template <class C>
using Probe2 = Kokkos::View<typename C::scalar_type**, Kokkos::LayoutRight, typename C::memory_space>;

template <class C>
std::vector<Probe2<C>> random_probe_stack(std::vector<std::size_t> const& shapes, std::size_t w, std::uint64_t seed) {
  std::vector<Probe2<C>> out;
  t3k::impl::HostNormalGenerator gen(seed);
  for (auto n : shapes) {
    Probe2<C> v("probe", w, n);
    auto h = Kokkos::create_mirror_view(v);
    for (std::size_t s = 0; s < w; ++s)
      for (std::size_t j = 0; j < n; ++j) h(s, j) = typename C::scalar_type(gen.normal());
    Kokkos::deep_copy(v, h);
    out.push_back(v);
  }
  return out;
}

template <class View>
std::vector<double> row(View const& h, std::size_t s) {
  std::vector<double> r(h.extent(1));
  for (std::size_t j = 0; j < r.size(); ++j) r[j] = double(h(s, j));
  return r;
}

// (On host backends: device backends, and builds with T3K_DEVICE_CODE_PATHS_ON_HOST, keep the product-first order.)
static_assert(!t3k::impl::runs_on_host<Kokkos::DefaultHostExecutionSpace>() ||
                  t3k::impl::khatri_rao_first<Kokkos::DefaultHostExecutionSpace>(32),
              "wide_rank_case must take the Khatri-Rao-first step it is there to test");

// A wide rank at core 1 only: the right-to-left step there goes Khatri-Rao jet first on host backends (r_1 = 32,
// impl::khatri_rao_first), the step at core 2 product first.
T3ShapeCase wide_rank_case() { return {{3, 2, 3}, {2, 2, 2}, {1, 32, 2, 1}}; }

// The shared cases, another d = 5 with a Tucker rank above its mode size, and the wide-rank case.
std::vector<T3ShapeCase> t3_cases() {
  auto cases = t3_shape_cases();
  cases.push_back({{6, 2, 5, 3, 4}, {3, 2, 2, 1, 7}, {2, 1, 3, 2, 2, 2}});
  cases.push_back(wide_rank_case());
  return cases;
}

// Every order K = 0..d+1 against the subset expansion, ragged ranks, boundary ranks != 1, n_i > N_i, d = 1..5.
template <class C>
void jets_match_subset_expansion() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  std::size_t const w = 5;
  for (auto const& tc : t3_cases()) {
    auto x = t3k::random_t3<S>(space, tc.big_n, tc.n, tc.r, 7);
    auto dense = dense_tensor(host_t3(x));
    auto ww = random_probe_stack<C>(tc.big_n, w, 1);
    auto pp = random_probe_stack<C>(tc.big_n, w, 2);
    std::size_t const d = tc.big_n.size();
    for (std::size_t order = 0; order <= d + 1; ++order) {
      auto z = t3k::probe_derivatives(space, x, ww, pp, order);
      for (std::size_t i = 0; i < d; ++i) {
        ASSERT_EQ(z[i].extent(1), order + 1);
        auto hz = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, z[i]);
        for (std::size_t s = 0; s < w; ++s) {
          std::vector<std::vector<double>> ws(d), ps(d);
          for (std::size_t m = 0; m < d; ++m) {
            ws[m] = row(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, ww[m]), s);
            ps[m] = row(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, pp[m]), s);
          }
          for (std::size_t k = 0; k <= order; ++k) {
            auto ref = subset_expansion_jet(dense, tc.big_n, i, k, ws, ps);
            double scale = 1;
            for (auto v : ref) scale = std::max(scale, std::abs(v));
            for (std::size_t j = 0; j < tc.big_n[i]; ++j) {
              // Orders k >= d are exactly zero (no subset of the other d-1 modes is that large).
              if (k >= d) {
                EXPECT_EQ(double(hz(s, k, j)), 0.0);
              } else {
                EXPECT_NEAR(double(hz(s, k, j)), ref[j], eps_times<S>(200) * scale)
                    << "d=" << d << " mode " << i << " order " << k << " probe " << s;
              }
            }
          }
        }
      }
    }
  }
}

/// Host copies of a probe stack's rows: rows[s][m] is probe s's vector of mode m.
template <class C>
std::vector<std::vector<std::vector<double>>> host_probe_rows(std::vector<Probe2<C>> const& stack) {
  std::size_t const w = stack.empty() ? 0 : stack[0].extent(0);
  std::vector<std::vector<std::vector<double>>> rows(w, std::vector<std::vector<double>>(stack.size()));
  for (std::size_t m = 0; m < stack.size(); ++m) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, stack[m]);
    for (std::size_t s = 0; s < w; ++s) rows[s][m] = row(h, s);
  }
  return rows;
}

// Order-0 probes equal contractions of to_dense for every probe of several reduction blocks, chunked a block per pass
// (four passes) and in one; the uniform form changes nothing.
template <class C>
void probes_match_dense_contraction() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  auto tc = t3_cases()[1];
  auto x = t3k::random_t3<S>(space, tc.big_n, tc.n, tc.r, 21);
  auto dense_view = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, t3k::to_dense(space, x));
  std::vector<double> dense(dense_view.data(), dense_view.data() + dense_view.extent(0));
  std::size_t const w = 3 * block_of<C>() + 9;
  auto const chunk = t3k::ChunkSize::of(block_of<C>());
  ASSERT_EQ(chunk_passes<C>(chunk, w), 4u);
  auto ww = random_probe_stack<C>(tc.big_n, w, 3);
  auto z = t3k::probes(space, x, ww);
  auto zu = t3k::probes(space, t3k::to_uniform(space, x), ww);
  auto zc = t3k::probe_derivatives(space, x, ww, ww, 0, chunk);
  auto const ws = host_probe_rows<C>(ww);
  std::size_t const d = tc.big_n.size();
  for (std::size_t i = 0; i < d; ++i) {
    auto hz = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, z[i]);
    auto hzu = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, zu[i]);
    auto hzc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, zc[i]);
    for (std::size_t s = 0; s < w; ++s) {
      auto ref = contract_all_but(dense, tc.big_n, i, ws[s]);
      for (std::size_t j = 0; j < tc.big_n[i]; ++j) {
        EXPECT_NEAR(double(hz(s, j)), ref[j], eps_times<S>(200)) << "mode " << i << " probe " << s;
        EXPECT_NEAR(double(hzc(s, 0, j)), ref[j], eps_times<S>(200)) << "chunked, mode " << i << " probe " << s;
        EXPECT_EQ(hz(s, j), hzu(s, j));     // uniform form: same computation on the same numbers
        EXPECT_EQ(hz(s, j), hzc(s, 0, j));  // chunked: bitwise the same
      }
    }
  }
}

// Probe jets of every probe of several reduction blocks against the subset expansion, in one pass and chunked one and
// two blocks per pass (a block-confined error in a later pass shows against the reference, not only against the
// unchunked run). Ragged ranks, d = 3, every order up to d.
template <class C>
void jets_over_several_blocks_match_subset_expansion() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  auto const tc = t3_cases()[0];
  std::size_t const d = tc.big_n.size(), order = d, b = block_of<C>(), w = 3 * b + 5;
  auto x = t3k::random_t3<S>(space, tc.big_n, tc.n, tc.r, 31);
  auto dense = dense_tensor(host_t3(x));
  auto ww = random_probe_stack<C>(tc.big_n, w, 32);
  auto pp = random_probe_stack<C>(tc.big_n, w, 33);
  auto const ws = host_probe_rows<C>(ww), ps = host_probe_rows<C>(pp);
  // ref[i][(s * (order + 1) + k)]: the subset expansion of mode i's jet, order k, probe s (computed once).
  std::vector<std::vector<std::vector<double>>> ref(d);
  for (std::size_t i = 0; i < d; ++i)
    for (std::size_t s = 0; s < w; ++s)
      for (std::size_t k = 0; k <= order; ++k)
        ref[i].push_back(subset_expansion_jet(dense, tc.big_n, i, k, ws[s], ps[s]));
  for (auto const& chunk : {t3k::ChunkSize::none(), t3k::ChunkSize::of(b), t3k::ChunkSize::of(2 * b + 1)}) {
    if (chunk.kind() == t3k::ChunkSize::Kind::fixed) {
      EXPECT_GE(chunk_passes<C>(chunk, w), 2u) << chunk.to_string();
    }
    auto z = t3k::probe_derivatives(space, x, ww, pp, order, chunk);
    for (std::size_t i = 0; i < d; ++i) {
      auto hz = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, z[i]);
      for (std::size_t s = 0; s < w; ++s) {
        for (std::size_t k = 0; k <= order; ++k) {
          auto const& r = ref[i][s * (order + 1) + k];
          double scale = 1;
          for (auto v : r) scale = std::max(scale, std::abs(v));
          for (std::size_t j = 0; j < tc.big_n[i]; ++j) {
            if (k >= d) {
              EXPECT_EQ(double(hz(s, k, j)), 0.0) << "chunk " << chunk.to_string() << " probe " << s;
            } else {
              EXPECT_NEAR(double(hz(s, k, j)), r[j], eps_times<S>(200) * scale)
                  << "chunk " << chunk.to_string() << " mode " << i << " order " << k << " probe " << s;
            }
          }
        }
      }
    }
  }
}

// Taylor coefficients against interpolation: z_i(t) at d distinct t from order-0 probes with w + t p.
template <class C>
void jets_are_taylor_coefficients() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  std::vector<std::size_t> big_n{3, 4, 2, 3}, n{2, 3, 2, 2}, r{1, 2, 2, 3, 1};
  std::size_t const d = big_n.size(), w = 3;
  auto x = t3k::random_t3<S>(space, big_n, n, r, 5);
  auto ww = random_probe_stack<C>(big_n, w, 8);
  auto pp = random_probe_stack<C>(big_n, w, 9);
  auto jets = t3k::probe_derivatives(space, x, ww, pp, d - 1);
  // z_i(t) = sum_k t^k z^(k): evaluate at t in {-1, 0.5, 1, 2} through shifted order-0 probes.
  for (double t : {-1.0, 0.5, 1.0, 2.0}) {
    std::vector<Probe2<C>> shifted;
    for (std::size_t m = 0; m < d; ++m) {
      Probe2<C> v("shifted", w, big_n[m]);
      auto hw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, ww[m]);
      auto hp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, pp[m]);
      auto hv = Kokkos::create_mirror_view(v);
      for (std::size_t s = 0; s < w; ++s)
        for (std::size_t j = 0; j < big_n[m]; ++j) hv(s, j) = S(hw(s, j) + t * hp(s, j));
      Kokkos::deep_copy(v, hv);
      shifted.push_back(v);
    }
    auto z = t3k::probes(space, x, shifted);
    for (std::size_t i = 0; i < d; ++i) {
      auto hz = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, z[i]);
      auto hj = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, jets[i]);
      for (std::size_t s = 0; s < w; ++s)
        for (std::size_t j = 0; j < big_n[i]; ++j) {
          double poly = 0, tk = 1;
          for (std::size_t k = 0; k < d; ++k, tk *= t) poly += tk * double(hj(s, k, j));
          EXPECT_NEAR(poly, double(hz(s, j)), eps_times<S>(2000)) << "t=" << t;
        }
    }
  }
}

template <class View>
std::vector<double> flat(View const& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
  return std::vector<double>(h.data(), h.data() + h.span());
}

// The symmetric convenience broadcasts one (w, p) to every mode.
template <class C>
void symmetric_probes_broadcast() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  std::vector<std::size_t> big_n{4, 4, 4};
  auto x = t3k::random_t3<S>(space, big_n, {2, 3, 2}, {1, 2, 2, 1}, 4);
  auto w = random_probe_stack<C>({4}, 6, 1)[0];
  auto p = random_probe_stack<C>({4}, 6, 2)[0];
  auto zs = t3k::probe_derivatives_symmetric(space, x, w, p, 2);
  auto z = t3k::probe_derivatives(space, x, std::vector<Probe2<C>>(3, w), std::vector<Probe2<C>>(3, p), 2);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(flat(zs[i]), flat(z[i]));
  auto bad = t3k::random_t3<S>(space, {4, 3}, {2, 2}, {1, 2, 1}, 4);
  EXPECT_THROW(t3k::probe_derivatives_symmetric(space, bad, w, p, 1), t3k::DimensionMismatch);
}

template <class C>
void bad_probe_stacks_throw() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  auto x = t3k::random_t3<S>(space, {4, 5, 3}, {3, 2, 4}, {1, 2, 3, 1}, 1);
  auto ww = random_probe_stack<C>({4, 5, 3}, 4, 1);
  auto two = std::vector<Probe2<C>>(ww.begin(), ww.begin() + 2);
  try {
    t3k::probes(space, x, two);
    FAIL();
  } catch (t3k::DimensionMismatch const& e) {
    EXPECT_NE(std::string(e.what()).find("got 2 ww probe-vector arrays for a T3 with d = 3"), std::string::npos)
        << e.what();
  }
  auto wrong = random_probe_stack<C>({4, 6, 3}, 4, 1);
  try {
    t3k::probe_derivatives(space, x, wrong, wrong, 1);
    FAIL();
  } catch (t3k::DimensionMismatch const& e) {
    EXPECT_NE(std::string(e.what()).find("ww[1] has shape [4 x 6], expected [4 x 5]"), std::string::npos) << e.what();
  }
  auto fewer = random_probe_stack<C>({4, 5, 3}, 3, 1);
  EXPECT_THROW(t3k::probe_derivatives(space, x, ww, fewer, 1), t3k::DimensionMismatch);
}

// The _into forms overwrite every entry of caller-owned arrays (prefilled with NaN, so an entry left unwritten,
// such as an order >= d that must be zero, shows) with the bits of the allocating forms, and reject arrays of the
// wrong shape naming the array and mode.
template <class C>
void into_forms_overwrite_caller_arrays() {
  using S = typename C::scalar_type;
  using Mem = typename C::memory_space;
  typename C::execution_space space;
  std::size_t const w = block_of<C>() + 6;  // two passes of one block at the chunk size below
  S const nan = std::numeric_limits<S>::quiet_NaN();
  // The checks after the loop reuse the inputs of its last case (d = 5).
  T3ShapeCase tc;
  t3k::TuckerTensorTrain<S, Mem> x;
  std::vector<Probe2<C>> ww, pp;
  std::size_t d = 0;
  for (auto const& c : {wide_rank_case(), T3ShapeCase{{2, 3, 2, 3, 2}, {2, 2, 1, 3, 2}, {1, 2, 3, 2, 2, 1}}}) {
    tc = c;
    d = tc.big_n.size();
    x = t3k::random_t3<S>(space, tc.big_n, tc.n, tc.r, 8);
    ww = random_probe_stack<C>(tc.big_n, w, 4);
    pp = random_probe_stack<C>(tc.big_n, w, 5);
    for (std::size_t order : {std::size_t(0), std::size_t(2), d + 1}) {
      t3k::ProbeJets<S, Mem> z;
      for (auto n : tc.big_n) {
        z.emplace_back("z", w, order + 1, n);
        Kokkos::deep_copy(z.back(), nan);
      }
      ASSERT_EQ(chunk_passes<C>(t3k::ChunkSize::of(16), w), 2u);
      t3k::probe_derivatives_into(space, x, ww, pp, order, z, t3k::ChunkSize::of(16));
      auto ref = t3k::probe_derivatives(space, x, ww, pp, order);
      for (std::size_t i = 0; i < d; ++i) {
        EXPECT_EQ(flat(z[i]), flat(ref[i])) << "d " << d << " order " << order << " mode " << i;
      }
    }
  }
  t3k::Probes<S, Mem> z0;
  for (auto n : tc.big_n) {
    z0.emplace_back("z0", w, n);
    Kokkos::deep_copy(z0.back(), nan);
  }
  t3k::probes_into(space, x, ww, z0);
  auto ref0 = t3k::probes(space, x, ww);
  for (std::size_t i = 0; i < d; ++i) EXPECT_EQ(flat(z0[i]), flat(ref0[i])) << "mode " << i;

  auto bad = z0;
  bad[1] = Probe2<C>("bad", w, tc.big_n[1] + 1);
  try {
    t3k::probes_into(space, x, ww, bad);
    FAIL();
  } catch (t3k::DimensionMismatch const& e) {
    EXPECT_NE(std::string(e.what()).find("z[1] has shape"), std::string::npos) << e.what();
  }
  t3k::ProbeJets<S, Mem> short_jets;
  for (auto n : tc.big_n) short_jets.emplace_back("z", w, 2, n);
  try {
    t3k::probe_derivatives_into(space, x, ww, pp, 2, short_jets);  // K + 1 = 3 coefficients expected
    FAIL();
  } catch (t3k::DimensionMismatch const& e) {
    EXPECT_NE(std::string(e.what()).find("z[0] has shape"), std::string::npos) << e.what();
  }
  short_jets.pop_back();
  EXPECT_THROW(t3k::probe_derivatives_into(space, x, ww, pp, 1, short_jets), t3k::DimensionMismatch);
}

// Probe rows that are not one contiguous matrix (LayoutLeft here) are packed block by block into a buffer with one
// block per thread's row range: probes over several ranges at once (one pass) equal those of one block per pass
// bitwise, and the contiguous probes' values (which skip the packing) to rounding.
template <class C>
void strided_probes_match_contiguous() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  std::size_t const w = 3 * block_of<C>() + 10;  // four blocks: two or more row ranges on two threads
  auto tc = wide_rank_case();
  auto x = t3k::random_t3<S>(space, tc.big_n, tc.n, tc.r, 8);
  auto ww = random_probe_stack<C>(tc.big_n, w, 4);
  auto pp = random_probe_stack<C>(tc.big_n, w, 5);
  auto const ws = layout_left_copies(ww), ps = layout_left_copies(pp);
  std::size_t const order = 2;
  auto ref = t3k::probe_derivatives(space, x, ww, pp, order);
  auto one_pass = t3k::probe_derivatives(space, x, ws, ps, order, t3k::ChunkSize::none());
  auto per_block = t3k::probe_derivatives(space, x, ws, ps, order, t3k::ChunkSize::of(1));
  for (std::size_t i = 0; i < ww.size(); ++i) {
    expect_bitwise_equal_and_near(flat(one_pass[i]), flat(per_block[i]), flat(ref[i]), eps_times<S>(100),
                                  "mode " + std::to_string(i));
  }
}

// The probe jets of one chosen mode equal that mode of probe_derivatives (every mode, every order K = 0..d+1, the
// shapes of t3_cases), whatever the chunk; a mode >= d is refused.
template <class C>
void mode_probes_equal_that_mode_of_all_probes() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  std::size_t const w = 70;  // more than one host block
  for (auto const& tc : t3_cases()) {
    auto x = t3k::random_t3<S>(space, tc.big_n, tc.n, tc.r, 3);
    auto ww = random_probe_stack<C>(tc.big_n, w, 10);
    auto pp = random_probe_stack<C>(tc.big_n, w, 20);
    std::size_t const d = tc.big_n.size();
    for (std::size_t order = 0; order <= d + 1; ++order) {
      auto all = t3k::probe_derivatives(space, x, ww, pp, order);
      for (std::size_t mode = 0; mode < d; ++mode) {
        auto one = Kokkos::create_mirror_view_and_copy(
            Kokkos::HostSpace{}, t3k::probe_mode_derivatives(space, x, ww, pp, order, mode, t3k::ChunkSize::of(64)));
        auto ref = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, all[mode]);
        ASSERT_EQ(one.extent(2), ref.extent(2));
        double scale = 1;
        for (std::size_t e = 0; e < ref.span(); ++e) scale = std::max(scale, std::abs(double(ref.data()[e])));
        for (std::size_t e = 0; e < ref.span(); ++e) {
          EXPECT_NEAR(double(one.data()[e]), double(ref.data()[e]), eps_times<S>(64) * scale)
              << "mode " << mode << " order " << order << " d " << d << " entry " << e;
        }
      }
    }
    EXPECT_THROW(t3k::probe_mode_derivatives(space, x, ww, pp, 1, d), t3k::InvalidArgument);
  }
}

template <class C>
class ProbeDerivativesTest : public ::testing::Test {};
TYPED_TEST_SUITE(ProbeDerivativesTest, TestConfigs);

TYPED_TEST(ProbeDerivativesTest, JetsMatchSubsetExpansion) { jets_match_subset_expansion<TypeParam>(); }
TYPED_TEST(ProbeDerivativesTest, ProbesMatchDenseContraction) { probes_match_dense_contraction<TypeParam>(); }
TYPED_TEST(ProbeDerivativesTest, JetsOverSeveralBlocksMatchSubsetExpansion) {
  jets_over_several_blocks_match_subset_expansion<TypeParam>();
}
TYPED_TEST(ProbeDerivativesTest, ModeProbesEqualThatModeOfAllProbes) {
  mode_probes_equal_that_mode_of_all_probes<TypeParam>();
}
TYPED_TEST(ProbeDerivativesTest, JetsAreTaylorCoefficients) { jets_are_taylor_coefficients<TypeParam>(); }
TYPED_TEST(ProbeDerivativesTest, SymmetricProbesBroadcast) { symmetric_probes_broadcast<TypeParam>(); }
TYPED_TEST(ProbeDerivativesTest, BadProbeStacksThrow) { bad_probe_stacks_throw<TypeParam>(); }
TYPED_TEST(ProbeDerivativesTest, IntoFormsOverwriteCallerArrays) { into_forms_overwrite_caller_arrays<TypeParam>(); }
TYPED_TEST(ProbeDerivativesTest, StridedProbesMatchContiguous) { strided_probes_match_contiguous<TypeParam>(); }

}  // namespace
