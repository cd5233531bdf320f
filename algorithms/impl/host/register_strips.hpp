#pragma once
/// \file register_strips.hpp
/// Strips of compile-time width for the host row kernels. Not API.
///
/// The host row kernels (jet_kernels.hpp, transpose_assembly.hpp) sum a strip of contiguous outputs in a small local
/// array that the compiler is meant to keep in vector registers. That only happens when the strip's width is a
/// compile-time constant: with a run-time width GCC 12 kept the array on the stack and copied it out with a call to
/// memcpy. Where every row is narrower than the widest strip (TT ranks 8 make rows of 8 in J^T's Khatri-Rao jets),
/// that call took about as long as the arithmetic (docs/performance.md). for_each_strip splits a row into
/// strips whose widths are all constants.
///
/// The width never changes which operations make an entry: each entry is the same sum in the same order, whatever
/// strip holds it, and a row's strips depend only on its length, never on the chunk. Whether the compiler fuses a
/// multiply and its add into one FMA can differ between the code of two widths, so a change of how a row is split
/// may change low bits (with -ffp-contract=off the split does not change any).

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace t3k {
namespace impl {

/// The width of a strip, as a type: body(StripWidth<W>{}, j0) sees W as a constant (decltype(width)::value).
template <int Width>
using StripWidth = std::integral_constant<int, Width>;

/// The strips of a remainder shorter than 2 * Width: at most one strip of each power-of-two width Width, Width / 2,
/// ..., 1, widest first.
template <int Width, class Body>
KOKKOS_INLINE_FUNCTION void for_each_remainder_strip(int& j0, int n, Body const& body) {
  if constexpr (Width >= 1) {
    if (j0 + Width <= n) {
      body(StripWidth<Width>{}, j0);
      j0 += Width;
    }
    for_each_remainder_strip<Width / 2>(j0, n, body);
  }
}

/// Calls body(StripWidth<W>{}, j0) for strips [j0, j0 + W) that partition [0, n) in order: strips of width Strip
/// while they fit, then at most one strip of each narrower power of two, so that every W is a compile-time constant.
/// Strip must be a power of two.
template <int Strip, class Body>
KOKKOS_INLINE_FUNCTION void for_each_strip(int n, Body const& body) {
  static_assert(Strip > 0 && (Strip & (Strip - 1)) == 0, "t3k::impl::for_each_strip: Strip must be a power of two");
  int j0 = 0;
  for (; j0 + Strip <= n; j0 += Strip) body(StripWidth<Strip>{}, j0);
  for_each_remainder_strip<Strip / 2>(j0, n, body);
}

}  // namespace impl
}  // namespace t3k
