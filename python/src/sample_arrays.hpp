#pragma once
/// \file sample_arrays.hpp
/// The argument checks of arrays.hpp for the samples of the scalar measurement kinds (docs/math.md, measurements):
/// the kind itself ("probes", "applies", "entries"), the multi-indices of entries (integers of any dtype, checked
/// against the mode sizes and held as int32), and scalar values, (W) or (W, K+1).

#include "arrays.hpp"

#include "t3k/core/measurement_kind.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace t3k_python {

/// "probes", "applies" or "entries". **Throws:** ValueError naming `kind`.
inline t3k::MeasurementKind kind_arg(nb::handle h, std::string const& where) {
  std::string const wanted = where + ": kind must be 'probes', 'applies' or 'entries', got ";
  if (!nb::isinstance<nb::str>(h)) fail(wanted + describe(h));
  std::string const text = nb::cast<std::string>(h);
  if (text != "probes" && text != "applies" && text != "entries") fail(wanted + "'" + text + "'");
  return t3k::parse_measurement_kind(text);
}

/// Multi-indices of entries, `name` (W, d) of any integer dtype with 0 <= indices[s, i] < N_i = shape[i], as a
/// C-contiguous int32 array in the module's memory (used in place when it is one). The range is checked here, on
/// the host, before anything is converted, so that the message names the index and the mode size; a device array
/// (already int32) is range-checked by the library. `own`: always a copy (an object that holds the indices).
/// **Throws:** ValueError naming `name`; MemoryError for a copy larger than the memory available.
inline Array as_index_array(nb::handle obj, std::vector<std::size_t> const& shape, std::string const& where,
                            std::string const& name = "indices", bool own = false) {
  std::size_t const d = shape.size();
  std::string const expected = "(W x d) with d = " + std::to_string(d) + " (one index per mode)";
  std::string const wanted = where + ": " + name + " must be a 2-d array of integers " + expected + ", got ";
  Array a;
  bool const is_array = nb::try_cast(obj, a, false);
  if (is_array && a.device_type() != nb::device::cpu::value) {
    if (a.device_type() != array_device_type || a.dtype() != dlpack_dtype(Dtype::int32) || a.ndim() != 2) {
      fail(wanted + "an array on " + device_name(a.device_type()) +
           " that is not a 2-d int32 array of this device (t3k copies device arrays only on the device)");
    }
  } else {
    nb::object host;
    try {
      host = numpy().attr("asarray")(obj);
    } catch (nb::python_error const&) {
      fail(wanted + describe(obj));
    }
    check_conversion(obj, host, Dtype::int32, where, name, wanted);  // integers only, memory of the copy
    auto const extents = nb::cast<std::vector<std::size_t>>(host.attr("shape"));
    if (extents.size() != 2 || extents[1] != d) {
      fail(where + ": " + name + " has shape " + text_of(nb::repr(host.attr("shape"))) + ", expected " + expected);
    }
    // The first index out of range in row-major order: below 0, at or past its mode size, or past int32.
    std::vector<long long> bound(d);
    for (std::size_t i = 0; i < d; ++i) {
      bound[i] = (long long)(shape[i] < std::size_t(std::numeric_limits<int>::max()) ? shape[i]
                                                                                     : std::numeric_limits<int>::max());
    }
    nb::object const np = numpy();
    nb::object const limit = np.attr("asarray")(nb::cast(bound), "dtype"_a = "int64");
    nb::object const bad = np.attr("logical_or")(host.attr("__lt__")(0), host.attr("__ge__")(limit));
    nb::object const where_bad = np.attr("flatnonzero")(bad);
    if (nb::cast<std::size_t>(where_bad.attr("size")) > 0) {
      std::size_t const e = nb::cast<std::size_t>(where_bad.attr("__getitem__")(0)), s = e / d, i = e % d;
      std::string const value = text_of(nb::str(host.attr("__getitem__")(nb::make_tuple(s, i))));
      std::string const label = name + "[" + std::to_string(s) + ", " + std::to_string(i) + "]";
      if (shape[i] > std::size_t(bound[i])) {
        fail(where + ": " + label + " = " + value + " is past the largest index t3k takes (2^31 - 1)");
      }
      fail(where + ": " + label + " = " + value + " is out of range for mode " + std::to_string(i) + " of size " +
           std::to_string(shape[i]) + " (indices are 0-based: 0 <= " + label + " < " + std::to_string(shape[i]) + ")");
    }
    // own: a copy even of an int32 array, so that indices checked here stay the indices held.
    nb::object const converted = own ? np.attr("array")(host, "dtype"_a = "int32", "order"_a = "C", "copy"_a = true)
                                     : np.attr("ascontiguousarray")(host, "dtype"_a = "int32");
    a = nb::cast<Array>(converted, false);
    if constexpr (device_build) a = upload(a, Dtype::int32);
  }
  if (a.shape(1) != d) fail(where + ": " + name + " has shape " + shape_string(a) + ", expected " + expected);
  return a;
}

/// Refuses arrays `name`[i] that do not have one row per sample: W = `w`, the rows of `samples` (indices, ww[0]),
/// naming both (the library would name only the later one). **Throws:** ValueError.
inline void require_rows(std::vector<Array> const& arrays, std::string const& name, std::size_t w,
                         std::string const& samples, std::string const& where) {
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    if (arrays[i].ndim() >= 1 && arrays[i].shape(0) != w) {
      fail(where + ": " + name + "[" + std::to_string(i) + "] has shape " + shape_string(arrays[i]) + " but " +
           samples + " has W = " + std::to_string(w) + " rows; both hold one row per sample (arguments " + samples +
           " and " + name + ")");
    }
  }
}

/// An unmanaged View of an index array of as_index_array.
template <class IndexView>
IndexView index_view(Array const& a) {
  return IndexView(const_cast<int*>(static_cast<int const*>(a.data())), a.shape(0), a.shape(1));
}

/// Scalar measurement values `name`: (W) for order 0 or (W, K+1), as in as_array. **Throws:** ValueError.
inline Array as_values_array(nb::handle obj, Dtype dt, std::string const& where, std::string const& name,
                             std::string const& expected = "(W) or (W x (K+1))") {
  Array a = as_array(obj, dt, 0, where, name, expected);
  if (a.ndim() != 1 && a.ndim() != 2) {
    fail(where + ": " + name + " must be a 1-d or 2-d array of real numbers " + expected + ", got an array of shape " +
         shape_string(a));
  }
  if (a.ndim() == 2 && a.shape(1) == 0) fail(where + ": " + name + " has shape " + shape_string(a) + ", K + 1 >= 1");
  return a;
}

}  // namespace t3k_python
