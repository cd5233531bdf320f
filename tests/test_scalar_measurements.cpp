// Entries and applies (docs/math.md, measurements) against brute-force references: their jets by subset expansion of
// a dense tensor, J by the dense tangent T(v), J^T by the adjoint identity, per-sample J^T against the summed one, and
// chunked J^T against the unchunked one bit for bit.
#include "frame_reference.hpp"
#include "random_views.hpp"
#include "shape_cases.hpp"
#include "test_devices.hpp"

#include "t3k/algorithms/apply_derivatives.hpp"
#include "t3k/algorithms/apply_derivatives_transpose.hpp"
#include "t3k/algorithms/random_t3.hpp"
#include "t3k/algorithms/tangent_apply_derivatives.hpp"
#include "t3k/algorithms/to_dense.hpp"

namespace {

using namespace t3k_test;

template <class C>
using Indices = Kokkos::View<int**, Kokkos::LayoutRight, typename C::memory_space>;

/// The scalar jet a^(k) of a dense tensor by subset expansion: the sum over subsets S of the d modes with |S| = k of
/// the tensor contracted with p_m (m in S) and w_m (m not in S) in every mode.
double scalar_subset_jet(std::vector<double> const& dense, std::vector<std::size_t> const& shapes, std::size_t k,
                         std::vector<std::vector<double>> const& w, std::vector<std::vector<double>> const& p) {
  std::size_t const d = shapes.size();
  double total = 0;
  for (std::size_t mask = 0; mask < (std::size_t(1) << d); ++mask) {
    if (std::size_t(__builtin_popcountll(mask)) != k) continue;
    std::vector<std::vector<double>> vec(d);
    for (std::size_t m = 0; m < d; ++m) vec[m] = (mask & (std::size_t(1) << m)) ? p[m] : w[m];
    auto z = contract_all_but(dense, shapes, 0, vec);  // every mode but 0, then mode 0
    for (std::size_t j = 0; j < z.size(); ++j) total += z[j] * vec[0][j];
  }
  return total;
}

/// Random multi-indices (W, d), seeded, and their one-hot vectors on the host.
template <class C>
Indices<C> random_indices(std::vector<std::size_t> const& shapes, std::size_t w, std::uint64_t seed) {
  Indices<C> idx("indices", w, shapes.size());
  auto h = Kokkos::create_mirror_view(idx);
  t3k::impl::HostNormalGenerator gen(seed);
  for (std::size_t s = 0; s < w; ++s)
    for (std::size_t i = 0; i < shapes.size(); ++i) h(s, i) = int(gen.next() % shapes[i]);
  Kokkos::deep_copy(idx, h);
  return idx;
}

template <class IndexView>
std::vector<std::vector<double>> one_hot_vectors(IndexView const& idx, std::vector<std::size_t> const& shapes,
                                                 std::size_t s) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, idx);
  std::vector<std::vector<double>> w(shapes.size());
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    w[i].assign(shapes[i], 0.0);
    w[i][std::size_t(h(s, i))] = 1.0;
  }
  return w;
}

/// Brute-force scalar jets (s, k) of a dense tensor: applies with ww, or entries (ww empty) with indices.
template <class C>
std::vector<double> brute_scalar_jets(std::vector<double> const& dense, std::vector<std::size_t> const& shapes,
                                      std::vector<Probe2<C>> const& ww, Indices<C> const& idx,
                                      std::vector<Probe2<C>> const& pp, std::size_t w, std::size_t order) {
  std::vector<double> out;
  auto host_all = [](std::vector<Probe2<C>> const& views) {
    std::vector<typename Probe2<C>::HostMirror> h;
    for (auto const& v : views) h.push_back(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v));
    return h;
  };
  auto const wh = host_all(ww), ph = host_all(pp);
  auto row = [](auto const& h, std::size_t s) {
    std::vector<double> r(h.extent(1));
    for (std::size_t j = 0; j < r.size(); ++j) r[j] = double(h(s, j));
    return r;
  };
  for (std::size_t s = 0; s < w; ++s) {
    std::vector<std::vector<double>> ws, ps(shapes.size());
    if (ww.empty()) {
      ws = one_hot_vectors(idx, shapes, s);
    } else {
      for (auto const& h : wh) ws.push_back(row(h, s));
    }
    for (std::size_t m = 0; m < shapes.size(); ++m) {
      ps[m] = pp.empty() ? std::vector<double>(shapes[m], 0.0) : row(ph[m], s);
    }
    for (std::size_t k = 0; k <= order; ++k) out.push_back(k > shapes.size() ? 0.0 : scalar_subset_jet(dense, shapes, k, ws, ps));
  }
  return out;
}

void expect_near_all(std::vector<double> const& a, std::vector<double> const& ref, double tol, std::string const& what) {
  ASSERT_EQ(a.size(), ref.size()) << what;
  double scale = 1;
  for (double x : ref) scale = std::max(scale, std::abs(x));
  for (std::size_t e = 0; e < ref.size(); ++e) EXPECT_NEAR(a[e], ref[e], tol * scale) << what << " entry " << e;
}

// Cases of their own: the subset expansion over every order up to d + 1 keeps d small.
std::vector<T3ShapeCase> scalar_shape_cases() {
  return {
      {{4, 3, 5}, {3, 2, 4}, {1, 2, 3, 1}},              // ragged
      {{5}, {3}, {1, 1}},                                // d = 1
      {{3, 4}, {4, 3}, {1, 2, 1}},                       // n_0 > N_0
      {{2, 1, 3, 2}, {2, 1, 2, 2}, {2, 1, 2, 1, 3}},     // boundary ranks r_0, r_d != 1, a size-1 mode
  };
}

// Applies and entries of a T3, every order including K > d, against the subset expansion of its dense tensor; the
// order-0 entries also against t3_entries.
template <class C>
void scalar_jets_match_subset_expansion() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  std::size_t const w = 5;
  for (auto const& sc : scalar_shape_cases()) {
    auto x = t3k::random_t3<S>(space, sc.big_n, sc.n, sc.r, 7);
    auto dense = flat_host(t3k::to_dense(space, x));
    auto ww = probe_stack<C>(sc.big_n, w, 10);
    auto pp = probe_stack<C>(sc.big_n, w, 20);
    auto idx = random_indices<C>(sc.big_n, w, 30);
    std::size_t const d = sc.big_n.size();
    for (std::size_t order = 0; order <= d + 1; ++order) {
      auto a = flat_host(t3k::apply_derivatives(space, x, ww, pp, order));
      expect_near_all(a, brute_scalar_jets<C>(dense, sc.big_n, ww, idx, pp, w, order), eps_times<S>(64), "applies");
      auto e = flat_host(t3k::entry_derivatives(space, x, idx, pp, order));
      expect_near_all(e, brute_scalar_jets<C>(dense, sc.big_n, {}, idx, pp, w, order), eps_times<S>(64), "entries");
    }
    auto values = flat_host(t3k::entries(space, x, idx));
    expect_near_all(values, flat_host(t3k::t3_entries(space, x, idx)), eps_times<S>(16), "entries vs t3_entries");
    auto applied = flat_host(t3k::applies(space, x, ww));
    expect_near_all(applied, brute_scalar_jets<C>(dense, sc.big_n, ww, idx, {}, w, 0), eps_times<S>(64), "applies");
  }
}

// J v of applies and entries equals the scalar jets of the dense tangent T(v), for a stack of two variations.
template <class C>
void tangent_jets_match_dense_tangent() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  std::size_t const w = 4, nt = 2;
  for (auto const& fc : frame_shape_cases()) {
    auto f = random_frame<S, typename C::memory_space>(space, fc, 3);
    auto v = random_variation_for_test(space, f, nt, 4);
    auto ww = probe_stack<C>(fc.big_n, w, 10);
    auto pp = probe_stack<C>(fc.big_n, w, 20);
    auto idx = random_indices<C>(fc.big_n, w, 30);
    std::size_t const d = fc.big_n.size();
    for (std::size_t order = 0; order <= d + 1; ++order) {
      auto ja = t3k::tangent_apply_derivatives(space, f, v, ww, pp, order);
      auto je = t3k::tangent_entry_derivatives(space, f, v, idx, pp, order);
      for (std::size_t t = 0; t < nt; ++t) {
        auto dense = dense_tangent(f, v, t);
        expect_near_all(flat_host(Kokkos::subview(ja, t, Kokkos::ALL, Kokkos::ALL)),
                        brute_scalar_jets<C>(dense, fc.big_n, ww, idx, pp, w, order), eps_times<S>(256), "J applies");
        expect_near_all(flat_host(Kokkos::subview(je, t, Kokkos::ALL, Kokkos::ALL)),
                        brute_scalar_jets<C>(dense, fc.big_n, {}, idx, pp, w, order), eps_times<S>(256), "J entries");
      }
    }
  }
}

double variation_dot(std::vector<double> const& a, std::vector<double> const& b) {
  double s = 0;
  for (std::size_t e = 0; e < a.size(); ++e) s += a[e] * b[e];
  return s;
}

template <class V>
std::vector<double> flat_variation(V const& v, std::size_t t) {
  std::vector<double> out;
  for (std::size_t i = 0; i < v.n_modes(); ++i) {
    auto a = flat_host(Kokkos::subview(v.tucker[i], t, Kokkos::ALL, Kokkos::ALL));
    auto b = flat_host(Kokkos::subview(v.tt[i], t, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL));
    out.insert(out.end(), a.begin(), a.end());
    out.insert(out.end(), b.begin(), b.end());
  }
  return out;
}

/// The sum over samples of a per-sample J^T, stack entry t (index t * W + s).
template <class V>
std::vector<double> summed_per_sample(V const& v, std::size_t t, std::size_t w) {
  std::vector<double> total;
  for (std::size_t i = 0; i < v.n_modes(); ++i) {
    for (auto const& core : {flat_host(v.tucker[i]), flat_host(v.tt[i])}) {
      std::size_t const size = core.size() / v.n_stack();
      std::vector<double> sum(size, 0.0);
      for (std::size_t s = 0; s < w; ++s)
        for (std::size_t e = 0; e < size; ++e) sum[e] += core[(t * w + s) * size + e];
      total.insert(total.end(), sum.begin(), sum.end());
    }
  }
  return total;
}

// <J v, r> = <v, J^T r> for applies and entries (with and without jets), stacked residuals; the per-sample J^T sums
// to the summed one; every chunk size gives the summed J^T bit for bit, with W spanning several reduction blocks.
template <class C>
void transpose_is_the_chunk_invariant_adjoint() {
  using S = typename C::scalar_type;
  typename C::execution_space space;
  std::size_t const nt = 2;
  std::size_t const block = block_of<C>();
  for (auto const& fc : frame_shape_cases()) {
    std::size_t const d = fc.big_n.size();
    std::size_t const w = fc.rl.size() > 3 ? 2 * block + 5 : 7;  // several blocks for some shapes, few for others
    auto f = random_frame<S, typename C::memory_space>(space, fc, 3);
    auto v = random_variation_for_test(space, f, 1, 4);
    auto ww = probe_stack<C>(fc.big_n, w, 10);
    auto pp = probe_stack<C>(fc.big_n, w, 20);
    auto idx = random_indices<C>(fc.big_n, w, 30);
    for (std::size_t order : {std::size_t(0), std::size_t(1), d + 1}) {
      Jets3<C> r("r", nt, w, order + 1);
      random_view(r, 40 + order);
      for (int kind = 0; kind < 2; ++kind) {
        std::string const what = std::string(kind == 0 ? "applies" : "entries") + " order " + std::to_string(order) +
                                 " d " + std::to_string(d);
        auto jt = [&](t3k::ChunkSize chunk, bool summed) {
          t3k::TransposeOptions o{summed, chunk};
          return kind == 0 ? t3k::apply_derivatives_transpose(space, f, ww, pp, r, o)
                           : t3k::entry_derivatives_transpose(space, f, idx, pp, r, o);
        };
        auto jv = kind == 0 ? t3k::tangent_apply_derivatives(space, f, v, ww, pp, order)
                            : t3k::tangent_entry_derivatives(space, f, v, idx, pp, order);
        auto dense_summed = jt(t3k::ChunkSize::none(), true);
        auto const jv_flat = flat_host(Kokkos::subview(jv, 0, Kokkos::ALL, Kokkos::ALL));
        auto const v_flat = flat_variation(v, 0);
        for (std::size_t t = 0; t < nt; ++t) {
          auto const r_flat = flat_host(Kokkos::subview(r, t, Kokkos::ALL, Kokkos::ALL));
          double const lhs = variation_dot(jv_flat, r_flat);
          double const rhs = variation_dot(v_flat, flat_variation(dense_summed, t));
          double norm_jv = 0, norm_r = 0;
          for (double x : jv_flat) norm_jv += x * x;
          for (double x : r_flat) norm_r += x * x;
          EXPECT_NEAR(lhs, rhs, eps_times<S>(1024) * std::sqrt(norm_jv * norm_r) + eps_times<S>(64)) << what;
        }
        auto per_sample = jt(t3k::ChunkSize::of(block), false);
        for (std::size_t t = 0; t < nt; ++t) {
          expect_near_all(summed_per_sample(per_sample, t, w), flat_variation(dense_summed, t), eps_times<S>(256),
                          what + " per sample");
        }
        for (auto chunk : {t3k::ChunkSize::of(1), t3k::ChunkSize::of(2 * block), t3k::ChunkSize::automatic()}) {
          auto chunked = jt(chunk, true);
          for (std::size_t t = 0; t < nt; ++t) {
            EXPECT_EQ(flat_variation(chunked, t), flat_variation(dense_summed, t)) << what << " chunk " << chunk.to_string();
          }
        }
      }
    }
  }
}

template <class C>
class ScalarMeasurements : public ::testing::Test {};
TYPED_TEST_SUITE(ScalarMeasurements, TestConfigs);

TYPED_TEST(ScalarMeasurements, JetsMatchTheSubsetExpansionOfTheDenseTensor) {
  scalar_jets_match_subset_expansion<TypeParam>();
}
TYPED_TEST(ScalarMeasurements, TangentJetsMatchTheDenseTangent) { tangent_jets_match_dense_tangent<TypeParam>(); }
TYPED_TEST(ScalarMeasurements, TransposeIsTheChunkInvariantAdjoint) {
  transpose_is_the_chunk_invariant_adjoint<TypeParam>();
}

}  // namespace
