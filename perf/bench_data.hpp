#pragma once
/// \file bench_data.hpp
/// t3k_bench's problem shapes from benchmark arguments (d, N, n, r, K, W, chunk), their resolved chunk sizes, and
/// random data of those shapes.

#include "flop_counts.hpp"

#include "t3k/t3k.hpp"

#include <benchmark/benchmark.h>
#include <KokkosBlas3_gemm.hpp>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace t3k_bench {

using DefaultExec = Kokkos::DefaultExecutionSpace;

// ------------------------------------------------------------------------------------------------------ shapes

/// A uniform problem shape: d modes of size N, Tucker ranks n, interior TT ranks r (boundaries 1), order K, W probes.
struct Shape {
  std::size_t d = 0, big_n = 0, n = 0, r = 0, order = 0, w = 0;

  std::vector<std::size_t> mode_shapes() const { return std::vector<std::size_t>(d, big_n); }
  std::vector<std::size_t> tucker_ranks() const { return std::vector<std::size_t>(d, n); }
  std::vector<std::size_t> tt_ranks() const {
    std::vector<std::size_t> r_(d + 1, r);
    r_.front() = r_.back() = 1;
    return r_;
  }
  std::size_t sum_n() const { return d * big_n; }
  FrameDims frame_dims() const { return frame_dims_of_t3(mode_shapes(), tucker_ranks(), tt_ranks()); }
  std::string key() const {
    std::ostringstream s;
    s << d << ',' << big_n << ',' << n << ',' << r << ',' << order << ',' << w;
    return s.str();
  }
};

/// The first six benchmark arguments (d, N, n, r, K, W) as a Shape.
inline Shape shape_of(benchmark::State const& state) {
  Shape s;
  s.d = std::size_t(state.range(0));
  s.big_n = std::size_t(state.range(1));
  s.n = std::size_t(state.range(2));
  s.r = std::size_t(state.range(3));
  s.order = std::size_t(state.range(4));
  s.w = std::size_t(state.range(5));
  return s;
}

/// The six shape arguments' names, for ->ArgNames.
inline std::vector<std::string> shape_arg_names() { return {"d", "N", "n", "r", "K", "W"}; }

/// Chunk-size argument encoding: 0 = none, -1 = auto, c > 0 = fixed c.
inline t3k::ChunkSize chunk_of(std::int64_t code) {
  return code == 0 ? t3k::ChunkSize::none() : code < 0 ? t3k::ChunkSize::automatic() : t3k::ChunkSize::of(code);
}
constexpr std::int64_t chunk_none = 0;
constexpr std::int64_t chunk_auto = -1;

template <class Scalar>
constexpr t3k::ScalarType scalar_type_of() {
  return sizeof(Scalar) == 4 ? t3k::ScalarType::float32 : t3k::ScalarType::float64;
}
template <class Scalar>
char const* scalar_name() {
  return sizeof(Scalar) == 4 ? "float" : "double";
}

/// The J^T chunk size actually used for a request (what the library resolves `auto` to).
template <class Scalar, class ExecSpace = DefaultExec>
std::size_t resolved_chunk(t3k::ChunkSize c, Shape const& s, std::size_t n_tangent) {
  if (c.kind() == t3k::ChunkSize::Kind::automatic) {
    return t3k::automatic_chunk_size<ExecSpace>(s.mode_shapes(), s.tucker_ranks(), s.tt_ranks(), s.order, s.w,
                                                n_tangent, 1, scalar_type_of<Scalar>());
  }
  if (c.kind() == t3k::ChunkSize::Kind::fixed)
    return t3k::impl::rows_per_chunk(c.rows(), s.w, t3k::reduction_block_size_for<ExecSpace>());
  return s.w;
}

// -------------------------------------------------------------------------------------------------- data

/// Fills a contiguous View with reproducible pseudo-random values in [-scale, scale) (a counter-based hash, so the
/// values do not depend on the backend or the thread count).
template <class ExecSpace, class View>
void fill_random(ExecSpace const& space, View const& v, std::uint64_t seed, double scale = 1.0) {
  using Value = typename View::non_const_value_type;
  Value* data = v.data();
  Kokkos::parallel_for(
      "t3k_bench::fill_random", Kokkos::RangePolicy<ExecSpace>(space, 0, v.span()), KOKKOS_LAMBDA(std::size_t e) {
        std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + e + 1;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        double const u = double(z >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
        data[e] = Value(scale * (2 * u - 1));
      });
}

template <class Scalar, class Mem>
using ProbeView = Kokkos::View<Scalar**, Kokkos::LayoutRight, Mem>;
template <class Scalar, class Mem>
using ResidualView = Kokkos::View<Scalar****, Kokkos::LayoutRight, Mem>;

/// W random probe vectors per mode, scaled by 1/sqrt(N_i) so that probe jets stay O(1).
template <class Scalar, class ExecSpace>
std::vector<ProbeView<Scalar, typename ExecSpace::memory_space>> random_probes(ExecSpace const& space, Shape const& s,
                                                                               std::uint64_t seed) {
  std::vector<ProbeView<Scalar, typename ExecSpace::memory_space>> out;
  for (std::size_t i = 0; i < s.d; ++i) {
    out.emplace_back(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k_bench::probes"), s.w, s.big_n);
    fill_random(space, out.back(), seed * 1000 + i, std::sqrt(3.0 / double(s.big_n)));
  }
  return out;
}

/// Bytes of every core of a T3 / a frame / a variation.
template <class Scalar, class Mem>
double bytes_of(t3k::TuckerTensorTrain<Scalar, Mem> const& x) {
  double b = 0;
  for (std::size_t i = 0; i < x.n_modes(); ++i) b += double(x.tucker_core(i).span() + x.tt_core(i).span());
  return b * sizeof(Scalar);
}
template <class Scalar, class Mem>
double bytes_of(t3k::OrthogonalFrame<Scalar, Mem> const& f) {
  double b = 0;
  for (std::size_t i = 0; i < f.n_modes(); ++i) {
    b += double(f.up_tucker(i).span() + f.left_tt(i).span() + f.right_tt(i).span() + f.outer_tt(i).span());
  }
  return b * sizeof(Scalar);
}
/// Entries of one variation at the frame (sum over cores of nO N + rL nU rR).
inline double variation_entries(FrameDims const& f) {
  double e = 0;
  for (std::size_t i = 0; i < f.d(); ++i) e += double(f.no[i] * f.big_n[i] + f.rl[i] * f.nu[i] * f.rr[i + 1]);
  return e;
}
template <class Scalar, class Mem>
FrameDims dims_of(t3k::OrthogonalFrame<Scalar, Mem> const& f) {
  return {f.mode_shapes(), f.up_ranks(), f.outer_ranks(), f.left_ranks(), f.right_ranks()};
}

}  // namespace t3k_bench
