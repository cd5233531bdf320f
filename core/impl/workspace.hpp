#pragma once
/// \file workspace.hpp
/// One flat allocation per call, carved into the jet arrays a sweep needs. The same layout code runs twice: once
/// on a counting arena (no memory) to size the buffer, once on the real buffer. The memory model of section 14
/// of docs/math.md is read off the counting pass, so it cannot drift from what is allocated. Not API.

#include "t3k/core/error.hpp"
#include "t3k/core/impl/jet_views.hpp"
#include "t3k/core/impl/kokkos_compat.hpp"

#include <array>
#include <cstddef>
#include <initializer_list>
#include <string>

namespace t3k {
namespace impl {

/// What a piece of workspace is for; the memory model reports bytes per category.
enum class WorkspaceCategory : int {
  sweep = 0,     ///< edge-variable jets and sweep transients of the current chunk (per row)
  assembly = 1,  ///< Khatri-Rao jets of the gradient assembly (per row)
  fixed = 2,     ///< per-call buffers that do not grow with the chunk
  partials = 3   ///< block partials of summed products on device backends (per reduction block of the chunk)
};

template <class Scalar, class MemorySpace>
class WorkspaceArena {
 public:
  /// A counting arena: hands out Views without data and only adds up sizes.
  WorkspaceArena() = default;

  /// A real arena over `buffer`, which must hold at least what the counting pass asked for.
  explicit WorkspaceArena(Kokkos::View<Scalar*, MemorySpace> buffer) : buffer_(buffer), counting_(false) {}

  Jet3<Scalar, MemorySpace> take3(WorkspaceCategory category, std::size_t rows, std::size_t l, std::size_t n) {
    std::size_t const elements = checked_elements({rows, l, n});
    return Jet3<Scalar, MemorySpace>(reserve(category, elements), rows, l, n);
  }
  Jet4<Scalar, MemorySpace> take4(WorkspaceCategory category, std::size_t rows, std::size_t l, std::size_t p,
                                  std::size_t q) {
    std::size_t const elements = checked_elements({rows, l, p, q});
    return Jet4<Scalar, MemorySpace>(reserve(category, elements), rows, l, p, q);
  }
  using Flat = Kokkos::View<Scalar*, Kokkos::LayoutRight, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Flat take1(WorkspaceCategory category, std::size_t n) { return Flat(reserve(category, checked_elements({n})), n); }

  /// Elements handed out so far, in total and per category.
  std::size_t size() const { return offset_; }
  std::size_t size(WorkspaceCategory category) const { return by_category_[int(category)]; }
  bool counting() const { return counting_; }

 private:
  /// The product of `extents` (a row count of 0 counted as 1, so that the counting pass at 0 rows checks the other
  /// extents too). **Throws:** InvalidArgument when the bytes of that many elements, or of the arena so far, pass
  /// 2^64 - 1: an extent of shapes that large would wrap the count, or reach Kokkos' invalid-extent sentinel.
  std::size_t checked_elements(std::initializer_list<std::size_t> extents) const {
    std::size_t const limit = ~std::size_t(0) / sizeof(Scalar) - 1;
    std::size_t product = 1, at_least_one = 1;
    bool first = true;
    for (std::size_t e : extents) {
      std::size_t const counted = first && e == 0 ? 1 : e;
      first = false;
      if (__builtin_mul_overflow(at_least_one, counted, &at_least_one) || at_least_one > limit ||
          offset_ > limit - at_least_one) {
        throw InvalidArgument("t3k: the workspace of these shapes passes 2^64 bytes");
      }
      product *= e;
    }
    return product;
  }

  Scalar* reserve(WorkspaceCategory category, std::size_t n) {
    Scalar* p = counting_ ? nullptr : buffer_.data() + offset_;
    T3K_DEBUG_ASSERT(counting_ || offset_ + n <= buffer_.extent(0));
    offset_ += n;
    by_category_[int(category)] += n;
    return p;
  }

  Kokkos::View<Scalar*, MemorySpace> buffer_;
  bool counting_ = true;
  std::size_t offset_ = 0;
  std::array<std::size_t, 4> by_category_{{0, 0, 0, 0}};
};

/// Runs `layout(arena)` on a counting arena, allocates exactly that many elements in `space`, and runs it again on
/// the real buffer. Returns what the second run returned, with the owning buffer.
template <class Scalar, class MemorySpace, class ExecutionSpace, class Layout>
auto build_workspace(ExecutionSpace const& space, std::string const& label, Layout&& layout) {
  WorkspaceArena<Scalar, MemorySpace> counter;
  (void)layout(counter);
  Kokkos::View<Scalar*, MemorySpace> buffer(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label),
                                            counter.size());
  WorkspaceArena<Scalar, MemorySpace> arena(buffer);
  auto views = layout(arena);
  return std::make_pair(std::move(views), buffer);
}

}  // namespace impl
}  // namespace t3k
