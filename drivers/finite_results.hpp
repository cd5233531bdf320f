#pragma once
/// \file finite_results.hpp
/// The last check of jets, frame, jv and jtr before they write: finite inputs can still give results past float64's
/// range (entries near 1e300 multiplied together), and a file of Inf or NaN written with exit 0 is a silent wrong
/// answer. A command refuses instead, naming the first dataset at fault, and writes nothing.

#include "drivers/errors.hpp"

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace t3k {
namespace cli {

/// Throws NonFiniteResult naming `dataset` (the name the result would be written under) when the host View `v`
/// holds a NaN or an infinity. **Blocking:** yes (reads host memory).
template <class View>
void require_finite_result(std::string const& dataset, View const& v) {
  static_assert(Kokkos::is_view<View>::value, "t3k::cli::require_finite_result: needs a Kokkos View");
  static_assert(Kokkos::SpaceAccessibility<Kokkos::DefaultHostExecutionSpace, typename View::memory_space>::accessible,
                "t3k::cli::require_finite_result: the View must be host-accessible");
  if (!v.span_is_contiguous()) throw std::logic_error("t3k::cli::require_finite_result: needs a contiguous View");
  for (std::size_t e = 0; e < v.span(); ++e) {
    double const x = double(v.data()[e]);
    if (std::isfinite(x)) continue;
    throw NonFiniteResult("the result " + dataset + " holds " + (std::isnan(x) ? "NaN" : "an infinity") +
                          ": finite inputs overflowed float64 (scale them down); nothing was written");
  }
}

/// require_finite_result of `group`/<i> for every View of `views`.
template <class View>
void require_finite_results(std::string const& group, std::vector<View> const& views) {
  for (std::size_t i = 0; i < views.size(); ++i) require_finite_result(group + "/" + std::to_string(i), views[i]);
}

}  // namespace cli
}  // namespace t3k
