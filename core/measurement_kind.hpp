#pragma once
/// \file measurement_kind.hpp
/// The three ways a tensor is measured (docs/math.md, measurements): entries, applies and probes, each with jets
/// along directions. A fitting problem carries its kind as data; the shared fitting machinery dispatches on it once.

#include "t3k/core/error.hpp"

#include <cstddef>
#include <string>

namespace t3k {

/// What one sample of a measurement set is and what it measures.
enum class MeasurementKind {
  probes,   ///< vectors w_0..w_{d-1}: the d probes z_i (every mode but i contracted), one vector per mode
  applies,  ///< vectors w_0..w_{d-1}: the scalar X(w_0, .., w_{d-1}) (every mode contracted)
  entries   ///< a multi-index (i_0, .., i_{d-1}): the scalar X[i_0, .., i_{d-1}] (one-hot vectors, never formed)
};

/// "probes", "applies" or "entries".
inline char const* to_string(MeasurementKind kind) {
  return kind == MeasurementKind::probes ? "probes" : kind == MeasurementKind::applies ? "applies" : "entries";
}

/// Parses "probes", "applies" or "entries". **Throws:** InvalidArgument naming the text.
inline MeasurementKind parse_measurement_kind(std::string const& text) {
  if (text == "probes") return MeasurementKind::probes;
  if (text == "applies") return MeasurementKind::applies;
  if (text == "entries") return MeasurementKind::entries;
  throw InvalidArgument("measurement kind '" + text + "' is not 'entries', 'applies' or 'probes'");
}

/// Whether each sample of `kind` measures one scalar jet (entries, applies) rather than d vector jets (probes).
inline bool measures_scalars(MeasurementKind kind) { return kind != MeasurementKind::probes; }

namespace impl {
/// Stored coefficients of a scalar measurement's jet: the measurement of X at w + t p is a polynomial of degree d in
/// t, so orders up to min(K, d) can be nonzero (probes leave one mode free: degree d - 1, general_jet_length).
inline int scalar_jet_length(std::size_t order, std::size_t d) { return int((order < d ? order : d) + 1); }
}  // namespace impl

}  // namespace t3k
