#pragma once
// Test helpers for J and J^T: frames with random cores of frame shapes (J, J^T and their identities are algebraic and
// hold for any cores of the right shapes), random variations, and the dense tangent T(v) of docs/math.md built
// term by term from the cores on the host, independently of the library's sweeps.

#include "reference.hpp"

#include "t3k/core/impl/host_random.hpp"
#include "t3k/core/orthogonal_frame.hpp"
#include "t3k/core/t3_variation.hpp"

#include <vector>

namespace t3k_test {

struct FrameShapeCase {
  std::vector<std::size_t> big_n, nu, no, rl, rr;  // rl, rr have d + 1 entries with rl[0] = rr[0] = rl[d] = rr[d] = 1
};

inline std::vector<FrameShapeCase> frame_shape_cases() {
  return {
      {{4, 3, 5}, {3, 2, 4}, {2, 2, 3}, {1, 2, 3, 1}, {1, 3, 2, 1}},                 // ragged, d = 3
      {{5}, {3}, {1}, {1, 1}, {1, 1}},                                               // d = 1
      {{3, 4}, {2, 3}, {2, 1}, {1, 2, 1}, {1, 3, 1}},                                // d = 2
      {{4, 5, 6, 3}, {3, 4, 2, 3}, {2, 4, 2, 2}, {1, 2, 3, 2, 1}, {1, 2, 3, 2, 1}},  // the shapes of testdata case 1
      {{2, 1, 3, 2}, {2, 1, 2, 2}, {1, 1, 2, 1}, {1, 1, 1, 2, 1}, {1, 2, 1, 1, 1}},  // rank-1 bonds and size-1 mode
      // Wide ranks at core 1 only: J's right-to-left step there goes Khatri-Rao jet first on host backends
      // (min(rl_1, rr_1) = 32, impl::khatri_rao_first), the step at core 2 product first.
      {{3, 2, 3}, {2, 2, 2}, {1, 2, 1}, {1, 32, 2, 1}, {1, 33, 32, 1}},
  };
}

template <class Scalar, class MemorySpace, class ExecutionSpace>
t3k::OrthogonalFrame<Scalar, MemorySpace> random_frame(ExecutionSpace const& space, FrameShapeCase const& c,
                                                       std::uint64_t seed) {
  using F = t3k::OrthogonalFrame<Scalar, MemorySpace>;
  t3k::impl::HostNormalGenerator gen(seed);
  auto fill = [&](auto view) {
    auto h = Kokkos::create_mirror_view(view);
    Scalar* p = h.data();
    for (std::size_t e = 0; e < h.span(); ++e) p[e] = Scalar(0.5 * gen.normal());
    Kokkos::deep_copy(space, view, h);
    return view;
  };
  std::size_t const d = c.big_n.size();
  std::vector<typename F::matrix_type> u;
  std::vector<typename F::core_type> l, r, o;
  for (std::size_t i = 0; i < d; ++i) {
    u.push_back(fill(typename F::matrix_type("U", c.nu[i], c.big_n[i])));
    l.push_back(fill(typename F::core_type("L", c.rl[i], c.nu[i], c.rl[i + 1])));
    r.push_back(fill(typename F::core_type("R", c.rr[i], c.nu[i], c.rr[i + 1])));
    o.push_back(fill(typename F::core_type("O", c.rl[i], c.no[i], c.rr[i + 1])));
  }
  space.fence();
  return F(u, l, r, o);
}

template <class Scalar, class MemorySpace, class ExecutionSpace>
t3k::T3Variation<Scalar, MemorySpace> random_variation_for_test(ExecutionSpace const& space,
                                                                t3k::OrthogonalFrame<Scalar, MemorySpace> const& f,
                                                                std::size_t n_stack, std::uint64_t seed) {
  auto v = t3k::zero_variation<Scalar>(space, f, n_stack);
  t3k::impl::HostNormalGenerator gen(seed);
  auto fill = [&](auto view) {
    auto h = Kokkos::create_mirror_view(view);
    Scalar* p = h.data();
    for (std::size_t e = 0; e < h.span(); ++e) p[e] = Scalar(gen.normal());
    Kokkos::deep_copy(space, view, h);
  };
  for (std::size_t i = 0; i < f.n_modes(); ++i) {
    fill(v.tucker[i]);
    fill(v.tt[i]);
  }
  space.fence();
  return v;
}

template <class View>
std::vector<double> flat_host(View const& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
  std::vector<double> out(h.span());
  for (std::size_t e = 0; e < h.span(); ++e) out[e] = double(h.data()[e]);
  return out;
}

/// Dense T(v_t) of docs/math.md as a sum of 2d dense T3 terms.
template <class Frame, class Variation>
std::vector<double> dense_tangent(Frame const& f, Variation const& v, std::size_t t) {
  std::size_t const d = f.n_modes();
  auto big_n = f.mode_shapes();
  auto nu = f.up_ranks();
  auto no = f.outer_ranks();
  auto rl = f.left_ranks();
  auto rr = f.right_ranks();
  std::vector<std::vector<double>> u(d), l(d), r(d), o(d), vt(d), h(d);
  for (std::size_t i = 0; i < d; ++i) {
    u[i] = flat_host(f.up_tucker(i));
    l[i] = flat_host(f.left_tt(i));
    r[i] = flat_host(f.right_tt(i));
    o[i] = flat_host(f.outer_tt(i));
    auto vall = flat_host(v.tucker[i]);
    auto hall = flat_host(v.tt[i]);
    std::size_t const vs = no[i] * big_n[i], hs = rl[i] * nu[i] * rr[i + 1];
    vt[i].assign(vall.begin() + t * vs, vall.begin() + (t + 1) * vs);
    h[i].assign(hall.begin() + t * hs, hall.begin() + (t + 1) * hs);
  }
  std::size_t total = 1;
  for (auto s : big_n) total *= s;
  std::vector<double> dense(total, 0.0);
  for (std::size_t i = 0; i < d; ++i) {
    for (int kind = 0; kind < 2; ++kind) {  // 0: H_i term, 1: V_i term
      // Copy-construct the shapes: GCC 12 -O3 warns (-Wnonnull) on copy-assigning into the empty vector in nvcc builds.
      HostT3 term{big_n, {}, {1}, {}, {}};
      for (std::size_t m = 0; m < d; ++m) {
        bool const here = m == i;
        term.n.push_back(here && kind == 1 ? no[m] : nu[m]);
        term.u.push_back(here && kind == 1 ? vt[m] : u[m]);
        term.g.push_back(m < i ? l[m] : m > i ? r[m] : (kind == 0 ? h[m] : o[m]));
        term.r.push_back(m < i ? rl[m + 1] : rr[m + 1]);
      }
      auto part = dense_tensor(term);
      for (std::size_t e = 0; e < total; ++e) dense[e] += part[e];
    }
  }
  return dense;
}

}  // namespace t3k_test
