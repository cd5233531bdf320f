#pragma once
/// \file hdf5_handle.hpp
/// Private to the HDF5 layer (hdf5_reader.cpp, hdf5_read_objects.cpp, hdf5_writer.cpp; not installed): owned HDF5
/// identifiers and the shape helpers that reader and writer share. Only io/impl/ headers include hdf5.h.

#include "t3k/io/hdf5_io.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace t3k {
namespace io {

/// HDF5 prints its error stack to stderr by default; T3K turns every failure into an exception instead.
inline void silence_hdf5() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

/// Owns one HDF5 identifier and closes it with the matching H5*close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer close) : id_(id), close_(close) {}
  ~Handle() { reset(); }
  Handle(Handle&& other) noexcept : id_(other.id_), close_(other.close_) { other.id_ = -1; }
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, -1);
      close_ = other.close_;
    }
    return *this;
  }
  Handle(Handle const&) = delete;
  Handle& operator=(Handle const&) = delete;

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  /// Closes now; returns false when HDF5 reports a failure (a write that could not be flushed).
  bool reset() {
    bool ok = true;
    if (id_ >= 0 && close_ != nullptr) ok = close_(id_) >= 0;
    id_ = -1;
    return ok;
  }

 private:
  hid_t id_ = -1;
  Closer close_ = nullptr;
};

/// "group/index", the name of member `index` of a numbered group.
inline std::string join_path(std::string const& group, std::size_t index) {
  return group + "/" + std::to_string(index);
}

/// "[6 x 5]": `expected` with each placeholder (any_extent) shown as an extent of `actual`, so the message reads as a
/// concrete shape. A placeholder takes the extent on its own axis, unless `actual` holds every fixed extent of
/// `expected` on other axes (a dataset stored transposed, [N_i x W] for [W x N_i]): then the placeholders take the
/// extents left over, in order, and the message gives the shape the data should have had, [W x N_i], not [W x W].
inline std::string expected_string(std::vector<std::size_t> const& expected, std::vector<std::size_t> const& actual) {
  std::vector<std::size_t> same_axis = expected, left_over = actual;
  bool all_fixed_found = expected.size() == actual.size();
  for (std::size_t k = 0; k < expected.size(); ++k) {
    if (expected[k] == any_extent) {
      same_axis[k] = k < actual.size() ? actual[k] : any_extent;
      continue;
    }
    auto const found = std::find(left_over.begin(), left_over.end(), expected[k]);
    if (found == left_over.end()) {
      all_fixed_found = false;
    } else {
      left_over.erase(found);
    }
  }
  std::vector<std::size_t> shown = same_axis;
  auto sorted = [](std::vector<std::size_t> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  if (all_fixed_found && sorted(same_axis) != sorted(actual)) {
    std::size_t next = 0;
    for (std::size_t k = 0; k < expected.size(); ++k)
      shown[k] = expected[k] != any_extent ? expected[k] : left_over[next++];
  }
  std::string out = "[";
  for (std::size_t k = 0; k < shown.size(); ++k) {
    if (k) out += " x ";
    out += shown[k] == any_extent ? std::string("*") : std::to_string(shown[k]);
  }
  return out + "]";
}

/// Whether `actual` has the extents of `expected` (any_extent matches any extent).
inline bool shape_matches(std::vector<std::size_t> const& actual, std::vector<std::size_t> const& expected) {
  if (actual.size() != expected.size()) return false;
  for (std::size_t k = 0; k < actual.size(); ++k) {
    if (expected[k] != any_extent && expected[k] != actual[k]) return false;
  }
  return true;
}

/// A View of `shape` holding `data` (row-major).
template <class ViewType>
ViewType view_from(std::string const& label, std::vector<std::size_t> const& shape, std::vector<double> const& data) {
  Kokkos::LayoutRight layout;
  for (std::size_t k = 0; k < shape.size(); ++k) layout.dimension[k] = shape[k];
  ViewType v(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), layout);
  if (!data.empty()) std::memcpy(v.data(), data.data(), data.size() * sizeof(double));
  return v;
}

}  // namespace io
}  // namespace t3k
