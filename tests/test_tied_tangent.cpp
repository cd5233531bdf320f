// The tangent space of a shared model (docs/math.md, "Shared Tucker factors"): tie_variation against independent
// dense references. The tied tangent space is spanned by the exact dense Jacobian columns of the tied
// parametrization (the tensor is linear in each core; a group's factor column sums the unit replacements over the
// group's modes), and its curves are evaluated by brute-force multi-index sums (reference.hpp).
#include "jacobian_reference.hpp"
#include "reference.hpp"
#include "shape_cases.hpp"
#include "test_devices.hpp"

#include "t3k/algorithms/gauge_projection.hpp"
#include "t3k/algorithms/impl/host/host_lapack.hpp"
#include "t3k/algorithms/manifold_dimension.hpp"
#include "t3k/algorithms/orthogonal_frame.hpp"
#include "t3k/algorithms/random_t3.hpp"
#include "t3k/algorithms/tangent_space_projection.hpp"
#include "t3k/algorithms/tangent_to_t3.hpp"
#include "t3k/algorithms/tie_variation.hpp"
#include "t3k/algorithms/to_dense.hpp"
#include "t3k/algorithms/variation_operations.hpp"
#include "t3k/core/mode_sharing.hpp"
#include "t3k/optimizers/fitting_problem.hpp"
#include "t3k/optimizers/planted_problem.hpp"

#include <cmath>
#include <cstdint>
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

struct SharedCase {
  T3ShapeCase shapes;
  std::vector<long long> labels;
};

// Feasible ranks (so that the frame's ranks are the counted ones), ragged TT ranks.
std::vector<SharedCase> shared_cases() {
  return {{{{4, 3, 4, 3}, {2, 2, 2, 2}, {1, 2, 3, 2, 1}}, {0, 1, 0, 2}},          // a pair around a singleton
          {{{3, 3, 3, 4}, {2, 2, 2, 2}, {1, 2, 3, 2, 1}}, {0, 0, 0, 1}},          // a group of three, one free mode
          {{{3, 4, 3, 4}, {2, 2, 2, 2}, {1, 2, 3, 2, 1}}, {'a', 'b', 'a', 'b'}},  // two interleaved pairs
          {{{4, 4, 3}, {3, 3, 2}, {1, 2, 2, 1}}, {0, 0, 1}}};                     // n_g = 3 > r_0 r_1 = 2
}

std::string describe(SharedCase const& c) {
  std::string labels;
  for (auto l : c.labels) labels += std::to_string(l) + " ";
  return t3k_test::describe(c.shapes) + ", labels " + labels;
}

template <class View>
std::vector<double> flat(View const& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
  std::vector<double> out(h.span());
  for (std::size_t e = 0; e < h.span(); ++e) out[e] = double(h.data()[e]);
  return out;
}

// Frame-based dense tangents are accurate to a few hundred roundings (QR sweeps and contractions over cores of size
// <= 12, then the group's SVD); 5000 epsilon (1.1e-12 in double) leaves a margin of about 10.
double const kTol = eps_times<double>(5000);
// A residual against the Jacobian's column space loses the Jacobian's condition (about 1e2 at these random cores) on
// top of that.
double const kResidualTol = eps_times<double>(50000);

double dot(std::vector<double> const& a, std::vector<double> const& b) {
  double s = 0;
  for (std::size_t k = 0; k < a.size(); ++k) s += a[k] * b[k];
  return s;
}

double norm(std::vector<double> const& a) { return std::sqrt(dot(a, a)); }

double distance(std::vector<double> const& a, std::vector<double> const& b) {
  double s = 0;
  for (std::size_t k = 0; k < a.size(); ++k) s += (a[k] - b[k]) * (a[k] - b[k]);
  return std::sqrt(s);
}

/// A random T3 of the case's shapes with its factors tied, and its frame.
template <class C>
struct TiedPoint {
  T3<C> x;
  Frame<C> frame;
  t3k::ModeSharing sharing;
};

template <class C>
TiedPoint<C> tied_point(SharedCase const& c, std::uint64_t seed) {
  typename C::execution_space space;
  t3k::ModeSharing sharing(c.labels, c.shapes.big_n);
  auto x = t3k::tie_tucker_factors(
      t3k::random_t3<typename C::scalar_type>(space, c.shapes.big_n, c.shapes.n, c.shapes.r, seed), sharing);
  auto frame = t3k::orthogonal_frame(space, x);
  return {x, frame, sharing};
}

/// Random gauged variations at the frame.
template <class C>
Variation<C> gauged_variations(Frame<C> const& frame, std::size_t n, std::uint64_t seed) {
  typename C::execution_space space;
  auto v = t3k::random_variation(space, frame, n, seed);
  t3k::gauge_project_in_place(space, frame, v);
  return v;
}

/// T(v_t) as a dense row-major tensor, through the rank-doubled T3.
template <class C>
std::vector<double> dense_tangent(Frame<C> const& frame, Variation<C> const& v, std::size_t t) {
  typename C::execution_space space;
  return flat(t3k::to_dense(space, t3k::tangent_to_t3(space, frame, v, t)));
}

/// The relative residual of `y` against the column space (the leading `rank` left singular vectors).
double relative_residual(ColumnSvd const& s, std::size_t rank, std::vector<double> const& y) {
  std::vector<double> res = y;
  for (std::size_t c = 0; c < rank; ++c) {
    double coef = 0;
    for (int r = 0; r < s.rows; ++r) coef += s.p[std::size_t(r) * s.k + c] * y[std::size_t(r)];
    for (int r = 0; r < s.rows; ++r) res[std::size_t(r)] -= coef * s.p[std::size_t(r) * s.k + c];
  }
  return norm(res) / norm(y);
}

// ---------------------------------------------------------------------------------------------------------------

template <class C>
void projection_is_idempotent_and_self_adjoint() {
  typename C::execution_space space;
  std::uint64_t seed = 10;
  for (auto const& c : shared_cases()) {
    auto const p = tied_point<C>(c, ++seed);
    auto const u = gauged_variations<C>(p.frame, 1, ++seed);
    auto const v = gauged_variations<C>(p.frame, 1, ++seed);
    auto const pu = t3k::tie_variation(space, p.frame, p.sharing, u);
    auto const pv = t3k::tie_variation(space, p.frame, p.sharing, v);
    auto const ppv = t3k::tie_variation(space, p.frame, p.sharing, pv);
    auto const tv = dense_tangent<C>(p.frame, v, 0), tpv = dense_tangent<C>(p.frame, pv, 0);
    auto const tu = dense_tangent<C>(p.frame, u, 0), tpu = dense_tangent<C>(p.frame, pu, 0);
    EXPECT_LT(distance(dense_tangent<C>(p.frame, ppv, 0), tpv), kTol * norm(tpv)) << describe(c);
    EXPECT_NEAR(dot(tpu, tv), dot(tu, tpv), kTol * norm(tu) * norm(tv)) << describe(c);
    // Not the identity: a generic untied tangent has a component off the tied space.
    EXPECT_GT(distance(tv, tpv), 1e-3 * norm(tv)) << describe(c);
    // An orthogonal projection: T(v) - T(Pv) is orthogonal to T(Pv), and the variation products are the dense ones.
    std::vector<double> diff(tv.size());
    for (std::size_t k = 0; k < tv.size(); ++k) diff[k] = tv[k] - tpv[k];
    EXPECT_NEAR(dot(diff, tpv), 0.0, kTol * norm(tv) * norm(tv)) << describe(c);
    EXPECT_NEAR(t3k::variation_dot(space, pu, v), dot(tpu, tv), kTol * norm(tu) * norm(tv)) << describe(c);
  }
}

template <class C>
void projected_tangents_lie_in_the_tied_tangent_space() {
  typename C::execution_space space;
  std::uint64_t seed = 40;
  for (auto const& c : shared_cases()) {
    auto const p = tied_point<C>(c, ++seed);
    auto const x = host_t3(p.x);
    ASSERT_LT(distance(dense_tensor(x), flat(t3k::to_dense(space, p.x))), kTol * norm(dense_tensor(x)));
    auto const jac = column_svd(tied_jacobian_columns(x, p.sharing));
    std::size_t const rank = numerical_rank(jac);
    auto const v = gauged_variations<C>(p.frame, 3, ++seed);
    auto const pv = t3k::tie_variation(space, p.frame, p.sharing, v);
    for (std::size_t t = 0; t < 3; ++t) {
      EXPECT_LT(relative_residual(jac, rank, dense_tangent<C>(p.frame, pv, t)), kResidualTol) << describe(c);
      // The check has teeth: the untied tangent is far from the tied space.
      EXPECT_GT(relative_residual(jac, rank, dense_tangent<C>(p.frame, v, t)), 1e-3) << describe(c);
    }
  }
}

/// The Tucker part of a tied tangent is the derivative of the curve that moves every group's factor by one common
/// direction D_g: with the frame's X = D(L_0..L_{d-1}; U), d/dt D(L; U_i + t D_{g(i)}) at t = 0, by central
/// differences of brute-force dense tensors. D_g is recovered from P v by least squares over the group's modes
/// (V_i = S_i D_g for every i of the group, with zero residual).
template <class C>
void tucker_part_is_the_derivative_along_a_common_factor_direction() {
  typename C::execution_space space;
  std::uint64_t seed = 70;
  for (auto const& c : shared_cases()) {
    auto const p = tied_point<C>(c, ++seed);
    auto const& f = p.frame;
    std::size_t const d = f.n_modes();
    auto const v = gauged_variations<C>(f, 1, ++seed);
    auto const pv = t3k::tie_variation(space, f, p.sharing, v);
    // The frame's base point as a plain T3: factors U_i, TT cores L_i.
    HostT3 base;
    base.shapes = f.mode_shapes();
    base.n = f.up_ranks();
    base.r = f.left_ranks();
    for (std::size_t i = 0; i < d; ++i) {
      base.u.push_back(flat(f.up_tucker(i)));
      base.g.push_back(flat(f.left_tt(i)));
    }
    ASSERT_LT(distance(dense_tensor(base), flat(t3k::to_dense(space, p.x))), kTol * norm(dense_tensor(base)));
    // D_g for every mode: least squares of [S_i; ...] D = [V_i; ...].
    std::vector<std::vector<double>> direction(d);
    for (auto const& group : p.sharing.groups()) {
      int const n_u = int(base.n[group.front()]), n_j = int(base.shapes[group.front()]);
      std::vector<double> a, b;
      for (std::size_t i : group) {
        auto const s = flat(f.centre_tucker(i));
        auto const vi = flat(pv.tucker[i]);
        a.insert(a.end(), s.begin(), s.end());
        b.insert(b.end(), vi.begin(), vi.end());
      }
      int const m = int(a.size()) / n_u;
      std::vector<double> pp, sigma, qt;
      int const k = t3k::impl::host_thin_svd(m, n_u, a.data(), pp, sigma, qt);
      ASSERT_GT(sigma[std::size_t(k) - 1], 1e-9 * sigma[0]) << describe(c);
      // D = Qt^T diag(1/sigma) P^T B.
      std::vector<double> dg(std::size_t(n_u) * n_j, 0.0);
      for (int s = 0; s < k; ++s)
        for (int j = 0; j < n_j; ++j) {
          double pb = 0;
          for (int r = 0; r < m; ++r) pb += pp[std::size_t(r) * k + s] * b[std::size_t(r) * n_j + j];
          for (int q = 0; q < n_u; ++q) dg[std::size_t(q) * n_j + j] += qt[std::size_t(s) * n_u + q] * pb / sigma[s];
        }
      // Zero residual: every mode's Tucker variation is S_i D_g with the one D_g.
      double res = 0;
      for (int r = 0; r < m; ++r)
        for (int j = 0; j < n_j; ++j) {
          double sd = 0;
          for (int q = 0; q < n_u; ++q) sd += a[std::size_t(r) * n_u + q] * dg[std::size_t(q) * n_j + j];
          res += (sd - b[std::size_t(r) * n_j + j]) * (sd - b[std::size_t(r) * n_j + j]);
        }
      EXPECT_LT(std::sqrt(res), kTol * (1 + norm(b))) << describe(c);
      for (std::size_t i : group) direction[i] = dg;
    }
    auto curve = [&](double t) {
      auto y = base;
      for (std::size_t i = 0; i < d; ++i)
        for (std::size_t e = 0; e < y.u[i].size(); ++e) y.u[i][e] += t * direction[i][e];
      return dense_tensor(y);
    };
    double const h = 1e-5;
    auto const plus = curve(h), minus = curve(-h);
    std::vector<double> derivative(plus.size());
    for (std::size_t k = 0; k < plus.size(); ++k) derivative[k] = (plus[k] - minus[k]) / (2 * h);
    // The Tucker part of T(P v): T(P v) less the tangent of its TT part alone.
    auto tt_only = t3k::copy_variation(space, pv);
    for (std::size_t i = 0; i < d; ++i) Kokkos::deep_copy(space, tt_only.tucker[i], 0.0);
    space.fence();
    auto const full = dense_tangent<C>(f, pv, 0), tt_part = dense_tangent<C>(f, tt_only, 0);
    std::vector<double> tucker_part(full.size());
    for (std::size_t k = 0; k < full.size(); ++k) tucker_part[k] = full[k] - tt_part[k];
    ASSERT_GT(norm(tucker_part), 1e-3 * norm(full)) << describe(c);
    // Central differences of a degree-d polynomial: error h^2 times the third derivative, about 1e-10 here.
    EXPECT_LT(distance(derivative, tucker_part), 1e-8 * norm(tucker_part)) << describe(c);
  }
}

template <class C>
void image_dimension_is_the_shared_manifold_dimension() {
  typename C::execution_space space;
  std::uint64_t seed = 100;
  for (auto const& c : shared_cases()) {
    auto const p = tied_point<C>(c, ++seed);
    std::size_t const dim = t3k::manifold_dimension(p.x, p.sharing);
    // More samples than the untied tangent space has dimensions, so the projected ones span the whole image.
    std::size_t const samples = t3k::manifold_dimension(p.x) + 5;
    auto v = gauged_variations<C>(p.frame, samples, ++seed);
    t3k::tie_variation_in_place(space, p.frame, p.sharing, v);
    std::vector<std::vector<double>> columns;
    for (std::size_t t = 0; t < samples; ++t) columns.push_back(dense_tangent<C>(p.frame, v, t));
    EXPECT_EQ(numerical_rank(column_svd(columns)), dim) << describe(c);
    EXPECT_EQ(numerical_rank(column_svd(tied_jacobian_columns(host_t3(p.x), p.sharing))), dim) << describe(c);
    EXPECT_LT(dim, t3k::manifold_dimension(p.x)) << describe(c);
  }
}

template <class C>
void trivial_sharing_leaves_the_variation_unchanged() {
  typename C::execution_space space;
  SharedCase const c{{{4, 3, 4, 3}, {2, 2, 2, 2}, {1, 2, 3, 2, 1}}, {0, 1, 2, 3}};
  auto const p = tied_point<C>(c, 5);
  ASSERT_TRUE(p.sharing.is_trivial());
  auto const v = t3k::random_variation(space, p.frame, 2, 6);  // not gauged: left as it is all the same
  auto const w = t3k::tie_variation(space, p.frame, p.sharing, v);
  auto in_place = t3k::copy_variation(space, v);
  t3k::tie_variation_in_place(space, p.frame, p.sharing, in_place);
  for (std::size_t i = 0; i < v.n_modes(); ++i) {
    EXPECT_EQ(flat(w.tucker[i]), flat(v.tucker[i]));
    EXPECT_EQ(flat(w.tt[i]), flat(v.tt[i]));
    EXPECT_EQ(flat(in_place.tucker[i]), flat(v.tucker[i]));
    EXPECT_EQ(flat(in_place.tt[i]), flat(v.tt[i]));
  }
  EXPECT_NE(w.tucker[0].data(), v.tucker[0].data());  // a copy, not an alias
}

template <class C>
void tt_variations_and_single_modes_are_kept() {
  typename C::execution_space space;
  auto const c = shared_cases().front();  // labels {0, 1, 0, 2}
  auto const p = tied_point<C>(c, 8);
  auto const v = gauged_variations<C>(p.frame, 2, 9);
  auto const w = t3k::tie_variation(space, p.frame, p.sharing, v);
  for (std::size_t i = 0; i < v.n_modes(); ++i) EXPECT_EQ(flat(w.tt[i]), flat(v.tt[i]));
  EXPECT_EQ(flat(w.tucker[1]), flat(v.tucker[1]));
  EXPECT_EQ(flat(w.tucker[3]), flat(v.tucker[3]));
  EXPECT_NE(flat(w.tucker[0]), flat(v.tucker[0]));
}

template <class C>
void frames_that_do_not_fit_the_sharing_are_refused() {
  typename C::execution_space space;
  auto const c = shared_cases().front();
  t3k::ModeSharing const sharing(c.labels, c.shapes.big_n);
  auto const untied = t3k::random_t3<typename C::scalar_type>(space, c.shapes.big_n, c.shapes.n, c.shapes.r, 3);
  auto const frame = t3k::orthogonal_frame(space, untied);
  auto const v = gauged_variations<C>(frame, 1, 4);
  try {
    t3k::tie_variation(space, frame, sharing, v);
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (t3k::InvalidArgument const& e) {
    EXPECT_NE(std::string(e.what()).find("t3k::tie_variation: modes 0 and 2 share a factor but the frame's up "
                                         "factors differ"),
              std::string::npos)
        << e.what();
  }
  t3k::ModeSharing const other({0, 0, 1}, {4, 4, 3});
  try {
    t3k::tie_variation_in_place(space, frame, other, v);
    ADD_FAILURE() << "expected DimensionMismatch";
  } catch (t3k::DimensionMismatch const& e) {
    EXPECT_NE(std::string(e.what()).find("t3k::tie_variation_in_place: the frame has mode shapes"), std::string::npos)
        << e.what();
  }
}

/// x + t dir, core by core, retied (both are tied, so every group's factors stay equal).
template <class C>
T3<C> moved(T3<C> const& x, T3<C> const& dir, double t, t3k::ModeSharing const& sharing) {
  auto step = [t](auto const& a, auto const& b) {
    auto ha = Kokkos::create_mirror(Kokkos::HostSpace{}, a);  // a new host copy, never an alias of x
    Kokkos::deep_copy(ha, a);
    auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b);
    for (std::size_t e = 0; e < ha.span(); ++e) ha.data()[e] += typename C::scalar_type(t) * hb.data()[e];
    return Kokkos::create_mirror_view_and_copy(typename C::memory_space{}, ha);
  };
  std::vector<typename T3<C>::tucker_core_type> tucker;
  std::vector<typename T3<C>::tt_core_type> tt;
  for (std::size_t i = 0; i < x.n_modes(); ++i) {
    tucker.push_back(step(x.tucker_core(i), dir.tucker_core(i)));
    tt.push_back(step(x.tt_core(i), dir.tt_core(i)));
  }
  return t3k::tie_tucker_factors(T3<C>(tucker, tt), sharing);
}

/// The shared Riemannian gradient against central differences of the loss along tied curves
/// t -> X(t) = D(G_i + t K_i; F_g + t D_g), every core and every group's one factor moved (a polynomial curve in the
/// shared model). Its tangent is the sum of the 2d T3s with one core replaced by its direction; projected onto the
/// tangent space term by term, it is a tied tangent xi, and the derivative of the loss is <grad, xi>.
template <class C>
void shared_gradient_is_the_derivative_along_tied_curves() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  std::uint64_t seed = 130;
  for (auto const& c : shared_cases()) {
    auto const p = tied_point<C>(c, ++seed);
    auto const truth = t3k::random_t3<S>(space, c.shapes.big_n, c.shapes.n, c.shapes.r, ++seed);
    auto const problem = t3k::make_planted_problem(space, truth, 40, 1, 0.0, ++seed);
    auto const at = t3k::evaluate_loss(space, problem, p.x);
    auto const g = t3k::riemannian_gradient(space, problem, p.frame, p.sharing, at, t3k::ChunkSize::none());
    auto const untied = t3k::riemannian_gradient(space, problem, p.frame, at, t3k::ChunkSize::none());
    // Tied already, and not the untied gradient.
    auto const again = t3k::tie_variation(space, p.frame, p.sharing, g);
    EXPECT_LT(distance(dense_tangent<C>(p.frame, again, 0), dense_tangent<C>(p.frame, g, 0)),
              kTol * t3k::variation_norm(space, g))
        << describe(c);
    EXPECT_GT(distance(dense_tangent<C>(p.frame, untied, 0), dense_tangent<C>(p.frame, g, 0)),
              1e-3 * t3k::variation_norm(space, untied))
        << describe(c);

    auto const dir =
        t3k::tie_tucker_factors(t3k::random_t3<S>(space, c.shapes.big_n, c.shapes.n, c.shapes.r, ++seed), p.sharing);
    auto xi = t3k::zero_variation(space, p.frame, 1);
    for (std::size_t i = 0; i < p.x.n_modes(); ++i) {
      auto tucker = p.x.tucker_cores();
      auto tt = p.x.tt_cores();
      tucker[i] = dir.tucker_core(i);
      t3k::axpy_variation(space, S(1), t3k::project_onto_tangent_space(space, p.frame, T3<C>(tucker, p.x.tt_cores())),
                          xi);
      tt[i] = dir.tt_core(i);
      t3k::axpy_variation(space, S(1), t3k::project_onto_tangent_space(space, p.frame, T3<C>(p.x.tucker_cores(), tt)),
                          xi);
    }
    // The curve's tangent is tied: the projection keeps it.
    auto const pxi = t3k::tie_variation(space, p.frame, p.sharing, xi);
    EXPECT_LT(distance(dense_tangent<C>(p.frame, pxi, 0), dense_tangent<C>(p.frame, xi, 0)),
              kTol * t3k::variation_norm(space, xi))
        << describe(c);
    {
      // xi is the curve's tangent: central differences of the dense curve (a polynomial of degree d in t).
      double const h = 1e-5;
      auto const a = flat(t3k::to_dense(space, moved<C>(p.x, dir, h, p.sharing)));
      auto const b = flat(t3k::to_dense(space, moved<C>(p.x, dir, -h, p.sharing)));
      std::vector<double> fd(a.size());
      for (std::size_t k = 0; k < a.size(); ++k) fd[k] = (a[k] - b[k]) / (2 * h);
      EXPECT_LT(distance(fd, dense_tangent<C>(p.frame, xi, 0)), 1e-8 * norm(fd)) << describe(c);
    }
    auto loss_along = [&](double t) {
      return t3k::evaluate_loss(space, problem, moved<C>(p.x, dir, t, p.sharing)).loss;
    };
    // The loss is a polynomial of degree 2d in t: central differences are off by h^2 times its third derivative
    // (about 1e-10 here) plus rounding, 1e-16 |loss| / h = 1e-11.
    double const h = 1e-5;
    double const derivative = (loss_along(h) - loss_along(-h)) / (2 * h);
    double const predicted = t3k::variation_dot(space, g, xi);
    EXPECT_NEAR(derivative, predicted, 1e-7 * (std::abs(predicted) + at.loss)) << describe(c);
    // The untied gradient predicts the same derivative along tied directions (P is self-adjoint): the tied gradient
    // is its projection, which drops only what no tied direction sees.
    EXPECT_NEAR(t3k::variation_dot(space, untied, xi), predicted,
                kTol * t3k::variation_norm(space, untied) * t3k::variation_norm(space, xi))
        << describe(c);
  }
}

template <class C>
class TiedTangentTest : public ::testing::Test {};
TYPED_TEST_SUITE(TiedTangentTest, DoubleConfigs);

TYPED_TEST(TiedTangentTest, ProjectionIsIdempotentAndSelfAdjoint) {
  projection_is_idempotent_and_self_adjoint<TypeParam>();
}
TYPED_TEST(TiedTangentTest, ProjectedTangentsLieInTheTiedTangentSpace) {
  projected_tangents_lie_in_the_tied_tangent_space<TypeParam>();
}
TYPED_TEST(TiedTangentTest, TuckerPartIsTheDerivativeAlongACommonFactorDirection) {
  tucker_part_is_the_derivative_along_a_common_factor_direction<TypeParam>();
}
TYPED_TEST(TiedTangentTest, SharedGradientIsTheDerivativeAlongTiedCurves) {
  shared_gradient_is_the_derivative_along_tied_curves<TypeParam>();
}
TYPED_TEST(TiedTangentTest, ImageDimensionIsTheSharedManifoldDimension) {
  image_dimension_is_the_shared_manifold_dimension<TypeParam>();
}

// The checks that need no dense tolerance run in float as well.
template <class C>
class TiedTangentAllScalarsTest : public ::testing::Test {};
TYPED_TEST_SUITE(TiedTangentAllScalarsTest, TestConfigs);

TYPED_TEST(TiedTangentAllScalarsTest, TrivialSharingLeavesTheVariationUnchanged) {
  trivial_sharing_leaves_the_variation_unchanged<TypeParam>();
}
TYPED_TEST(TiedTangentAllScalarsTest, TtVariationsAndSingleModesAreKept) {
  tt_variations_and_single_modes_are_kept<TypeParam>();
}
TYPED_TEST(TiedTangentAllScalarsTest, FramesThatDoNotFitTheSharingAreRefused) {
  frames_that_do_not_fit_the_sharing_are_refused<TypeParam>();
}

}  // namespace
