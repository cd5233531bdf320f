#pragma once
/// \file variation_operations.hpp
/// Vector-space operations on variation stacks (docs/math.md): seeded random variations, copies, axpy, scaling
/// and the corewise Euclidean inner product <v, v'> = sum_i <V_i, V'_i> + <H_i, H'_i>, which equals the Frobenius
/// inner product <T(v), T(v')> of the tangent tensors when both variations are gauged.
///
/// Every operation acts on all entries of V and H (gauged or not). Copies, axpy and scaling act on the whole stack;
/// inner products are per stack entry.

#include "t3k/algorithms/impl/jet_kernels.hpp"
#include "t3k/core/error.hpp"
#include "t3k/core/impl/host_random.hpp"
#include "t3k/core/impl/kokkos_compat.hpp"
#include "t3k/core/impl/small_kernels.hpp"
#include "t3k/core/impl/view_utils.hpp"
#include "t3k/core/orthogonal_frame.hpp"
#include "t3k/core/t3_variation.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace t3k {

namespace impl {

/// Compile-time checks shared by the public functions on variations: a Kokkos execution space that can access the
/// variation's memory space. Instantiate as `static_assert(VariationSpaceCheck<E, M>::value, "")`.
template <class ExecutionSpace, class MemorySpace>
struct VariationSpaceCheck {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "t3k: the first argument must be a Kokkos execution space instance");
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                "t3k: the variation's memory space is not accessible from the execution space");
  static constexpr bool value = true;
};

/// Throws DimensionMismatch unless x and y have the same number of cores and the same core shapes.
template <class Scalar, class MemorySpace>
void check_same_variation_shape(std::string const& where, T3Variation<Scalar, MemorySpace> const& x,
                                T3Variation<Scalar, MemorySpace> const& y) {
  if (x.tucker.size() != x.tt.size() || y.tucker.size() != y.tt.size() || x.tt.size() != y.tt.size()) {
    throw DimensionMismatch(concat(where, ": the variations have ", x.tucker.size(), " + ", x.tt.size(), " and ",
                                   y.tucker.size(), " + ", y.tt.size(),
                                   " (Tucker + TT) cores; both must have d + d cores"));
  }
  if (x.tt.empty()) throw InvalidArgument(where + ": the variations have no cores (d = 0)");
  for (std::size_t i = 0; i < x.tt.size(); ++i) {
    check_shape(where, concat("Tucker variation ", i, " of the second variation"), y.tucker[i],
                view_shape(x.tucker[i]));
    check_shape(where, concat("TT variation ", i, " of the second variation"), y.tt[i], view_shape(x.tt[i]));
  }
}

/// Throws InvalidArgument unless the variation has d + d cores with a common stack length; returns that length.
template <class Scalar, class MemorySpace>
std::size_t check_variation_stack(std::string const& where, T3Variation<Scalar, MemorySpace> const& v) {
  if (v.tt.empty() || v.tucker.size() != v.tt.size()) {
    throw DimensionMismatch(concat(where, ": the variation has ", v.tucker.size(), " Tucker and ", v.tt.size(),
                                   " TT cores; it needs d >= 1 of each"));
  }
  std::size_t const n = v.tt[0].extent(0);
  for (std::size_t i = 0; i < v.tt.size(); ++i) {
    if (v.tucker[i].extent(0) != n || v.tt[i].extent(0) != n) {
      throw DimensionMismatch(concat(where, ": Tucker variation ", i, " has shape ",
                                     shape_string(view_shape(v.tucker[i])), " and TT variation ", i, " has shape ",
                                     shape_string(view_shape(v.tt[i])), "; both need the stack length ", n));
    }
  }
  return n;
}

/// Throws InvalidArgument unless t indexes an entry of the stack.
template <class Scalar, class MemorySpace>
void check_stack_index(std::string const& where, T3Variation<Scalar, MemorySpace> const& v, std::size_t t) {
  if (t >= v.n_stack()) {
    throw InvalidArgument(
        concat(where, ": stack index ", t, " is out of range for a stack of ", v.n_stack(), " variations"));
  }
}

/// y <- alpha x + y, entrywise over a rank-3 core (stack, o, j).
template <class ExecutionSpace, class Scalar, class MemorySpace>
void axpy_variation_core(ExecutionSpace const& space, char const* label, Scalar alpha,
                         typename T3Variation<Scalar, MemorySpace>::tucker_type const& x,
                         typename T3Variation<Scalar, MemorySpace>::tucker_type const& y) {
  int const n0 = int(x.extent(0)), n1 = int(x.extent(1)), n2 = int(x.extent(2));
  for_each_index(
      space, label, {n0, n1, n2}, 1, KOKKOS_LAMBDA(int t, int o, int j) { y(t, o, j) += alpha * x(t, o, j); });
}

/// The same over a rank-4 core (stack, a, u, b).
template <class ExecutionSpace, class Scalar, class MemorySpace>
void axpy_variation_core(ExecutionSpace const& space, char const* label, Scalar alpha,
                         typename T3Variation<Scalar, MemorySpace>::tt_type const& x,
                         typename T3Variation<Scalar, MemorySpace>::tt_type const& y) {
  int const n0 = int(x.extent(0)), n1 = int(x.extent(1)), n2 = int(x.extent(2)), n3 = int(x.extent(3));
  for_each_index(
      space, label, {n0, n1, n2, n3}, 1,
      KOKKOS_LAMBDA(int t, int a, int u, int b) { y(t, a, u, b) += alpha * x(t, a, u, b); });
}

/// x <- alpha x over a rank-3 core.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void scale_variation_core(ExecutionSpace const& space, char const* label, Scalar alpha,
                          typename T3Variation<Scalar, MemorySpace>::tucker_type const& x) {
  int const n0 = int(x.extent(0)), n1 = int(x.extent(1)), n2 = int(x.extent(2));
  for_each_index(
      space, label, {n0, n1, n2}, 1, KOKKOS_LAMBDA(int t, int o, int j) { x(t, o, j) *= alpha; });
}

/// x <- alpha x over a rank-4 core.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void scale_variation_core(ExecutionSpace const& space, char const* label, Scalar alpha,
                          typename T3Variation<Scalar, MemorySpace>::tt_type const& x) {
  int const n0 = int(x.extent(0)), n1 = int(x.extent(1)), n2 = int(x.extent(2)), n3 = int(x.extent(3));
  for_each_index(
      space, label, {n0, n1, n2, n3}, 1, KOKKOS_LAMBDA(int t, int a, int u, int b) { x(t, a, u, b) *= alpha; });
}

/// Entries per block of the two-stage dot products below. Each block is summed sequentially, then the blocks of a
/// stack entry in order: the summation order depends only on the shapes, never on the thread count or team sizes,
/// so a backend gives bitwise the same dots for any number of threads.
constexpr int variation_dot_block = 256;

/// out(t) += sum over blocks c of partial(t, c), in block order.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void add_block_sums(ExecutionSpace const& space,
                    Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace> const& partial,
                    Kokkos::View<Scalar*, MemorySpace> const& out) {
  int const n_blocks = int(partial.extent(1));
  for_each_index(
      space, "t3k::variation_dot::add_blocks", {int(partial.extent(0))}, std::size_t(n_blocks), KOKKOS_LAMBDA(int t) {
        Scalar acc = out(t);
        for (int c = 0; c < n_blocks; ++c) acc += partial(t, c);
        out(t) = acc;
      });
}

/// x's entry k (row-major over all but the stack axis) of stack entry t times y's: Tucker cores (stack, o, j) and TT
/// cores (stack, a, u, b).
template <class CoreView>
KOKKOS_INLINE_FUNCTION typename CoreView::non_const_value_type core_entry_product(CoreView const& x, CoreView const& y,
                                                                                  int t, int k) {
  if constexpr (CoreView::rank == 3) {
    int const n2 = int(x.extent(2));
    return x(t, k / n2, k % n2) * y(t, k / n2, k % n2);
  } else {
    int const n2 = int(x.extent(2)), n3 = int(x.extent(3));
    int const a = k / (n2 * n3), u = (k / n3) % n2, b = k % n3;
    return x(t, a, u, b) * y(t, a, u, b);
  }
}

/// out(t - t_begin) += the sum of x(t, ...) y(t, ...) over all entries of stack entry t, for t in [t_begin, t_end):
/// each block of variation_dot_block entries summed sequentially, then the blocks in order (add_block_sums).
template <class ExecutionSpace, class Scalar, class MemorySpace, class CoreView>
void accumulate_core_dots(ExecutionSpace const& space, char const* label, CoreView const& x, CoreView const& y,
                          int t_begin, int t_end, Kokkos::View<Scalar*, MemorySpace> const& out) {
  int size = 1;
  for (unsigned r = 1; r < CoreView::rank; ++r) size *= int(x.extent(r));
  if (size == 0 || t_end <= t_begin) return;
  int const block = variation_dot_block;
  int const n_blocks = (size + block - 1) / block;
  auto partial = allocate_uninitialized<Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace>>(
      space, "t3k::variation_dot::block_sums", t_end - t_begin, n_blocks);
  for_each_index(
      space, label, {t_end - t_begin, n_blocks}, std::size_t(min_of(size, block)), KOKKOS_LAMBDA(int s, int c) {
        int const t = t_begin + s;
        int const k_end = min_of(size, (c + 1) * block);
        Scalar acc = 0;
        for (int k = c * block; k < k_end; ++k) acc += core_entry_product(x, y, t, k);
        partial(s, c) = acc;
      });
  add_block_sums(space, partial, out);
}

/// Corewise inner products of stack entries [t_begin, t_end) into a new device View (t_end - t_begin).
/// Internal: shapes are checked by the callers. **Blocking:** no.
template <class ExecutionSpace, class Scalar, class MemorySpace>
Kokkos::View<Scalar*, MemorySpace> variation_dots_device(ExecutionSpace const& space,
                                                         T3Variation<Scalar, MemorySpace> const& x,
                                                         T3Variation<Scalar, MemorySpace> const& y, std::size_t t_begin,
                                                         std::size_t t_end) {
  auto out = allocate_uninitialized<Kokkos::View<Scalar*, MemorySpace>>(space, "t3k::variation_dot::partial_sums",
                                                                        t_end - t_begin);
  fill_contiguous(space, out, Scalar(0));
  for (std::size_t i = 0; i < x.n_modes(); ++i) {
    accumulate_core_dots<ExecutionSpace, Scalar, MemorySpace>(space, "t3k::variation_dot::tucker", x.tucker[i],
                                                              y.tucker[i], int(t_begin), int(t_end), out);
    accumulate_core_dots<ExecutionSpace, Scalar, MemorySpace>(space, "t3k::variation_dot::tt", x.tt[i], y.tt[i],
                                                              int(t_begin), int(t_end), out);
  }
  return out;
}

}  // namespace impl

/// A stack of `n_stack` variations at `frame` with i.i.d. standard normal entries (all entries of V and H; apply
/// gauge_project for a random gauged tangent, docs/math.md).
///
/// The numbers are drawn on the host in a fixed order (stack entry t outermost, then for each mode i all of V_i
/// row-major, then all of H_i) and copied into `MemorySpace`, so a seed gives the same variation on every backend,
/// and the first entries of a longer stack equal a shorter stack drawn with the same seed.
/// \param space execution space the copies are enqueued on
/// \param frame the frame fixing the shapes (nO_i, N_i) and (rL_i, nU_i, rR_{i+1})
/// \param n_stack stack length (>= 1)
/// \param seed generator seed
/// \return the new variation stack
/// **Blocking:** yes (fences `space`). **Throws:** InvalidArgument when n_stack is 0.
template <class ExecutionSpace, class Scalar, class MemorySpace>
T3Variation<Scalar, MemorySpace> random_variation(ExecutionSpace const& space,
                                                  OrthogonalFrame<Scalar, MemorySpace> const& frame,
                                                  std::size_t n_stack, std::uint64_t seed) {
  static_assert(impl::VariationSpaceCheck<ExecutionSpace, MemorySpace>::value, "");
  if (n_stack == 0) throw InvalidArgument("t3k::random_variation: n_stack is 0; a stack needs at least one entry");
  auto v = zero_variation(space, frame, n_stack);
  std::size_t const d = v.n_modes();
  using HostTucker = typename T3Variation<Scalar, MemorySpace>::tucker_type::HostMirror;
  using HostTT = typename T3Variation<Scalar, MemorySpace>::tt_type::HostMirror;
  std::vector<HostTucker> hv;
  std::vector<HostTT> hh;
  for (std::size_t i = 0; i < d; ++i) {
    hv.push_back(Kokkos::create_mirror_view(Kokkos::HostSpace{}, v.tucker[i]));
    hh.push_back(Kokkos::create_mirror_view(Kokkos::HostSpace{}, v.tt[i]));
  }
  impl::HostNormalGenerator gen(seed);
  for (std::size_t t = 0; t < n_stack; ++t) {
    for (std::size_t i = 0; i < d; ++i) {
      auto const& vi = hv[i];
      auto const& hi = hh[i];
      for (std::size_t o = 0; o < vi.extent(1); ++o)
        for (std::size_t j = 0; j < vi.extent(2); ++j) vi(t, o, j) = Scalar(gen.normal());
      for (std::size_t a = 0; a < hi.extent(1); ++a)
        for (std::size_t u = 0; u < hi.extent(2); ++u)
          for (std::size_t b = 0; b < hi.extent(3); ++b) hi(t, a, u, b) = Scalar(gen.normal());
    }
  }
  for (std::size_t i = 0; i < d; ++i) {
    Kokkos::deep_copy(space, v.tucker[i], hv[i]);
    Kokkos::deep_copy(space, v.tt[i], hh[i]);
  }
  space.fence();
  return v;
}

/// A deep copy of the variation stack `x` (new allocations in the same memory space).
/// \return the copy. **Blocking:** no. **Throws:** DimensionMismatch when x's cores disagree on the stack length.
template <class ExecutionSpace, class Scalar, class MemorySpace>
T3Variation<Scalar, MemorySpace> copy_variation(ExecutionSpace const& space,
                                                T3Variation<Scalar, MemorySpace> const& x) {
  static_assert(impl::VariationSpaceCheck<ExecutionSpace, MemorySpace>::value, "");
  impl::check_variation_stack("t3k::copy_variation", x);
  T3Variation<Scalar, MemorySpace> y;
  for (std::size_t i = 0; i < x.n_modes(); ++i) {
    auto const& v = x.tucker[i];
    auto const& h = x.tt[i];
    y.tucker.emplace_back(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::variation::tucker_" + std::to_string(i)),
        v.extent(0), v.extent(1), v.extent(2));
    y.tt.emplace_back(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "t3k::variation::tt_" + std::to_string(i)),
                      h.extent(0), h.extent(1), h.extent(2), h.extent(3));
    Kokkos::deep_copy(space, y.tucker[i], v);
    Kokkos::deep_copy(space, y.tt[i], h);
  }
  return y;
}

/// Copies the entries of `x` into the existing stack `y` of the same shapes (y <- x).
/// **Blocking:** no. **Throws:** DimensionMismatch naming the core and both shapes when the shapes differ.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void copy_variation(ExecutionSpace const& space, T3Variation<Scalar, MemorySpace> const& x,
                    T3Variation<Scalar, MemorySpace> const& y) {
  static_assert(impl::VariationSpaceCheck<ExecutionSpace, MemorySpace>::value, "");
  impl::check_same_variation_shape("t3k::copy_variation", x, y);
  for (std::size_t i = 0; i < x.n_modes(); ++i) {
    Kokkos::deep_copy(space, y.tucker[i], x.tucker[i]);
    Kokkos::deep_copy(space, y.tt[i], x.tt[i]);
  }
}

/// y <- y + alpha x on every entry of every stack entry (y is modified in place through its Views).
/// \param space execution space the kernel runs on
/// \param alpha scalar factor
/// \param x variation stack read
/// \param y variation stack updated; same shapes as x
/// **Blocking:** no. **Throws:** DimensionMismatch naming the core and both shapes when the shapes differ.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void axpy_variation(ExecutionSpace const& space, Scalar alpha, T3Variation<Scalar, MemorySpace> const& x,
                    T3Variation<Scalar, MemorySpace> const& y) {
  static_assert(impl::VariationSpaceCheck<ExecutionSpace, MemorySpace>::value, "");
  impl::check_same_variation_shape("t3k::axpy_variation", x, y);
  for (std::size_t i = 0; i < x.n_modes(); ++i) {
    impl::axpy_variation_core<ExecutionSpace, Scalar, MemorySpace>(space, "t3k::axpy_variation::tucker", alpha,
                                                                   x.tucker[i], y.tucker[i]);
    impl::axpy_variation_core<ExecutionSpace, Scalar, MemorySpace>(space, "t3k::axpy_variation::tt", alpha, x.tt[i],
                                                                   y.tt[i]);
  }
}

/// x <- alpha x on every entry of every stack entry (in place through x's Views).
/// **Blocking:** no. **Throws:** DimensionMismatch when x's cores disagree on the stack length.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void scale_variation(ExecutionSpace const& space, Scalar alpha, T3Variation<Scalar, MemorySpace> const& x) {
  static_assert(impl::VariationSpaceCheck<ExecutionSpace, MemorySpace>::value, "");
  impl::check_variation_stack("t3k::scale_variation", x);
  for (std::size_t i = 0; i < x.n_modes(); ++i) {
    impl::scale_variation_core<ExecutionSpace, Scalar, MemorySpace>(space, "t3k::scale_variation::tucker", alpha,
                                                                    x.tucker[i]);
    impl::scale_variation_core<ExecutionSpace, Scalar, MemorySpace>(space, "t3k::scale_variation::tt", alpha, x.tt[i]);
  }
}

/// Corewise Euclidean inner product of stack entry t of x and y: sum_i <V_i, V'_i> + <H_i, H'_i> over all entries
/// (docs/math.md). For gauged variations it equals <T(x_t), T(y_t)>_F.
/// \param space execution space the reduction runs on
/// \param x, y variation stacks of the same shapes
/// \param t stack index (default 0)
/// \return the inner product
/// **Blocking:** yes (fences `space`). **Throws:** DimensionMismatch when the shapes differ, InvalidArgument when
/// t is out of range.
template <class ExecutionSpace, class Scalar, class MemorySpace>
Scalar variation_dot(ExecutionSpace const& space, T3Variation<Scalar, MemorySpace> const& x,
                     T3Variation<Scalar, MemorySpace> const& y, std::size_t t = 0) {
  static_assert(impl::VariationSpaceCheck<ExecutionSpace, MemorySpace>::value, "");
  impl::check_same_variation_shape("t3k::variation_dot", x, y);
  impl::check_variation_stack("t3k::variation_dot", x);
  impl::check_stack_index("t3k::variation_dot", x, t);
  auto sums = impl::variation_dots_device(space, x, y, t, t + 1);
  auto host = Kokkos::create_mirror_view(Kokkos::HostSpace{}, sums);
  Kokkos::deep_copy(space, host, sums);
  space.fence();
  return host(0);
}

/// Corewise inner products of every stack entry: element t is variation_dot(space, x, y, t).
/// \return n_stack values. **Blocking:** yes (fences `space`). **Throws:** DimensionMismatch when the shapes differ.
template <class ExecutionSpace, class Scalar, class MemorySpace>
std::vector<Scalar> variation_dots(ExecutionSpace const& space, T3Variation<Scalar, MemorySpace> const& x,
                                   T3Variation<Scalar, MemorySpace> const& y) {
  static_assert(impl::VariationSpaceCheck<ExecutionSpace, MemorySpace>::value, "");
  impl::check_same_variation_shape("t3k::variation_dots", x, y);
  std::size_t const n = impl::check_variation_stack("t3k::variation_dots", x);
  auto sums = impl::variation_dots_device(space, x, y, 0, n);
  auto host = Kokkos::create_mirror_view(Kokkos::HostSpace{}, sums);
  Kokkos::deep_copy(space, host, sums);
  space.fence();
  return std::vector<Scalar>(host.data(), host.data() + n);
}

/// Corewise Euclidean norm sqrt(variation_dot(x, x, t)) of stack entry t.
/// **Blocking:** yes. **Throws:** InvalidArgument when t is out of range.
template <class ExecutionSpace, class Scalar, class MemorySpace>
Scalar variation_norm(ExecutionSpace const& space, T3Variation<Scalar, MemorySpace> const& x, std::size_t t = 0) {
  Scalar const sq = variation_dot(space, x, x, t);
  return sq > Scalar(0) ? Scalar(std::sqrt(sq)) : Scalar(0);
}

}  // namespace t3k
