// Tangent space at a T3 (docs/math.md): variation algebra, gauge projection, the rank-doubled T3
// of a tangent, projection onto the tangent space and the retraction.
#include "reference.hpp"
#include "shape_cases.hpp"
#include "test_devices.hpp"

#include "t3k/algorithms/gauge_projection.hpp"
#include "t3k/algorithms/orthogonal_frame.hpp"
#include "t3k/algorithms/probe_derivatives.hpp"
#include "t3k/algorithms/random_t3.hpp"
#include "t3k/algorithms/retraction.hpp"
#include "t3k/algorithms/t3_linear_algebra.hpp"
#include "t3k/algorithms/t3_svd.hpp"
#include "t3k/algorithms/tangent_probe_derivatives.hpp"
#include "t3k/algorithms/tangent_space_projection.hpp"
#include "t3k/algorithms/tangent_to_t3.hpp"
#include "t3k/algorithms/to_dense.hpp"
#include "t3k/algorithms/variation_operations.hpp"
#include "t3k/core/impl/host_random.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace {

using namespace t3k_test;

template <class C>
using T3 = t3k::TuckerTensorTrain<typename C::scalar_type, typename C::memory_space>;
template <class C>
using Frame = t3k::OrthogonalFrame<typename C::scalar_type, typename C::memory_space>;
template <class C>
using Variation = t3k::T3Variation<typename C::scalar_type, typename C::memory_space>;

// d = 4 with a boundary TT rank != 1 at one end only.
T3ShapeCase four_mode_case() { return {{3, 4, 2, 3}, {2, 3, 2, 2}, {2, 2, 3, 2, 1}}; }

// The shared cases and four_mode_case.
std::vector<T3ShapeCase> shape_cases() {
  auto cases = t3_shape_cases();
  cases.push_back(four_mode_case());
  return cases;
}

// Frame-based quantities are accurate to a few hundred roundings (QR sweeps over cores of size <= 12, then a few
// contractions of the same size); 1000 epsilon leaves a margin of about 3. In double that is 2.2e-13.
constexpr double kFrameFactor = 1000;

template <class S>
double tol(double factor = kFrameFactor) {
  return eps_times<S>(factor);
}

// ---------------------------------------------------------------------------------------------------------------
// Host copies and the brute-force dense tangent of docs/math.md, independent of the library's kernels.

template <class View>
std::vector<double> flat(View const& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
  std::vector<double> out(h.span());
  for (std::size_t e = 0; e < h.span(); ++e) out[e] = double(h.data()[e]);
  return out;
}

struct HostFrame {
  std::vector<std::size_t> big_n, nu, no, rl, rr;
  std::vector<std::vector<double>> u, l, r, o, s;
};

template <class F>
HostFrame host_frame(F const& f) {
  HostFrame h;
  h.big_n = f.mode_shapes();
  h.nu = f.up_ranks();
  h.no = f.outer_ranks();
  h.rl = f.left_ranks();
  h.rr = f.right_ranks();
  for (std::size_t i = 0; i < f.n_modes(); ++i) {
    h.u.push_back(flat(f.up_tucker(i)));
    h.l.push_back(flat(f.left_tt(i)));
    h.r.push_back(flat(f.right_tt(i)));
    h.o.push_back(flat(f.outer_tt(i)));
    if (f.has_centre()) h.s.push_back(flat(f.centre_tucker(i)));
  }
  return h;
}

// One variation: v[i] (nO_i x N_i) and h[i] (rL_i x nU_i x rR_{i+1}), row-major.
struct HostVariation {
  std::vector<std::vector<double>> v, h;
};

template <class V>
HostVariation host_variation(V const& var, std::size_t t) {
  HostVariation out;
  for (std::size_t i = 0; i < var.n_modes(); ++i) {
    auto fv = flat(var.tucker[i]);
    auto fh = flat(var.tt[i]);
    std::size_t const sv = fv.size() / var.n_stack(), sh = fh.size() / var.n_stack();
    out.v.emplace_back(fv.begin() + t * sv, fv.begin() + (t + 1) * sv);
    out.h.emplace_back(fh.begin() + t * sh, fh.begin() + (t + 1) * sh);
  }
  return out;
}

HostVariation zero_host_variation(HostFrame const& f) {
  HostVariation out;
  for (std::size_t i = 0; i < f.nu.size(); ++i) {
    out.v.emplace_back(f.no[i] * f.big_n[i], 0.0);
    out.h.emplace_back(f.rl[i] * f.nu[i] * f.rr[i + 1], 0.0);
  }
  return out;
}

// T(v) = sum_i D(L_0..L_{i-1}, H_i, R_{i+1}..; U) + D(L_0..L_{i-1}, O_i, R_{i+1}..; U_0.., V_i, ..U_{d-1}), each term
// expanded by the multi-index sum of reference.hpp.
std::vector<double> dense_tangent(HostFrame const& f, HostVariation const& v) {
  std::size_t const d = f.nu.size();
  std::size_t total = 1;
  for (auto s : f.big_n) total *= s;
  std::vector<double> out(total, 0.0);
  for (std::size_t i = 0; i < d; ++i) {
    for (int term = 0; term < 2; ++term) {
      HostT3 x;
      x.shapes = f.big_n;
      x.n = f.nu;
      x.r.assign(d + 1, 1);
      for (std::size_t e = 1; e < d; ++e) x.r[e] = e <= i ? f.rl[e] : f.rr[e];
      x.u = f.u;
      for (std::size_t k = 0; k < d; ++k) x.g.push_back(k < i ? f.l[k] : f.r[k]);
      if (term == 0) {
        x.g[i] = v.h[i];
      } else {
        x.g[i] = f.o[i];
        x.u[i] = v.v[i];
        x.n[i] = f.no[i];
      }
      auto part = dense_tensor(x);
      for (std::size_t e = 0; e < total; ++e) out[e] += part[e];
    }
  }
  return out;
}

template <class C>
std::vector<double> dense_of(T3<C> const& x) {
  typename C::execution_space space;
  return flat(t3k::to_dense(space, x));
}

double max_abs(std::vector<double> const& a) {
  double m = 0;
  for (auto e : a) m = std::max(m, std::abs(e));
  return m;
}

double max_abs_diff(std::vector<double> const& a, std::vector<double> const& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (std::size_t e = 0; e < std::min(a.size(), b.size()); ++e) m = std::max(m, std::abs(a[e] - b[e]));
  return m;
}

double norm2(std::vector<double> const& a) {
  double s = 0;
  for (auto e : a) s += e * e;
  return std::sqrt(s);
}

double dot(std::vector<double> const& a, std::vector<double> const& b) {
  double s = 0;
  for (std::size_t e = 0; e < a.size(); ++e) s += a[e] * b[e];
  return s;
}

// Max |x - y| over all entries of all cores of two variation stacks, and max |x|.
template <class V>
std::pair<double, double> variation_difference(V const& x, V const& y) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < x.n_modes(); ++i) {
    auto a = flat(x.tucker[i]);
    auto b = flat(y.tucker[i]);
    diff = std::max(diff, max_abs_diff(a, b));
    scale = std::max(scale, max_abs(a));
    a = flat(x.tt[i]);
    b = flat(y.tt[i]);
    diff = std::max(diff, max_abs_diff(a, b));
    scale = std::max(scale, max_abs(a));
  }
  return {diff, scale};
}

template <class C>
std::pair<T3<C>, Frame<C>> t3_and_frame(T3ShapeCase const& sh, std::uint64_t seed) {
  typename C::execution_space space;
  auto x = t3k::random_t3<typename C::scalar_type>(space, sh.big_n, sh.n, sh.r, seed);
  return {x, t3k::orthogonal_frame(space, x)};
}

// A random gauged variation of unit corewise norm.
template <class C>
Variation<C> random_gauged(Frame<C> const& frame, std::size_t n_stack, std::uint64_t seed) {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  auto v = t3k::random_variation(space, frame, n_stack, seed);
  t3k::gauge_project_in_place(space, frame, v);
  t3k::scale_variation(space, S(1) / t3k::variation_norm(space, v), v);
  return v;
}

// ---------------------------------------------------------------------------------------------------------------
// Variation algebra.

template <class C>
void random_variation_is_reproducible_and_fits_frame() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  Kokkos::DefaultHostExecutionSpace host;
  auto sh = shape_cases()[0];
  auto frame = t3_and_frame<C>(sh, 3).second;
  auto host_x = t3k::random_t3<S>(host, sh.big_n, sh.n, sh.r, 3);
  auto host_frame_ = t3k::orthogonal_frame(host, host_x);
  auto a = t3k::random_variation(space, frame, 3, 42);
  auto b = t3k::random_variation(host, host_frame_, 3, 42);
  auto one = t3k::random_variation(space, frame, 1, 42);
  auto other = t3k::random_variation(space, frame, 1, 43);
  EXPECT_EQ(t3k::impl::check_variation("test", frame, a), 3u);
  for (std::size_t i = 0; i < frame.n_modes(); ++i) {
    EXPECT_EQ(flat(a.tucker[i]), flat(b.tucker[i]));  // bitwise across backends
    EXPECT_EQ(flat(a.tt[i]), flat(b.tt[i]));
  }
  auto ha = host_variation(a, 0), h1 = host_variation(one, 0), h2 = host_variation(other, 0);
  EXPECT_EQ(ha.v, h1.v);  // a longer stack starts with the shorter one
  EXPECT_EQ(ha.h, h1.h);
  EXPECT_NE(h1.v, h2.v);
  EXPECT_NE(host_variation(a, 1).h, ha.h);
}

template <class C>
void variation_dots_match_host_sums() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  // The second shape has cores of more than one 256-entry block of the two-stage reduction.
  for (auto const& sh : {four_mode_case(), T3ShapeCase{{60, 50, 40}, {5, 5, 5}, {1, 5, 5, 1}}}) {
    auto frame = t3_and_frame<C>(sh, 5).second;
    auto x = t3k::random_variation(space, frame, 2, 1);
    auto y = t3k::random_variation(space, frame, 2, 2);
    std::vector<HostVariation> hx{host_variation(x, 0), host_variation(x, 1)};
    std::vector<HostVariation> hy{host_variation(y, 0), host_variation(y, 1)};
    // Sums of up to ~1000 products of unit normals; 64 epsilon per unit of the sum of |products| (the blocked sum
    // has an error bound of about (256 + n_blocks) epsilon times that sum, and is far below it in practice).
    auto dots = t3k::variation_dots(space, x, y);
    ASSERT_EQ(dots.size(), 2u);
    for (std::size_t t = 0; t < 2; ++t) {
      double ref = 0, abs_sum = 0;
      for (std::size_t i = 0; i < frame.n_modes(); ++i) {
        ref += dot(hx[t].v[i], hy[t].v[i]) + dot(hx[t].h[i], hy[t].h[i]);
        for (std::size_t e = 0; e < hx[t].v[i].size(); ++e) abs_sum += std::abs(hx[t].v[i][e] * hy[t].v[i][e]);
        for (std::size_t e = 0; e < hx[t].h[i].size(); ++e) abs_sum += std::abs(hx[t].h[i][e] * hy[t].h[i][e]);
      }
      EXPECT_NEAR(double(dots[t]), ref, eps_times<S>(64) * abs_sum);
      EXPECT_EQ(t3k::variation_dot(space, x, y, t), dots[t]);  // same kernels, same order
    }
    double sq = 0;
    for (std::size_t i = 0; i < frame.n_modes(); ++i) sq += dot(hx[1].v[i], hx[1].v[i]) + dot(hx[1].h[i], hx[1].h[i]);
    EXPECT_NEAR(double(t3k::variation_norm(space, x, 1)), std::sqrt(sq), eps_times<S>(64) * std::sqrt(sq));
    // The summation order is fixed by the shapes: any host backend and thread count gives the same bits.
    using M = typename C::memory_space;
    if constexpr (Kokkos::SpaceAccessibility<Kokkos::DefaultHostExecutionSpace, M>::accessible) {
      EXPECT_EQ(t3k::variation_dots(Kokkos::DefaultHostExecutionSpace{}, x, y), dots);
    }
  }
}

template <class C>
void variation_algebra_matches_host_arithmetic() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  auto frame = t3_and_frame<C>(four_mode_case(), 5).second;
  auto x = t3k::random_variation(space, frame, 2, 1);
  auto y = t3k::random_variation(space, frame, 2, 2);
  std::vector<HostVariation> hx{host_variation(x, 0), host_variation(x, 1)};
  std::vector<HostVariation> hy{host_variation(y, 0), host_variation(y, 1)};
  // Copies are deep; axpy and scale act on every stack entry (a few roundings per entry: 4 epsilon).
  auto z = t3k::copy_variation(space, y);
  t3k::axpy_variation(space, S(-0.75), x, z);
  t3k::scale_variation(space, S(2), z);
  auto w = t3k::zero_variation(space, frame, 2);
  t3k::copy_variation(space, z, w);
  t3k::scale_variation(space, S(0), z);
  for (std::size_t t = 0; t < 2; ++t) {
    auto hw = host_variation(w, t);
    auto hy_after = host_variation(y, t);
    EXPECT_EQ(hy_after.v, hy[t].v);  // y untouched
    for (std::size_t i = 0; i < frame.n_modes(); ++i) {
      for (std::size_t e = 0; e < hw.v[i].size(); ++e)
        EXPECT_NEAR(hw.v[i][e], 2 * (hy[t].v[i][e] - 0.75 * hx[t].v[i][e]), eps_times<S>(4) * 8);
      for (std::size_t e = 0; e < hw.h[i].size(); ++e)
        EXPECT_NEAR(hw.h[i][e], 2 * (hy[t].h[i][e] - 0.75 * hx[t].h[i][e]), eps_times<S>(4) * 8);
    }
  }
  EXPECT_EQ(double(t3k::variation_norm(space, z, 1)), 0.0);
}

// ---------------------------------------------------------------------------------------------------------------
// Gauge projection.

template <class C>
void gauge_projection_is_idempotent_and_orthogonal() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  for (auto const& sh : shape_cases()) {
    auto frame = t3_and_frame<C>(sh, 7).second;
    auto v = t3k::random_variation(space, frame, 2, 11);
    auto w = t3k::random_variation(space, frame, 2, 12);
    auto pv = t3k::gauge_project(space, frame, v);
    auto ppv = t3k::gauge_project(space, frame, pv);
    auto d1 = variation_difference(pv, ppv);
    EXPECT_LE(d1.first, tol<S>() * d1.second) << "idempotence, d = " << sh.big_n.size();
    // The in-place form gives the same numbers.
    auto v_in_place = t3k::copy_variation(space, v);
    t3k::gauge_project_in_place(space, frame, v_in_place);
    EXPECT_EQ(variation_difference(pv, v_in_place).first, 0.0);
    // <v - P v, P w> = 0 in the corewise inner product, for every stack entry.
    auto residual = t3k::copy_variation(space, v);
    t3k::axpy_variation(space, S(-1), pv, residual);
    auto pw = t3k::gauge_project(space, frame, w);
    auto dots = t3k::variation_dots(space, residual, pw);
    for (std::size_t t = 0; t < 2; ++t) {
      double const scale = double(t3k::variation_norm(space, residual, t) * t3k::variation_norm(space, pw, t));
      EXPECT_LE(std::abs(double(dots[t])), tol<S>() * scale) << "orthogonality, d = " << sh.big_n.size();
    }
  }
}

template <class C>
void gauge_conditions_hold_after_projection() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  for (auto const& sh : shape_cases()) {
    auto frame = t3_and_frame<C>(sh, 9).second;
    auto hf = host_frame(frame);
    auto v = t3k::gauge_project(space, frame, t3k::random_variation(space, frame, 3, 13));
    std::size_t const d = frame.n_modes();
    for (std::size_t t = 0; t < 3; ++t) {
      auto hv = host_variation(v, t);
      double g1 = 0, g2 = 0, scale = 0;
      for (std::size_t i = 0; i < d; ++i) {
        std::size_t const nj = hf.big_n[i], nu = hf.nu[i], no = hf.no[i];
        scale = std::max({scale, max_abs(hv.v[i]), max_abs(hv.h[i])});
        for (std::size_t u = 0; u < nu; ++u)
          for (std::size_t o = 0; o < no; ++o) {
            double acc = 0;
            for (std::size_t j = 0; j < nj; ++j) acc += hf.u[i][u * nj + j] * hv.v[i][o * nj + j];
            g1 = std::max(g1, std::abs(acc));
          }
        if (i + 1 == d) continue;
        std::size_t const ra = hf.rl[i], rb = hf.rl[i + 1], rc = hf.rr[i + 1];
        for (std::size_t b = 0; b < rb; ++b)
          for (std::size_t c = 0; c < rc; ++c) {
            double acc = 0;
            for (std::size_t a = 0; a < ra; ++a)
              for (std::size_t u = 0; u < nu; ++u)
                acc += hf.l[i][(a * nu + u) * rb + b] * hv.h[i][(a * nu + u) * rc + c];
            g2 = std::max(g2, std::abs(acc));
          }
      }
      // 1e-13 in double; 100 epsilon of the entries' scale in float.
      double const bound = (sizeof(S) == 8 ? 1e-13 : eps_times<S>(100)) * std::max(scale, 1.0);
      EXPECT_LE(g1, bound) << "(G1), d = " << d;
      EXPECT_LE(g2, bound) << "(G2), d = " << d;
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The rank-doubled T3 of a tangent.

template <class C>
void tangent_to_t3_matches_sum_of_terms() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  for (auto const& sh : shape_cases()) {
    auto xf = t3_and_frame<C>(sh, 21);
    auto const& frame = xf.second;
    auto hf = host_frame(frame);
    auto v = t3k::random_variation(space, frame, 2, 22);  // ungauged: T is defined on all variations
    auto doubled = t3k::tangent_to_t3(space, frame, v, 1);
    std::vector<std::size_t> expected_n, expected_r{1};
    for (std::size_t i = 0; i < frame.n_modes(); ++i) {
      expected_n.push_back(hf.nu[i] + hf.no[i]);
      expected_r.push_back(i + 1 < frame.n_modes() ? hf.rr[i + 1] + hf.rl[i + 1] : 1);
    }
    EXPECT_EQ(doubled.tucker_ranks(), expected_n);
    EXPECT_EQ(doubled.tt_ranks(), expected_r);
    auto ref = dense_tangent(hf, host_variation(v, 1));
    auto got = dense_of<C>(doubled);
    EXPECT_LE(max_abs_diff(got, ref), tol<S>() * max_abs(ref)) << "d = " << sh.big_n.size();
    // shift = true adds the base point X.
    auto shifted = dense_of<C>(t3k::tangent_to_t3(space, frame, v, 0, true));
    auto ref0 = dense_tangent(hf, host_variation(v, 0));
    auto dx = dense_tensor(host_t3(xf.first));
    for (std::size_t e = 0; e < ref0.size(); ++e) ref0[e] += dx[e];
    EXPECT_LE(max_abs_diff(shifted, ref0), tol<S>() * max_abs(ref0)) << "shifted, d = " << sh.big_n.size();
  }
}

/// The centre variation of a frame with a centre: V_i = S_i U_i and H_i = C_i[a,u,b] = sum_o O_i[a,o,b] S_i[o,u],
/// built on the host from the frame's factors. Its tangent is 2d X.
template <class C>
Variation<C> centre_variation(Frame<C> const& frame) {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  auto hf = host_frame(frame);
  std::size_t const d = frame.n_modes();
  auto v = t3k::zero_variation(space, frame, 1);
  for (std::size_t i = 0; i < d; ++i) {
    std::size_t const nj = hf.big_n[i], nu = hf.nu[i], no = hf.no[i], ra = hf.rl[i], rb = hf.rr[i + 1];
    auto hv = Kokkos::create_mirror_view(Kokkos::HostSpace{}, v.tucker[i]);
    auto hh = Kokkos::create_mirror_view(Kokkos::HostSpace{}, v.tt[i]);
    for (std::size_t o = 0; o < no; ++o)
      for (std::size_t j = 0; j < nj; ++j) {
        double acc = 0;
        for (std::size_t u = 0; u < nu; ++u) acc += hf.s[i][o * nu + u] * hf.u[i][u * nj + j];
        hv(0, o, j) = S(acc);
      }
    for (std::size_t a = 0; a < ra; ++a)
      for (std::size_t u = 0; u < nu; ++u)
        for (std::size_t b = 0; b < rb; ++b) {
          double acc = 0;
          for (std::size_t o = 0; o < no; ++o) acc += hf.o[i][(a * no + o) * rb + b] * hf.s[i][o * nu + u];
          hh(0, a, u, b) = S(acc);
        }
    Kokkos::deep_copy(v.tucker[i], hv);
    Kokkos::deep_copy(v.tt[i], hh);
  }
  return v;
}

template <class C>
void centre_variation_represents_2d_x() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  for (auto const& sh : shape_cases()) {
    auto xf = t3_and_frame<C>(sh, 31);
    auto const& frame = xf.second;
    ASSERT_TRUE(frame.has_centre());
    auto hf = host_frame(frame);
    std::size_t const d = frame.n_modes();
    auto const v = centre_variation<C>(frame);
    auto dx = dense_tensor(host_t3(xf.first));
    for (auto& e : dx) e *= double(2 * d);
    auto got = dense_of<C>(t3k::tangent_to_t3(space, frame, v));
    EXPECT_LE(max_abs_diff(got, dx), tol<S>() * max_abs(dx)) << "d = " << d;
    EXPECT_LE(max_abs_diff(dense_tangent(hf, host_variation(v, 0)), dx), tol<S>() * max_abs(dx)) << "d = " << d;
  }
}

/// A stack of `w` random probes (rows) per mode, on the configuration's memory space.
template <class C>
std::vector<Kokkos::View<typename C::scalar_type**, typename C::memory_space>> random_probes(
    std::vector<std::size_t> const& shapes, std::size_t w, std::uint64_t seed) {
  std::vector<Kokkos::View<typename C::scalar_type**, typename C::memory_space>> out;
  t3k::impl::HostNormalGenerator gen(seed);
  for (std::size_t n : shapes) {
    out.emplace_back("probes", w, n);
    auto h = Kokkos::create_mirror_view(out.back());
    for (std::size_t e = 0; e < h.span(); ++e) h.data()[e] = typename C::scalar_type(gen.normal());
    Kokkos::deep_copy(out.back(), h);
  }
  return out;
}

// At the probe level over two blocks and a part of one, chunked a block per pass (three passes): J of the centre
// variation is 2d times the jets of X, and J of a gauged variation stack v is, for each t, the jets of
// tangent_to_t3(v_t), both computed in one pass. The same identities as the dense ones above, through the chunked
// tangent sweep instead of to_dense; the references are sums of the same size in another order, so the frame
// tolerance relative to the largest jet.
template <class C>
void tangent_jets_match_jets_of_2d_x_and_of_tangent_t3_over_chunks() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  std::size_t const w = 2 * block_of<C>() + 7, order = 2, nt = 2;
  auto const chunk = t3k::ChunkSize::of(block_of<C>());
  ASSERT_EQ(chunk_passes<C>(chunk, w), 3u);
  for (auto const& sh : {shape_cases()[0], four_mode_case()}) {
    std::size_t const d = sh.big_n.size();
    std::string const what = "d = " + std::to_string(d);
    auto xf = t3_and_frame<C>(sh, 71);
    auto const& frame = xf.second;
    auto const ww = random_probes<C>(sh.big_n, w, 72);
    auto const pp = random_probes<C>(sh.big_n, w, 73);
    auto const jc = t3k::tangent_probe_derivatives(space, frame, centre_variation<C>(frame), ww, pp, order, chunk);
    auto const jx = t3k::probe_derivatives(space, xf.first, ww, pp, order, t3k::ChunkSize::none());
    for (std::size_t i = 0; i < d; ++i) {
      auto got = flat(jc[i]);
      auto ref = flat(jx[i]);
      for (auto& e : ref) e *= double(2 * d);
      ASSERT_EQ(got.size(), ref.size()) << what;
      EXPECT_LE(max_abs_diff(got, ref), tol<S>() * max_abs(ref)) << what << ", centre variation, mode " << i;
    }
    auto const v = random_gauged<C>(frame, nt, 74);
    auto const jv = t3k::tangent_probe_derivatives(space, frame, v, ww, pp, order, chunk);
    for (std::size_t t = 0; t < nt; ++t) {
      auto const jt =
          t3k::probe_derivatives(space, t3k::tangent_to_t3(space, frame, v, t), ww, pp, order, t3k::ChunkSize::none());
      for (std::size_t i = 0; i < d; ++i) {
        auto got = flat(Kokkos::subview(jv[i], t, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL));
        auto ref = flat(jt[i]);
        ASSERT_EQ(got.size(), ref.size()) << what;
        EXPECT_LE(max_abs_diff(got, ref), tol<S>() * max_abs(ref)) << what << ", tangent " << t << ", mode " << i;
      }
    }
  }
}

template <class C>
void gauged_tangent_inner_product_equals_variation_dot() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  for (auto const& sh : shape_cases()) {
    auto frame = t3_and_frame<C>(sh, 41).second;
    auto v = random_gauged<C>(frame, 1, 42);
    auto w = random_gauged<C>(frame, 1, 43);
    auto tv = t3k::tangent_to_t3(space, frame, v);
    auto tw = t3k::tangent_to_t3(space, frame, w);
    // Both have unit corewise norm, so every quantity here is of order one.
    EXPECT_NEAR(double(t3k::inner_product(space, tv, tw)), double(t3k::variation_dot(space, v, w)), tol<S>())
        << "d = " << sh.big_n.size();
    EXPECT_NEAR(double(t3k::norm(space, tv)), 1.0, tol<S>()) << "d = " << sh.big_n.size();
    auto dv = dense_of<C>(tv), dw = dense_of<C>(tw);
    EXPECT_NEAR(dot(dv, dw), double(t3k::variation_dot(space, v, w)), tol<S>()) << "dense, d = " << sh.big_n.size();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Projection onto the tangent space.

template <class C>
void projection_of_gauged_tangent_returns_it() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  for (auto const& sh : shape_cases()) {
    auto frame = t3_and_frame<C>(sh, 51).second;
    auto v = random_gauged<C>(frame, 1, 52);
    auto p = t3k::project_onto_tangent_space(space, frame, t3k::tangent_to_t3(space, frame, v));
    EXPECT_EQ(t3k::impl::check_variation("test", frame, p), 1u);
    auto diff = variation_difference(v, p);
    EXPECT_LE(diff.first, tol<S>()) << "d = " << sh.big_n.size();  // v has unit norm
  }
}

template <class C>
void projection_of_base_point_is_last_left_core() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  for (auto const& sh : shape_cases()) {
    auto xf = t3_and_frame<C>(sh, 61);
    auto const& frame = xf.second;
    auto hf = host_frame(frame);
    std::size_t const d = frame.n_modes();
    auto p = t3k::project_onto_tangent_space(space, frame, xf.first);  // X with its own tails and n_i > N_i
    auto hp = host_variation(p, 0);
    double const scale = max_abs(hf.l[d - 1]);
    for (std::size_t i = 0; i < d; ++i) {
      EXPECT_LE(max_abs(hp.v[i]), tol<S>() * scale) << "V_" << i << ", d = " << d;
      if (i + 1 < d) {
        EXPECT_LE(max_abs(hp.h[i]), tol<S>() * scale) << "H_" << i << ", d = " << d;
      } else {
        EXPECT_LE(max_abs_diff(hp.h[i], hf.l[i]), tol<S>() * scale) << "H_{d-1}, d = " << d;
      }
    }
  }
}

template <class C>
void projection_residual_is_orthogonal_to_tangent_space() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  // Y has other ranks than X, boundary ranks != 1 and n_i > N_i.
  std::vector<std::pair<T3ShapeCase, T3ShapeCase>> cases = {
      {shape_cases()[0], {{4, 5, 3}, {2, 4, 5}, {2, 3, 2, 2}}},
      {shape_cases()[1], {{2, 3, 1, 4}, {2, 3, 2, 3}, {1, 2, 2, 3, 2}}},
      {shape_cases()[2], {{5}, {3}, {2, 2}}},
      {shape_cases()[5], {{3, 4}, {3, 2}, {3, 3, 2}}}};
  for (auto const& c : cases) {
    auto frame = t3_and_frame<C>(c.first, 71).second;
    auto hf = host_frame(frame);
    auto y = t3k::random_t3<S>(space, c.second.big_n, c.second.n, c.second.r, 72);
    auto p = t3k::project_onto_tangent_space(space, frame, y);
    auto residual = dense_tensor(host_t3(y));
    auto tp = dense_tangent(hf, host_variation(p, 0));
    for (std::size_t e = 0; e < residual.size(); ++e) residual[e] -= tp[e];
    double const res_norm = norm2(residual);
    // Every unit variation e: <Y - T(P_X(Y)), T(e)> = 0 (the unit tangents span the tangent space).
    std::size_t const d = frame.n_modes();
    std::size_t n_units = 0;
    double worst = 0;
    for (std::size_t i = 0; i < d; ++i) {
      for (int part = 0; part < 2; ++part) {
        std::size_t const size = part == 0 ? hf.no[i] * hf.big_n[i] : hf.rl[i] * hf.nu[i] * hf.rr[i + 1];
        for (std::size_t k = 0; k < size; ++k) {
          auto unit = zero_host_variation(hf);
          (part == 0 ? unit.v[i][k] : unit.h[i][k]) = 1.0;
          auto tu = dense_tangent(hf, unit);
          double const nt = norm2(tu);
          if (nt == 0) continue;
          worst = std::max(worst, std::abs(dot(residual, tu)) / nt);
          ++n_units;
        }
      }
    }
    EXPECT_GT(n_units, 0u);
    double const y_norm = norm2(dense_tensor(host_t3(y)));
    EXPECT_LE(worst, tol<S>() * y_norm) << "d = " << d << ", residual norm " << res_norm;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Retraction.

template <class C>
void retraction_of_zero_reproduces_x() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  for (auto const& sh : shape_cases()) {
    auto xf = t3_and_frame<C>(sh, 81);
    auto zero = t3k::zero_variation(space, xf.second, 2);
    auto rx = t3k::retract(space, xf.second, zero, 1);
    auto dx = dense_tensor(host_t3(xf.first));
    auto error = dense_of<C>(rx);
    for (std::size_t k = 0; k < error.size(); ++k) error[k] -= dx[k];
    // 1e-12 relative in double; the factor 1000 covers the frame and the T3-SVD in float.
    double const rel = sizeof(S) == 8 ? 1e-12 : eps_times<S>(kFrameFactor);
    EXPECT_LE(norm2(error), rel * norm2(dx)) << "d = " << sh.big_n.size();
  }
}

// The smallest singular value of X that the retraction's truncation keeps (Tucker ranks nU_i, TT ranks
// min(rL_e, rR_e)), relative to ||X||: the O(eps^2) constant of the retraction error grows like ||T(v)||^2 / sigma_min.
template <class C>
double relative_sigma_min(T3<C> const& x, Frame<C> const& frame) {
  typename C::execution_space space;
  auto sv = t3k::t3_svd(space, x);
  auto const nu = frame.up_ranks(), rl = frame.left_ranks(), rr = frame.right_ranks();
  double smin = 1e300;
  for (std::size_t i = 0; i < nu.size(); ++i) {
    auto const& s = sv.tucker_singular_values[i];
    for (std::size_t k = 0; k < std::min(nu[i], s.size()); ++k) smin = std::min(smin, double(s[k]));
  }
  for (std::size_t e = 1; e + 1 < rl.size(); ++e) {
    auto const& s = sv.tt_singular_values[e - 1];
    for (std::size_t k = 0; k < std::min(std::min(rl[e], rr[e]), s.size()); ++k) smin = std::min(smin, double(s[k]));
  }
  return smin / double(t3k::norm(space, x));
}

template <class C>
void retraction_is_second_order() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  // The O(eps^2) error must stand well above rounding (~eps_machine ||X||) and eps ||T(v)|| well below X's smallest
  // kept singular value. Double uses eps = 1e-2, 1e-3; float eps = 2e-2, 2e-3, where the smaller
  // error (~1e-5) is still about 100 float epsilons. Random T3s are often nearly rank deficient (sigma_min ~ 1e-4
  // ||X||, where eps = 1e-2 is not yet asymptotic), so X is redrawn until sigma_min >= 0.05 ||X||.
  double const eps1 = sizeof(S) == 8 ? 1e-2 : 2e-2;
  double const eps2 = eps1 / 10;
  for (auto const& sh : shape_cases()) {
    std::uint64_t seed = 91;
    auto xf = t3_and_frame<C>(sh, seed);
    while (relative_sigma_min<C>(xf.first, xf.second) < 0.05 && seed < 191) xf = t3_and_frame<C>(sh, ++seed);
    ASSERT_LT(seed, 191u) << "no well-conditioned X found, d = " << sh.big_n.size();
    auto const& frame = xf.second;
    std::size_t const d = frame.n_modes();
    auto v = random_gauged<C>(frame, 1, 1000 + seed);
    auto dx = dense_tensor(host_t3(xf.first));
    auto tv = dense_tangent(host_frame(frame), host_variation(v, 0));
    std::vector<double> errors;
    for (double eps : {eps1, eps2}) {
      auto step = t3k::copy_variation(space, v);
      t3k::scale_variation(space, S(eps), step);
      auto got = dense_of<C>(t3k::retract(space, frame, step));
      std::vector<double> e(got.size());
      for (std::size_t k = 0; k < e.size(); ++k) e[k] = got[k] - dx[k] - eps * tv[k];
      errors.push_back(norm2(e));
    }
    if (d == 1) {
      // For d = 1 every vector is a T3 of the frame's ranks: the retraction is exact, R_X(v) = X + T(v).
      EXPECT_LE(errors[0], tol<S>() * norm2(dx));
      EXPECT_LE(errors[1], tol<S>() * norm2(dx));
      continue;
    }
    double const ratio = errors[0] / errors[1];
    EXPECT_GT(ratio, 30.0) << "d = " << d << ", seed " << seed << ", errors " << errors[0] << ", " << errors[1];
    EXPECT_LT(ratio, 300.0) << "d = " << d << ", seed " << seed << ", errors " << errors[0] << ", " << errors[1];
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Input validation.

template <class C>
void bad_inputs_throw_clear_errors() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  auto frame = t3_and_frame<C>(shape_cases()[0], 101).second;
  auto other = t3_and_frame<C>(four_mode_case(), 101).second;
  auto v = t3k::random_variation(space, frame, 2, 1);
  auto w = t3k::random_variation(space, other, 2, 1);
  EXPECT_THROW(t3k::gauge_project(space, other, v), t3k::DimensionMismatch);
  EXPECT_THROW(t3k::gauge_project_in_place(space, other, v), t3k::DimensionMismatch);
  EXPECT_THROW(t3k::tangent_to_t3(space, other, v), t3k::DimensionMismatch);
  EXPECT_THROW(t3k::retract(space, other, v), t3k::DimensionMismatch);
  EXPECT_THROW(t3k::axpy_variation(space, S(1), v, w), t3k::DimensionMismatch);
  EXPECT_THROW(t3k::copy_variation(space, v, w), t3k::DimensionMismatch);
  EXPECT_THROW(t3k::variation_dot(space, v, w), t3k::DimensionMismatch);
  EXPECT_THROW(t3k::random_variation(space, frame, 0, 1), t3k::InvalidArgument);
  try {
    t3k::tangent_to_t3(space, frame, v, 2);
    FAIL() << "a stack index out of range must throw";
  } catch (t3k::InvalidArgument const& e) {
    EXPECT_NE(std::string(e.what()).find("stack index 2 is out of range for a stack of 2"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(t3k::variation_dot(space, v, v, 2), t3k::InvalidArgument);
  EXPECT_THROW(t3k::retract(space, frame, v, 5), t3k::InvalidArgument);
  auto y = t3k::random_t3<S>(space, {4, 5, 2}, {2, 2, 2}, {1, 2, 2, 1}, 1);
  try {
    t3k::project_onto_tangent_space(space, frame, y);
    FAIL() << "mismatched mode shapes must throw";
  } catch (t3k::DimensionMismatch const& e) {
    EXPECT_NE(std::string(e.what()).find("[4 x 5 x 2]"), std::string::npos) << e.what();
  }
}

template <class C>
class TangentSpaceTest : public ::testing::Test {};
TYPED_TEST_SUITE(TangentSpaceTest, TestConfigs);

TYPED_TEST(TangentSpaceTest, RandomVariationIsReproducibleAndFitsFrame) {
  random_variation_is_reproducible_and_fits_frame<TypeParam>();
}
TYPED_TEST(TangentSpaceTest, VariationDotsMatchHostSums) { variation_dots_match_host_sums<TypeParam>(); }
TYPED_TEST(TangentSpaceTest, VariationAlgebraMatchesHostArithmetic) {
  variation_algebra_matches_host_arithmetic<TypeParam>();
}
TYPED_TEST(TangentSpaceTest, GaugeProjectionIsIdempotentAndOrthogonal) {
  gauge_projection_is_idempotent_and_orthogonal<TypeParam>();
}
TYPED_TEST(TangentSpaceTest, GaugeConditionsHoldAfterProjection) {
  gauge_conditions_hold_after_projection<TypeParam>();
}
TYPED_TEST(TangentSpaceTest, TangentToT3MatchesSumOfTerms) { tangent_to_t3_matches_sum_of_terms<TypeParam>(); }
TYPED_TEST(TangentSpaceTest, CentreVariationRepresentsTwoDTimesX) { centre_variation_represents_2d_x<TypeParam>(); }
TYPED_TEST(TangentSpaceTest, TangentJetsMatchJetsOf2dXAndOfTangentT3OverChunks) {
  tangent_jets_match_jets_of_2d_x_and_of_tangent_t3_over_chunks<TypeParam>();
}
TYPED_TEST(TangentSpaceTest, GaugedTangentInnerProductEqualsVariationDot) {
  gauged_tangent_inner_product_equals_variation_dot<TypeParam>();
}
TYPED_TEST(TangentSpaceTest, ProjectionOfGaugedTangentReturnsIt) {
  projection_of_gauged_tangent_returns_it<TypeParam>();
}
TYPED_TEST(TangentSpaceTest, ProjectionOfBasePointIsLastLeftCore) {
  projection_of_base_point_is_last_left_core<TypeParam>();
}
TYPED_TEST(TangentSpaceTest, ProjectionResidualIsOrthogonalToTangentSpace) {
  projection_residual_is_orthogonal_to_tangent_space<TypeParam>();
}
TYPED_TEST(TangentSpaceTest, RetractionOfZeroReproducesX) { retraction_of_zero_reproduces_x<TypeParam>(); }
TYPED_TEST(TangentSpaceTest, RetractionIsSecondOrder) { retraction_is_second_order<TypeParam>(); }
TYPED_TEST(TangentSpaceTest, BadInputsThrowClearErrors) { bad_inputs_throw_clear_errors<TypeParam>(); }

}  // namespace
