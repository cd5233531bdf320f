#pragma once
/// \file sharing_arg.hpp
/// The `sharing` argument of fit and manifold_dimension: one integer label per mode, modes with equal labels using
/// one Tucker factor (t3k::ModeSharing; docs/math.md, "Shared Tucker factors"), checked with messages naming it.

#include "arrays.hpp"

#include "t3k/core/mode_sharing.hpp"

#include <string>
#include <vector>

namespace t3k_python {

/// The labels as Python lists print them, for messages: [0, 0, 1].
inline std::string labels_text(std::vector<long long> const& labels) {
  std::string out = "[";
  for (std::size_t i = 0; i < labels.size(); ++i) out += (i ? ", " : "") + std::to_string(labels[i]);
  return out + "]";
}

/// The sharing `h` for T3s of mode sizes `mode_shapes` (those of `whose`, for messages). None gives the empty
/// sharing, which every algorithm takes as no sharing at all (bit for bit).
/// **Throws:** ValueError naming sharing: not a sequence, an entry that is not an integer (bools included), a label
/// count other than d, or modes of one group with different sizes.
inline t3k::ModeSharing sharing_arg(nb::handle h, std::vector<std::size_t> const& mode_shapes, std::string const& where,
                                    std::string const& whose) {
  if (h.is_none()) return {};
  if (!PySequence_Check(h.ptr()) || nb::isinstance<nb::str>(h) || nb::isinstance<nb::bytes>(h)) {
    fail(where + ": sharing must be None or a sequence of integer labels, one per mode, got " + describe(h));
  }
  std::vector<long long> labels;
  for (nb::handle item : h) {
    std::string const wanted =
        where + ": sharing[" + std::to_string(labels.size()) + "] must be an integer label, got ";
    if (nb::isinstance<nb::bool_>(item) || !PyIndex_Check(item.ptr())) fail(wanted + describe(item));
    nb::object index = nb::steal(PyNumber_Index(item.ptr()));
    if (!index.is_valid()) {  // an array of several entries, a NumPy bool
      PyErr_Clear();
      fail(wanted + describe(item));
    }
    int overflow = 0;
    long long const label = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (overflow != 0) fail(wanted + "an integer out of the range of a 64-bit label");
    labels.push_back(label);
  }
  if (labels.size() != mode_shapes.size()) {
    fail(where + ": sharing has " + std::to_string(labels.size()) + " labels for the d = " +
         std::to_string(mode_shapes.size()) + " modes of " + whose + "; give one label per mode");
  }
  try {
    return t3k::ModeSharing(labels, mode_shapes);
  } catch (std::runtime_error const& e) {  // t3k::DimensionMismatch, t3k::InvalidArgument
    // The library names its constructor; here the argument is what the user gave.
    std::string text = e.what();
    std::string const prefix = "t3k::ModeSharing: ";
    if (text.compare(0, prefix.size(), prefix) == 0) text.erase(0, prefix.size());
    fail(where + ": sharing " + labels_text(labels) + " does not fit " + whose + ": " + python_message(text));
  }
}

/// Refuses Tucker ranks (of `whose`) that differ within a group of `sharing`: a shared factor has one rank.
/// \param n n_0..n_{d-1}, d entries (checked before)
/// **Throws:** ValueError naming sharing, both modes and both ranks.
inline void check_sharing_ranks(t3k::ModeSharing const& sharing, std::vector<std::size_t> const& n,
                                std::string const& where, std::string const& whose) {
  for (auto const& group : sharing.groups()) {
    std::size_t const first = group.front();
    for (std::size_t i : group) {
      if (n[i] == n[first]) continue;
      fail(where + ": sharing " + labels_text(sharing.labels()) + " ties modes " + std::to_string(first) + " and " +
           std::to_string(i) + ", but " + whose + " has Tucker ranks " + std::to_string(n[first]) + " and " +
           std::to_string(n[i]) + " there; modes that share a factor have one Tucker rank");
    }
  }
}

}  // namespace t3k_python
