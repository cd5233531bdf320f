// The forward Jacobian J and its chunked transpose J^T (docs/math.md) against brute-force references:
// dense tangents T(v) built term by term, the subset expansion of probe jets, and the explicit Jacobian matrix.
#include "frame_reference.hpp"
#include "random_views.hpp"
#include "test_devices.hpp"

#include "t3k/algorithms/probe_derivatives_transpose.hpp"
#include "t3k/algorithms/random_t3.hpp"
#include "t3k/algorithms/t3_tangent.hpp"
#include "t3k/algorithms/tangent_probe_derivatives.hpp"
#include "t3k/core/memory_tracking.hpp"

#include <limits>

namespace {

using namespace t3k_test;

// (On host backends: device backends, and builds with T3K_DEVICE_CODE_PATHS_ON_HOST, keep the product-first order.)
static_assert(!t3k::impl::runs_on_host<Kokkos::DefaultHostExecutionSpace>() ||
                  t3k::impl::khatri_rao_first<Kokkos::DefaultHostExecutionSpace>(32),
              "the wide-rank frame case must take the Khatri-Rao-first step it is there to test");

template <class View>
std::vector<double> host_row(View const& v, std::size_t s) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
  std::vector<double> r(h.extent(1));
  for (std::size_t j = 0; j < r.size(); ++j) r[j] = double(h(s, j));
  return r;
}

// Brute-force probe jets (s, k, j) of a dense tensor for every mode, flattened mode by mode.
template <class C>
std::vector<std::vector<double>> brute_jets(std::vector<double> const& dense, std::vector<std::size_t> const& shapes,
                                            std::vector<Probe2<C>> const& ww, std::vector<Probe2<C>> const& pp,
                                            std::size_t order) {
  std::size_t const d = shapes.size(), w = ww[0].extent(0);
  std::vector<std::vector<double>> out(d);
  for (std::size_t i = 0; i < d; ++i) {
    for (std::size_t s = 0; s < w; ++s) {
      std::vector<std::vector<double>> ws(d), ps(d);
      for (std::size_t m = 0; m < d; ++m) {
        ws[m] = host_row(ww[m], s);
        ps[m] = host_row(pp[m], s);
      }
      for (std::size_t k = 0; k <= order; ++k) {
        auto z = subset_expansion_jet(dense, shapes, i, k, ws, ps);
        out[i].insert(out[i].end(), z.begin(), z.end());
      }
    }
  }
  return out;
}

double dot(std::vector<double> const& a, std::vector<double> const& b) {
  double s = 0;
  for (std::size_t e = 0; e < a.size(); ++e) s += a[e] * b[e];
  return s;
}

// J(v) equals the probe jets of the dense tangent T(v), every order including K >= d, stacks of tangents.
template <class C>
void tangent_jets_match_brute_force() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  std::size_t const w = 3, nt = 2;
  for (auto const& fc : frame_shape_cases()) {
    auto f = random_frame<S, typename C::memory_space>(space, fc, 3);
    auto v = random_variation_for_test(space, f, nt, 4);
    auto ww = probe_stack<C>(fc.big_n, w, 10);
    auto pp = probe_stack<C>(fc.big_n, w, 20);
    std::size_t const d = fc.big_n.size();
    for (std::size_t order = 0; order <= d + 1; ++order) {
      auto z = t3k::tangent_probe_derivatives(space, f, v, ww, pp, order);
      for (std::size_t t = 0; t < nt; ++t) {
        auto ref = brute_jets<C>(dense_tangent(f, v, t), fc.big_n, ww, pp, order);
        for (std::size_t i = 0; i < d; ++i) {
          auto zt = flat_host(Kokkos::subview(z[i], t, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL));
          ASSERT_EQ(zt.size(), ref[i].size());
          double scale = 1;
          for (auto x : ref[i]) scale = std::max(scale, std::abs(x));
          for (std::size_t e = 0; e < zt.size(); ++e) {
            EXPECT_NEAR(zt[e], ref[i][e], eps_times<S>(400) * scale) << "d=" << d << " K=" << order << " mode " << i;
          }
        }
      }
    }
  }
}

// <J v, r> = <v, J^T r> for random ungauged v and r, stacks of tangents and residuals.
template <class C>
void adjoint_identity_holds() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  std::size_t const w = 11, nt = 3;
  for (auto const& fc : frame_shape_cases()) {
    auto f = random_frame<S, typename C::memory_space>(space, fc, 5);
    auto v = random_variation_for_test(space, f, nt, 6);
    auto ww = probe_stack<C>(fc.big_n, w, 30);
    auto pp = probe_stack<C>(fc.big_n, w, 40);
    std::size_t const d = fc.big_n.size();
    for (std::size_t order : {std::size_t(0), std::size_t(1), std::size_t(2), d + 1}) {
      auto jv = t3k::tangent_probe_derivatives(space, f, v, ww, pp, order);
      std::vector<Jets4<C>> r;
      for (std::size_t i = 0; i < d; ++i)
        r.push_back(random_view(Jets4<C>("r", nt, w, order + 1, fc.big_n[i]), 50 + i));
      auto g = t3k::probe_derivatives_transpose(space, f, ww, pp, r);
      ASSERT_EQ(g.n_stack(), nt);
      for (std::size_t t = 0; t < nt; ++t) {
        double lhs = 0, rhs = 0, njv = 0, nr = 0;
        for (std::size_t i = 0; i < d; ++i) {
          auto a = flat_host(Kokkos::subview(jv[i], t, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL));
          auto b = flat_host(Kokkos::subview(r[i], t, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL));
          lhs += dot(a, b);
          njv += dot(a, a);
          nr += dot(b, b);
          rhs += dot(flat_host(Kokkos::subview(v.tucker[i], t, Kokkos::ALL, Kokkos::ALL)),
                     flat_host(Kokkos::subview(g.tucker[i], t, Kokkos::ALL, Kokkos::ALL)));
          rhs += dot(flat_host(Kokkos::subview(v.tt[i], t, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL)),
                     flat_host(Kokkos::subview(g.tt[i], t, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL)));
        }
        // 1e-12 in double; float: a few hundred epsilons of the same scale.
        double const tol = std::max(1e-12, eps_times<S>(500)) * std::sqrt(njv * nr);
        EXPECT_NEAR(lhs, rhs, tol) << "d=" << d << " K=" << order << " t=" << t;
      }
    }
  }
}

// J^T equals the transpose of the explicit Jacobian matrix (columns: dense tangents of unit variations), summed
// and per probe; per-probe results summed over W equal the summed result.
template <class C>
void transpose_matches_explicit_jacobian() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  std::size_t const w = 3, order = 2;
  for (std::size_t case_index : {0, 1, 2, 4}) {
    auto fc = frame_shape_cases()[case_index];
    std::size_t const d = fc.big_n.size();
    auto f = random_frame<S, typename C::memory_space>(space, fc, 7);
    auto ww = probe_stack<C>(fc.big_n, w, 60);
    auto pp = probe_stack<C>(fc.big_n, w, 70);
    std::vector<Jets3<C>> r;
    for (std::size_t i = 0; i < d; ++i) r.push_back(random_view(Jets3<C>("r", w, order + 1, fc.big_n[i]), 80 + i));
    std::vector<std::vector<double>> rh;
    for (auto const& ri : r) rh.push_back(flat_host(ri));
    auto g = t3k::probe_derivatives_transpose(space, f, ww, pp, r);
    auto gp =
        t3k::probe_derivatives_transpose(space, f, ww, pp, r, t3k::TransposeOptions{false, t3k::ChunkSize::none()});
    ASSERT_EQ(gp.n_stack(), w);
    // Walk every variation entry: a unit variation e gives column J e; then (J^T r)[e] = <J e, r>.
    auto unit = t3k::zero_variation<S>(space, f, 1);
    auto check_core = [&](auto const& var_core, auto const& g_core, auto const& gp_core, std::string const& name) {
      auto hv = Kokkos::create_mirror_view(var_core);
      auto hg = flat_host(g_core);
      auto hgp = flat_host(gp_core);
      std::size_t const entries = hv.span();
      for (std::size_t e = 0; e < entries; ++e) {
        Kokkos::deep_copy(hv, S(0));
        hv.data()[e] = S(1);
        Kokkos::deep_copy(var_core, hv);
        auto column = brute_jets<C>(dense_tangent(f, unit, 0), fc.big_n, ww, pp, order);
        double summed = 0;
        for (std::size_t s = 0; s < w; ++s) {
          double per_probe = 0;
          for (std::size_t i = 0; i < d; ++i) {
            std::size_t const block = (order + 1) * fc.big_n[i];
            for (std::size_t q = s * block; q < (s + 1) * block; ++q) per_probe += column[i][q] * rh[i][q];
          }
          EXPECT_NEAR(hgp[s * entries + e], per_probe, std::max(1e-12, eps_times<S>(200)) * 10)
              << name << " entry " << e << " probe " << s;
          summed += per_probe;
        }
        EXPECT_NEAR(hg[e], summed, std::max(1e-12, eps_times<S>(200)) * 10) << name << " entry " << e;
      }
      Kokkos::deep_copy(hv, S(0));
      Kokkos::deep_copy(var_core, hv);
    };
    for (std::size_t i = 0; i < d; ++i) {
      check_core(unit.tucker[i], g.tucker[i], gp.tucker[i], "V~_" + std::to_string(i));
      check_core(unit.tt[i], g.tt[i], gp.tt[i], "H~_" + std::to_string(i));
    }
  }
}

// Summed J^T is bitwise the unchunked result for every chunk size (docs/math.md); per-probe results too.
template <class C>
void chunked_transpose_equals_dense_bitwise() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  std::size_t const b = block_of<C>();
  std::size_t const w = 3 * b + 36, nt = 2, order = 2;  // three blocks and a part of one
  for (std::size_t case_index : {0, 3}) {
    auto fc = frame_shape_cases()[case_index];
    std::size_t const d = fc.big_n.size();
    auto f = random_frame<S, typename C::memory_space>(space, fc, 9);
    auto ww = probe_stack<C>(fc.big_n, w, 90);
    auto pp = probe_stack<C>(fc.big_n, w, 95);
    std::vector<Jets4<C>> r;
    for (std::size_t i = 0; i < d; ++i) r.push_back(random_view(Jets4<C>("r", nt, w, order + 1, fc.big_n[i]), 99 + i));
    auto dense = t3k::probe_derivatives_transpose(space, f, ww, pp, r, {true, t3k::ChunkSize::none()});
    auto dense_pp = t3k::probe_derivatives_transpose(space, f, ww, pp, r, {false, t3k::ChunkSize::none()});
    for (std::size_t c : {std::size_t(1), std::size_t(7), b, b + 7, 2 * b, w - 1, w, w + 3}) {
      // Every size below W makes several passes (1, 7 and b: four; 2b: two; W - 1: 3b and a rest).
      if (c < w) {
        EXPECT_GE(chunk_passes<C>(t3k::ChunkSize::of(c), w), 2u) << "chunk " << c;
      }
      auto chunked = t3k::probe_derivatives_transpose(space, f, ww, pp, r, {true, t3k::ChunkSize::of(c)});
      auto chunked_pp = t3k::probe_derivatives_transpose(space, f, ww, pp, r, {false, t3k::ChunkSize::of(c)});
      for (std::size_t i = 0; i < d; ++i) {
        EXPECT_EQ(flat_host(chunked.tucker[i]), flat_host(dense.tucker[i])) << "chunk " << c << " V~_" << i;
        EXPECT_EQ(flat_host(chunked.tt[i]), flat_host(dense.tt[i])) << "chunk " << c << " H~_" << i;
        EXPECT_EQ(flat_host(chunked_pp.tucker[i]), flat_host(dense_pp.tucker[i])) << "chunk " << c;
        EXPECT_EQ(flat_host(chunked_pp.tt[i]), flat_host(dense_pp.tt[i])) << "chunk " << c;
      }
    }
    // Per-probe gradients summed over W equal the summed gradient (to rounding: a different summation order).
    for (std::size_t i = 0; i < d; ++i) {
      auto summed = flat_host(dense.tucker[i]);
      auto per = flat_host(dense_pp.tucker[i]);
      std::size_t const entries = summed.size() / nt;
      for (std::size_t t = 0; t < nt; ++t)
        for (std::size_t e = 0; e < entries; ++e) {
          double acc = 0, abs_acc = 0;
          for (std::size_t s = 0; s < w; ++s) {
            acc += per[(t * w + s) * entries + e];
            abs_acc += std::abs(per[(t * w + s) * entries + e]);
          }
          // Rounding of two summation orders over w probes: a few units of S's epsilon relative to the sum of the
          // terms' magnitudes (measured: at most 1.2 of them, on host and device code paths).
          EXPECT_NEAR(acc, summed[t * entries + e], eps_times<S>(16) * abs_acc);
        }
    }
  }
}

// Probe rows of every probe as host vectors: rows[s][m] is probe s's vector of mode m.
template <class C>
std::vector<std::vector<std::vector<double>>> host_rows(std::vector<Probe2<C>> const& stack) {
  std::size_t const w = stack[0].extent(0);
  std::vector<std::vector<std::vector<double>>> rows(w, std::vector<std::vector<double>>(stack.size()));
  for (std::size_t m = 0; m < stack.size(); ++m) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, stack[m]);
    for (std::size_t s = 0; s < w; ++s)
      for (std::size_t j = 0; j < h.extent(1); ++j) rows[s][m].push_back(double(h(s, j)));
  }
  return rows;
}

// Over several reduction blocks, chunked a block per pass and two blocks per pass: J(v) equals the subset expansion
// of the dense tangent T(v) for every probe, and J^T, summed and per probe, satisfies <J v, r>_s = <v, (J^T r)_s> for
// every probe s and summed over them (J^T checked against the J just checked against the brute force, on random v:
// an error in any block's contribution shows in the inner product).
template <class C>
void chunked_jacobian_and_transpose_match_references_over_several_blocks() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  auto const fc = frame_shape_cases()[0];  // ragged, d = 3
  std::size_t const d = fc.big_n.size(), b = block_of<C>(), w = 3 * b + 5, nt = 2, order = 2;
  auto f = random_frame<S, typename C::memory_space>(space, fc, 41);
  auto v = random_variation_for_test(space, f, nt, 42);
  auto ww = probe_stack<C>(fc.big_n, w, 43);
  auto pp = probe_stack<C>(fc.big_n, w, 44);
  std::vector<Jets4<C>> r;
  for (std::size_t i = 0; i < d; ++i) r.push_back(random_view(Jets4<C>("r", nt, w, order + 1, fc.big_n[i]), 45 + i));
  auto const ws = host_rows<C>(ww), ps = host_rows<C>(pp);
  std::vector<std::vector<double>> rh;
  for (auto const& ri : r) rh.push_back(flat_host(ri));
  // ref[t][i]: the brute-force jets of T(v_t), (s, k, j) flattened.
  std::vector<std::vector<std::vector<double>>> ref(nt, std::vector<std::vector<double>>(d));
  for (std::size_t t = 0; t < nt; ++t) {
    auto const dense = dense_tangent(f, v, t);
    for (std::size_t i = 0; i < d; ++i)
      for (std::size_t s = 0; s < w; ++s)
        for (std::size_t k = 0; k <= order; ++k) {
          auto z = subset_expansion_jet(dense, fc.big_n, i, k, ws[s], ps[s]);
          ref[t][i].insert(ref[t][i].end(), z.begin(), z.end());
        }
  }
  for (auto const& chunk : {t3k::ChunkSize::of(1), t3k::ChunkSize::of(2 * b)}) {
    std::string const what = "chunk " + chunk.to_string();
    EXPECT_GE(chunk_passes<C>(chunk, w), 2u) << what;
    auto jv = t3k::tangent_probe_derivatives(space, f, v, ww, pp, order, chunk);
    auto g = t3k::probe_derivatives_transpose(space, f, ww, pp, r, {true, chunk});
    auto gp = t3k::probe_derivatives_transpose(space, f, ww, pp, r, {false, chunk});
    ASSERT_EQ(gp.n_stack(), nt * w);
    for (std::size_t t = 0; t < nt; ++t) {
      // <J v_t, r_t> per probe, from the reference jets.
      std::vector<double> lhs(w, 0.0), lhs_abs(w, 0.0);
      for (std::size_t i = 0; i < d; ++i) {
        auto zt = flat_host(Kokkos::subview(jv[i], t, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL));
        ASSERT_EQ(zt.size(), ref[t][i].size());
        double scale = 1;
        for (auto x : ref[t][i]) scale = std::max(scale, std::abs(x));
        std::size_t const per = (order + 1) * fc.big_n[i];
        for (std::size_t e = 0; e < zt.size(); ++e) {
          EXPECT_NEAR(zt[e], ref[t][i][e], eps_times<S>(400) * scale) << what << " mode " << i << " probe " << e / per;
          lhs[e / per] += ref[t][i][e] * rh[i][t * w * per + e];
          lhs_abs[e / per] += std::abs(ref[t][i][e] * rh[i][t * w * per + e]);
        }
      }
      // <v_t, (J^T r_t)_s> per probe and summed.
      std::vector<double> rhs(w, 0.0);
      double summed = 0, lhs_total = 0, lhs_total_abs = 0;
      auto add_core = [&](auto const& v_core, auto const& g_core, auto const& gp_core) {
        auto const vt = flat_host(v_core);
        auto const gs = flat_host(g_core);
        auto const gps = flat_host(gp_core);
        std::size_t const n = vt.size() / nt;
        for (std::size_t e = 0; e < n; ++e) {
          summed += vt[t * n + e] * gs[t * n + e];
          for (std::size_t s = 0; s < w; ++s) rhs[s] += vt[t * n + e] * gps[(t * w + s) * n + e];
        }
      };
      for (std::size_t i = 0; i < d; ++i) {
        add_core(v.tucker[i], g.tucker[i], gp.tucker[i]);
        add_core(v.tt[i], g.tt[i], gp.tt[i]);
      }
      // The two sides sum the same products in different orders: a few hundred epsilons of the terms' magnitudes,
      // times the variation's size for the sum over its entries (|v| and |J^T r| are O(1) here).
      for (std::size_t s = 0; s < w; ++s) {
        EXPECT_NEAR(rhs[s], lhs[s], eps_times<S>(400) * (1 + lhs_abs[s])) << what << " t " << t << " probe " << s;
        lhs_total += lhs[s];
        lhs_total_abs += lhs_abs[s];
      }
      EXPECT_NEAR(summed, lhs_total, eps_times<S>(400) * (1 + lhs_total_abs)) << what << " t " << t << " summed";
    }
  }
}

// Under sum_over_probes = true, the bytes J^T allocates depend on the chunk size and not on W (measured).
template <class C>
void peak_memory_grows_with_chunk_not_probes() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  auto fc = frame_shape_cases()[3];
  std::size_t const d = fc.big_n.size(), order = 2;
  auto f = random_frame<S, typename C::memory_space>(space, fc, 1);
  auto measure = [&](std::size_t w, std::size_t chunk) {
    auto ww = probe_stack<C>(fc.big_n, w, 1);
    auto pp = probe_stack<C>(fc.big_n, w, 2);
    std::vector<Jets3<C>> r;
    for (std::size_t i = 0; i < d; ++i) r.push_back(random_view(Jets3<C>("r", w, order + 1, fc.big_n[i]), 3));
    space.fence();
    t3k::AllocationTracker tracker;
    {
      auto g = t3k::probe_derivatives_transpose(space, f, ww, pp, r, {true, t3k::ChunkSize::of(chunk)});
      space.fence();
    }
    return tracker.peak(typename C::memory_space().name());
  };
  std::size_t const block = block_of<C>();
  std::size_t const small = 6 * block + block / 4, large = 25 * block;  // 400 and 1600 probes on host backends
  auto small_w = measure(small, block);
  auto large_w = measure(large, block);
  auto larger_chunk = measure(large, 4 * block);
  EXPECT_GT(small_w, 0);
  EXPECT_EQ(small_w, large_w) << "peak bytes must not grow with W at a fixed chunk size";
  EXPECT_GT(larger_chunk, large_w) << "peak bytes grow with the chunk size";
  // Chunk sizes are rounded down to whole blocks (at least one): 1 and block + 5 allocate what one block does.
  EXPECT_EQ(measure(large, 1), large_w);
  EXPECT_EQ(measure(large, block + 5), large_w);
}

template <class C>
void bad_residuals_throw() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  auto fc = frame_shape_cases()[0];
  auto f = random_frame<S, typename C::memory_space>(space, fc, 1);
  auto ww = probe_stack<C>(fc.big_n, 4, 1);
  std::vector<Jets3<C>> r{Jets3<C>("r", 4, 3, 4), Jets3<C>("r", 4, 3, 3), Jets3<C>("r", 4, 2, 5)};
  try {
    t3k::probe_derivatives_transpose(space, f, ww, ww, r);
    FAIL();
  } catch (t3k::DimensionMismatch const& e) {
    EXPECT_NE(std::string(e.what()).find("residuals[2] has shape [4 x 2 x 5], expected [4 x 3 x 5]"), std::string::npos)
        << e.what();
  }
  auto v = t3k::zero_variation<S>(space, f, 1);
  v.tt.pop_back();
  EXPECT_THROW(t3k::tangent_probe_derivatives(space, f, v, ww, ww, 1), t3k::DimensionMismatch);
  EXPECT_THROW(t3k::ChunkSize::of(0), t3k::InvalidArgument);
  EXPECT_THROW(t3k::ChunkSize::parse("-3"), t3k::InvalidArgument);
  EXPECT_EQ(t3k::ChunkSize::parse("17").rows(), 17u);
}

// tangent_probe_derivatives_into overwrites every entry of caller-owned arrays (prefilled with NaN, so orders >= d
// left unwritten would show) with the bits of the allocating form, which runs in other chunks (16 probes against
// the automatic chunk), and names the array of the wrong shape.
template <class C>
void tangent_into_overwrites_caller_arrays() {
  using S = typename C::scalar_type;
  using Mem = typename C::memory_space;
  typename C::execution_space space;
  std::size_t const w = 70, nt = 2;
  // The shape checks after the loop reuse the inputs of its last case (d = 4).
  FrameShapeCase fc;
  t3k::OrthogonalFrame<S, Mem> f;
  t3k::T3Variation<S, Mem> v;
  std::vector<Probe2<C>> ww, pp;
  t3k::TangentProbeJets<S, Mem> z;
  std::size_t d = 0, order = 0;
  for (std::size_t case_index : {5, 3}) {  // wide ranks at core 1 (Khatri-Rao-first step); d = 4
    fc = frame_shape_cases()[case_index];
    f = random_frame<S, Mem>(space, fc, 6);
    d = fc.big_n.size();
    order = d + 1;
    v = random_variation_for_test(space, f, nt, 7);
    ww = probe_stack<C>(fc.big_n, w, 30);
    pp = probe_stack<C>(fc.big_n, w, 40);
    z.clear();
    for (auto n : fc.big_n) {
      z.emplace_back("z", nt, w, order + 1, n);
      Kokkos::deep_copy(z.back(), std::numeric_limits<S>::quiet_NaN());
    }
    t3k::tangent_probe_derivatives_into(space, f, v, ww, pp, order, z, t3k::ChunkSize::of(16));
    auto ref = t3k::tangent_probe_derivatives(space, f, v, ww, pp, order);
    for (std::size_t i = 0; i < d; ++i) {
      EXPECT_EQ(flat_host(z[i]), flat_host(ref[i])) << "case " << case_index << " mode " << i;
    }
  }
  z[d - 1] = Jets4<C>("short", nt, w, order, fc.big_n[d - 1]);  // K coefficients where K + 1 are due
  try {
    t3k::tangent_probe_derivatives_into(space, f, v, ww, pp, order, z);
    FAIL();
  } catch (t3k::DimensionMismatch const& e) {
    EXPECT_NE(std::string(e.what()).find(t3k::impl::concat("z[", d - 1, "] has shape")), std::string::npos) << e.what();
  }
}

// J on probe rows that are not one contiguous matrix (LayoutLeft): packed block by block, one block per thread's row
// range. One pass over several ranges equals one block per pass bitwise, and the contiguous probes' J to rounding.
template <class C>
void tangent_jets_of_strided_probes() {
  using S = typename C::scalar_type;
  using Mem = typename C::memory_space;
  typename C::execution_space space;
  std::size_t const w = 3 * block_of<C>() + 10, nt = 2, order = 2;
  auto fc = frame_shape_cases()[5];  // wide ranks at core 1 (Khatri-Rao-first step)
  auto f = random_frame<S, Mem>(space, fc, 6);
  auto v = random_variation_for_test(space, f, nt, 7);
  auto ww = probe_stack<C>(fc.big_n, w, 30);
  auto pp = probe_stack<C>(fc.big_n, w, 40);
  auto const ws = layout_left_copies(ww), ps = layout_left_copies(pp);
  auto ref = t3k::tangent_probe_derivatives(space, f, v, ww, pp, order);
  auto one_pass = t3k::tangent_probe_derivatives(space, f, v, ws, ps, order, t3k::ChunkSize::none());
  auto per_block = t3k::tangent_probe_derivatives(space, f, v, ws, ps, order, t3k::ChunkSize::of(1));
  for (std::size_t i = 0; i < ww.size(); ++i) {
    expect_bitwise_equal_and_near(flat_host(one_pass[i]), flat_host(per_block[i]), flat_host(ref[i]), eps_times<S>(100),
                                  "mode " + std::to_string(i));
  }
}

// J^T packs each chunk's probe pairs and residual jets into contiguous jets: whole rows at a time where the caller's
// rows are contiguous (LayoutRight), entry by entry otherwise (LayoutLeft). Both copy the same values, so the
// gradients are bitwise equal, summed and per probe.
template <class C>
void transpose_of_strided_inputs_equals_contiguous_bitwise() {
  using S = typename C::scalar_type;
  using Mem = typename C::memory_space;
  typename C::execution_space space;
  std::size_t const w = 2 * block_of<C>() + 5, nt = 2, order = 2;
  auto fc = frame_shape_cases()[3];
  std::size_t const d = fc.big_n.size();
  auto f = random_frame<S, Mem>(space, fc, 12);
  auto ww = probe_stack<C>(fc.big_n, w, 50);
  auto pp = probe_stack<C>(fc.big_n, w, 55);
  std::vector<Jets4<C>> r;
  std::vector<Kokkos::View<S****, Kokkos::LayoutLeft, Mem>> rs;
  for (std::size_t i = 0; i < d; ++i) {
    r.push_back(random_view(Jets4<C>("r", nt, w, order + 1, fc.big_n[i]), 60 + i));
    rs.emplace_back("r_layout_left", nt, w, order + 1, fc.big_n[i]);
    Kokkos::deep_copy(rs.back(), r.back());
  }
  auto const ws = layout_left_copies(ww), ps = layout_left_copies(pp);
  for (bool summed : {true, false}) {
    auto contiguous = t3k::probe_derivatives_transpose(space, f, ww, pp, r, {summed, t3k::ChunkSize::automatic()});
    auto strided = t3k::probe_derivatives_transpose(space, f, ws, ps, rs, {summed, t3k::ChunkSize::automatic()});
    for (std::size_t i = 0; i < d; ++i) {
      EXPECT_EQ(flat_host(strided.tucker[i]), flat_host(contiguous.tucker[i])) << "summed " << summed << " V~_" << i;
      EXPECT_EQ(flat_host(strided.tt[i]), flat_host(contiguous.tt[i])) << "summed " << summed << " H~_" << i;
    }
  }
}

template <class C>
class JacobianTest : public ::testing::Test {};
TYPED_TEST_SUITE(JacobianTest, TestConfigs);

TYPED_TEST(JacobianTest, TangentJetsMatchBruteForce) { tangent_jets_match_brute_force<TypeParam>(); }
TYPED_TEST(JacobianTest, AdjointIdentityHolds) { adjoint_identity_holds<TypeParam>(); }
TYPED_TEST(JacobianTest, TransposeMatchesExplicitJacobian) { transpose_matches_explicit_jacobian<TypeParam>(); }
TYPED_TEST(JacobianTest, ChunkedTransposeEqualsDenseBitwise) { chunked_transpose_equals_dense_bitwise<TypeParam>(); }
TYPED_TEST(JacobianTest, ChunkedJacobianAndTransposeMatchReferencesOverSeveralBlocks) {
  chunked_jacobian_and_transpose_match_references_over_several_blocks<TypeParam>();
}
TYPED_TEST(JacobianTest, PeakMemoryGrowsWithChunkNotProbes) { peak_memory_grows_with_chunk_not_probes<TypeParam>(); }
TYPED_TEST(JacobianTest, BadResidualsThrow) { bad_residuals_throw<TypeParam>(); }
TYPED_TEST(JacobianTest, TangentIntoOverwritesCallerArrays) { tangent_into_overwrites_caller_arrays<TypeParam>(); }
TYPED_TEST(JacobianTest, TangentJetsOfStridedProbes) { tangent_jets_of_strided_probes<TypeParam>(); }
TYPED_TEST(JacobianTest, TransposeOfStridedInputsEqualsContiguousBitwise) {
  transpose_of_strided_inputs_equals_contiguous_bitwise<TypeParam>();
}

}  // namespace

namespace {

// The T3Tangent members agree with the free functions they forward to (every public overload is instantiated).
template <class C>
void t3_tangent_members_match_free_functions() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  auto x = t3k::random_t3<S>(space, {4, 5, 3}, {3, 2, 2}, {1, 2, 2, 1}, 5);
  auto zero = t3k::T3Tangent<S, typename C::memory_space>::zero(space, x, 2);
  EXPECT_EQ(zero.n_tangent(), 2u);
  auto v = t3k::T3Tangent<S, typename C::memory_space>::random(space, zero.frame(), 1, 6);
  auto ww = probe_stack<C>(x.mode_shapes(), 7, 1);
  auto pp = probe_stack<C>(x.mode_shapes(), 7, 2);
  auto jm = v.probe_derivatives(space, ww, pp, 2);
  auto jf = t3k::tangent_probe_derivatives(space, v.frame(), v.variation(), ww, pp, 2);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(flat_host(jm[i]), flat_host(jf[i]));
  auto g = v.probe_derivatives_transpose(space, ww, pp, jm);
  auto gf = t3k::probe_derivatives_transpose(space, v.frame(), ww, pp, jf);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(flat_host(g.variation().tt[i]), flat_host(gf.tt[i]));
  // <J v, J v> = <v, J^T J v>: the member pair is adjoint too.
  double jj = 0;
  for (auto const& j : jm) {
    auto h = flat_host(j);
    for (double e : h) jj += e * e;
  }
  double const vg = double(v.dot(space, g));
  EXPECT_NEAR(vg, jj, std::max(1e-12, eps_times<S>(500)) * jj);
  // Copies are shallow like Views; a deep copy goes through copy_variation.
  t3k::T3Tangent<S, typename C::memory_space> copy(v.frame(), t3k::copy_variation(space, v.variation()));
  copy.scale(space, S(2));
  EXPECT_NEAR(double(copy.dot(space, v)), 2 * double(v.dot(space, v)), eps_times<S>(100) * double(v.dot(space, v)));
}

template <class C>
class T3TangentTest : public ::testing::Test {};
TYPED_TEST_SUITE(T3TangentTest, TestConfigs);
TYPED_TEST(T3TangentTest, MembersMatchFreeFunctions) { t3_tangent_members_match_free_functions<TypeParam>(); }

}  // namespace
