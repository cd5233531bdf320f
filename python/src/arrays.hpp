#pragma once
/// \file arrays.hpp
/// The Python module's arrays: Python arguments (arrays through the buffer protocol or DLPack, integers, dtypes,
/// chunk sizes) checked and converted, with a ValueError naming the argument otherwise; unmanaged Views of held
/// arrays; fresh results. Kernels run through kernel_lock.hpp.
///
/// The module computes in Kokkos' default execution space. In a host build arrays come in through nanobind's
/// ndarray (buffer protocol or DLPack) and are wrapped as unmanaged host Views: a C-contiguous array of the
/// computation's dtype is used in place, anything else is converted once by numpy.ascontiguousarray; results are
/// NumPy arrays. In a device build (CUDA, HIP) arrays on that device come in through DLPack and are used in place,
/// host arrays are converted and copied to the device once, and results are device arrays allocated here that
/// other libraries take through DLPack (jax.numpy.from_dlpack, torch.from_dlpack, cupy.from_dlpack): no device
/// array makes a round trip through the host. Python objects hold arrays, never Kokkos Views, so that no View
/// outlives Kokkos::finalize at interpreter exit. Kernels run with the GIL released, one call at a time (Kokkos'
/// host backends do not take concurrent launches from several host threads).
///
/// Every check a call makes happens here, before anything is computed or allocated, as the t3k tool checks its
/// input: arrays must hold real numbers (floating or integer; strings, booleans, complex, object and structured
/// dtypes are refused, never converted), the bytes of every conversion and result must fit in the memory available
/// (MemoryError naming the argument that sized it) and the data of a fit must be finite (require_finite); paths
/// are checked where files are read and written (bind_files.cpp); measurement kinds and entry indices (integers,
/// range-checked against the mode sizes) in sample_arrays.hpp, which builds on this file.

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "kernel_lock.hpp"

#include "t3k/core/chunk_size.hpp"
#include "t3k/core/impl/small_kernels.hpp"
#include "t3k/io/file_safety.hpp"

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace t3k_python {

namespace nb = nanobind;
using namespace nb::literals;

/// A device build: the module's arrays live in device memory (not host memory, as in a host build).
inline constexpr bool device_build = !std::is_same_v<Memory, Kokkos::HostSpace>;

/// The DLPack device type of the module's arrays.
inline constexpr int array_device_type =
#if defined(KOKKOS_ENABLE_CUDA)
    device_build ? nb::device::cuda::value :
#elif defined(KOKKOS_ENABLE_HIP)
    device_build ? nb::device::rocm::value :
#endif
                 nb::device::cpu::value;

/// The device the module's arrays are on (0 in a host build).
inline int array_device_id() {
  int id = 0;
#if defined(KOKKOS_ENABLE_CUDA)
  if (device_build) cudaGetDevice(&id);
#elif defined(KOKKOS_ENABLE_HIP)
  if (device_build) (void)hipGetDevice(&id);
#endif
  return id;
}

inline char const* device_name(int device_type) {
  switch (device_type) {
    case nb::device::cpu::value:
      return "the host (cpu)";
    case nb::device::cuda::value:
      return "a CUDA device";
    case nb::device::cuda_managed::value:
      return "CUDA managed memory";
    case nb::device::rocm::value:
      return "a ROCm device";
    default:
      return "an unsupported device";
  }
}

/// The dtypes of the module's arrays: float32 and float64 for values, int32 for the multi-indices of entries.
enum class Dtype { float32, float64, int32 };

/// Any C-contiguous array, on any device (dtype, rank and device are checked where it is converted); read-only
/// arrays are accepted.
using Array = nb::ndarray<nb::ro, nb::c_contig>;
/// A writable host one: the NumPy arrays allocated here.
using HostArray = nb::ndarray<nb::c_contig, nb::device::cpu>;

/// The extents of an array, outermost first.
inline std::vector<std::size_t> shape_of(Array const& a) {
  std::vector<std::size_t> shape;
  for (std::size_t k = 0; k < a.ndim(); ++k) shape.push_back(a.shape(k));
  return shape;
}

template <class Scalar>
using Matrix = Kokkos::View<Scalar**, Kokkos::LayoutRight, Memory>;
template <class Scalar>
using Tensor3 = Kokkos::View<Scalar***, Kokkos::LayoutRight, Memory>;
template <class Scalar>
using Tensor4 = Kokkos::View<Scalar****, Kokkos::LayoutRight, Memory>;
template <class Scalar, class DataType>
using InputView = Kokkos::View<DataType, Kokkos::LayoutRight, Memory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class Scalar>
using ProbeView = InputView<Scalar, Scalar const**>;

inline char const* dtype_name(Dtype dt) {
  return dt == Dtype::float32 ? "float32" : dt == Dtype::int32 ? "int32" : "float64";
}
inline nb::dlpack::dtype dlpack_dtype(Dtype dt) {
  return dt == Dtype::float32 ? nb::dtype<float>() : dt == Dtype::int32 ? nb::dtype<int>() : nb::dtype<double>();
}
inline std::size_t dtype_bytes(Dtype dt) { return dt == Dtype::float64 ? sizeof(double) : sizeof(float); }
inline nb::module_ numpy() { return nb::module_::import_("numpy"); }

/// The library's messages name C++ functions (t3k::probe_derivatives); Python users know them as t3k.<name>.
inline std::string python_message(std::string text) {
  for (std::size_t at = text.find("t3k::"); at != std::string::npos; at = text.find("t3k::", at)) {
    text.replace(at, 5, "t3k.");
  }
  return text;
}

inline std::string text_of(nb::handle str) { return nb::str(str).c_str(); }

[[noreturn]] inline void fail(std::string const& message) { throw nb::value_error(message.c_str()); }

inline std::string describe(nb::handle obj) {
  if (nb::hasattr(obj, "shape") && nb::hasattr(obj, "dtype")) {
    return "an array of shape " + text_of(nb::repr(obj.attr("shape"))) + " and dtype " +
           text_of(nb::str(obj.attr("dtype")));
  }
  return "a " + text_of(nb::type_name(obj.type()));
}

inline std::string number_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", v);
  return buffer;
}

inline std::string shape_string(Array const& a) {
  std::string out = "(";
  for (std::size_t k = 0; k < a.ndim(); ++k) out += (k ? ", " : "") + std::to_string(a.shape(k));
  return out + (a.ndim() == 1 ? ",)" : ")");
}

inline Array upload(Array const& host, Dtype dt);  // below

/// Bytes, in checked arithmetic: empty once a count exceeds 2^64 - 1.
using Bytes = std::optional<std::uint64_t>;

inline Bytes sum_bytes(Bytes a, Bytes b) { return a && b ? t3k::io::checked_sum(*a, *b) : std::nullopt; }
inline Bytes times(Bytes a, std::uint64_t factor) { return a ? t3k::io::checked_product(*a, factor) : std::nullopt; }

/// Bytes of an array of these extents and dtype.
inline Bytes array_bytes(std::vector<std::size_t> const& extents, Dtype dt) {
  Bytes out = dtype_bytes(dt);
  for (std::size_t n : extents) out = times(out, n);
  return out;
}

/// Memory the module's arrays can still take: the free device memory in a device build, else what the t3k tool
/// checks against (MemAvailable).
inline std::uint64_t available_bytes() {
  std::size_t free = 0, total = 0;
#if defined(KOKKOS_ENABLE_CUDA)
  if (device_build && cudaMemGetInfo(&free, &total) == cudaSuccess) return free;
#elif defined(KOKKOS_ENABLE_HIP)
  if (device_build && hipMemGetInfo(&free, &total) == hipSuccess) return free;
#endif
  (void)free, (void)total;
  return t3k::io::available_memory_bytes();
}

/// Raises MemoryError when `bytes` exceed the memory available; the message names `where` and `what` (what the
/// bytes are for, with the arguments that sized them). Called before allocating: Linux overcommits, so an
/// allocation too large would otherwise succeed and the kernel's OOM killer end the interpreter later.
inline void require_memory(Bytes bytes, std::string const& where, std::string const& what) {
  std::uint64_t const available = available_bytes();
  if (bytes && *bytes <= available) return;
  std::string const text = where + ": " + what + " needs " + t3k::io::bytes_text(bytes) + " of memory, but only " +
                           t3k::io::bytes_text(available) + " are available";
  PyErr_SetString(PyExc_MemoryError, text.c_str());
  throw nb::python_error();
}

/// Bytes of the cores of T3s of these shapes (or of as many entries as the lists allow, when their lengths do not
/// agree: the library names those).
inline Bytes t3_bytes(std::vector<std::size_t> const& big_n, std::vector<std::size_t> const& n,
                      std::vector<std::size_t> const& r, Dtype dt) {
  Bytes out = 0;
  for (std::size_t i = 0; i < big_n.size() && i < n.size() && i + 1 < r.size(); ++i) {
    out = sum_bytes(out, sum_bytes(array_bytes({n[i], big_n[i]}, dt), array_bytes({r[i], n[i], r[i + 1]}, dt)));
  }
  return out;
}

/// Entries past which a broadcast (zero-stride) input is refused rather than copied out: such a view costs the
/// memory and time of its full size while holding a few numbers, which is almost always a mistake (every probe
/// the same); 2^22 entries are 32 MiB in float64.
inline constexpr std::size_t broadcast_entries_max = std::size_t(1) << 22;

/// Refuses what is not an array of real numbers before NumPy converts it (it would parse strings and drop the
/// fields of structured dtypes), broadcast views too large to copy, and copies larger than the memory available.
/// `host` is numpy.asarray(obj); an int32 copy (indices) takes integers only.
inline void check_conversion(nb::handle obj, nb::handle host, Dtype dt, std::string const& where,
                             std::string const& name, std::string const& wanted) {
  std::string const kind = text_of(host.attr("dtype").attr("kind"));
  if ((kind != "f" || dt == Dtype::int32) && kind != "i" && kind != "u") {
    std::string got = describe(obj);
    if (!nb::hasattr(obj, "dtype")) got += " (read as dtype " + text_of(nb::str(host.attr("dtype"))) + ")";
    fail(wanted + got);
  }
  auto const shape = nb::cast<std::vector<std::size_t>>(host.attr("shape"));
  auto const strides = nb::cast<std::vector<long long>>(host.attr("strides"));
  std::size_t entries = 1;
  bool broadcast = false;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    broadcast = broadcast || (strides[k] == 0 && shape[k] > 1);
    entries = shape[k] != 0 && entries > std::numeric_limits<std::size_t>::max() / shape[k] ? ~std::size_t(0)
                                                                                            : entries * shape[k];
  }
  if (broadcast && entries > broadcast_entries_max) {
    fail(where + ": " + name + " is a broadcast view (a zero stride) of " + std::to_string(entries) +
         " entries; t3k would copy it out in full, and refuses to past " + std::to_string(broadcast_entries_max) +
         " entries: pass the array it stands for");
  }
  require_memory(array_bytes(shape, dt), where, "the " + std::string(dtype_name(dt)) + " copy of " + name);
}

/// `obj` as a C-contiguous `ndim`-d array of dtype `dt` (ndim 0: any rank) in the module's memory: in place when it
/// is one already (no copy); else, when it is a host array, converted by numpy.ascontiguousarray (and, in a device
/// build, copied to the device once). A device array is used in place or refused, never copied through the host.
/// **Throws:** ValueError naming `where`, `name` and `expected`.
inline Array as_array(nb::handle obj, Dtype dt, std::size_t ndim, std::string const& where, std::string const& name,
                      std::string const& expected) {
  Array a;
  bool const is_array = nb::try_cast(obj, a, false);
  bool const fits = is_array && a.dtype() == dlpack_dtype(dt) && (ndim == 0 || a.ndim() == ndim);
  if (fits && a.device_type() == array_device_type) return a;
  std::string const wanted = where + ": " + name + " must be a " + (ndim ? std::to_string(ndim) + "-d " : "") +
                             "array of real numbers " + expected + ", got ";
  if (is_array && a.device_type() != nb::device::cpu::value) {
    if (a.device_type() != array_device_type) {
      fail(where + ": " + name + " is an array on " + device_name(a.device_type()) + ", but this build of t3k " +
           "computes on " + device_name(array_device_type));
    }
    fail(wanted + "a " + std::to_string(a.ndim()) + "-d array of another dtype on " + device_name(a.device_type()) +
         " (convert it there first: t3k copies device arrays only on the device)");
  }
  nb::object host, converted;
  try {
    host = numpy().attr("asarray")(obj);  // no dtype: what it holds is checked before anything is converted
  } catch (nb::python_error const&) {
    fail(wanted + describe(obj));
  }
  check_conversion(obj, host, dt, where, name, wanted);
  try {
    converted = numpy().attr("ascontiguousarray")(host, "dtype"_a = dtype_name(dt));
  } catch (nb::python_error const& e) {
    if (e.matches(PyExc_MemoryError)) throw;
    fail(wanted + describe(obj));
  }
  if (!nb::try_cast(converted, a, false)) fail(wanted + describe(obj));
  if (ndim != 0 && a.ndim() != ndim) fail(wanted + "an array of shape " + shape_string(a));
  if constexpr (device_build) a = upload(a, dt);
  return a;
}

/// Runs the library's check of how several arguments fit together; its message (which names cores by the
/// library's words, "TT core 1") gets the arguments' names appended. **Throws:** ValueError.
template <class F>
void check_together(std::string const& arguments, F&& f) {
  try {
    f();
  } catch (std::runtime_error const& e) {  // t3k::InvalidArgument, t3k::DimensionMismatch
    fail(python_message(e.what()) + " (arguments " + arguments + ")");
  }
}

/// A sequence of arrays, one per mode, as in as_array; item i is named name[i].
inline std::vector<Array> as_array_list(nb::handle seq, Dtype dt, std::size_t ndim, std::string const& where,
                                        std::string const& name, std::string const& expected) {
  if (!PySequence_Check(seq.ptr()) || nb::isinstance<nb::str>(seq) || nb::isinstance<nb::bytes>(seq)) {
    fail(where + ": " + name + " must be a sequence of arrays " + expected + ", one per mode, got " + describe(seq));
  }
  std::vector<Array> out;
  for (nb::handle item : seq) {
    out.push_back(as_array(item, dt, ndim, where, name + "[" + std::to_string(out.size()) + "]", expected));
  }
  return out;
}

/// A non-negative integer argument (Python int or NumPy integer). **Throws:** ValueError naming it.
inline std::size_t size_arg(nb::handle h, std::string const& where, std::string const& name, std::size_t minimum = 0) {
  std::string const wanted = where + ": " + name + " must be an integer >= " + std::to_string(minimum) + ", got ";
  if (nb::isinstance<nb::bool_>(h) || !PyIndex_Check(h.ptr())) fail(wanted + describe(h));
  nb::object index = nb::steal(PyNumber_Index(h.ptr()));
  if (!index.is_valid()) {  // an array of several entries, say
    PyErr_Clear();
    fail(wanted + describe(h));
  }
  int overflow = 0;
  long long const value = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow > 0) fail(wanted + "an integer too large");
  if (overflow < 0 || value < 0 || std::size_t(value) < minimum) fail(wanted + std::to_string(value));
  return std::size_t(value);
}

inline std::vector<std::size_t> size_list_arg(nb::handle seq, std::string const& where, std::string const& name) {
  if (!PySequence_Check(seq.ptr()) || nb::isinstance<nb::str>(seq) || nb::isinstance<nb::bytes>(seq)) {
    fail(where + ": " + name + " must be a sequence of integers, got " + describe(seq));
  }
  std::vector<std::size_t> out;
  for (nb::handle item : seq) out.push_back(size_arg(item, where, name + "[" + std::to_string(out.size()) + "]"));
  return out;
}

/// None (all probes at once), "auto", "none" or a positive integer.
inline t3k::ChunkSize chunk_size_arg(nb::handle h, std::string const& where) {
  if (h.is_none()) return t3k::ChunkSize::none();
  if (nb::isinstance<nb::str>(h)) {
    std::string const text = nb::cast<std::string>(h);
    if (text == "auto") return t3k::ChunkSize::automatic();
    if (text == "none") return t3k::ChunkSize::none();
    fail(where + ": chunk_size must be None, 'auto' or a positive integer, got '" + text + "'");
  }
  return t3k::ChunkSize::of(size_arg(h, where, "chunk_size", 1));
}

inline Dtype dtype_arg(nb::handle h, std::string const& where) {
  std::string name;
  try {
    name = nb::cast<std::string>(numpy().attr("dtype")(h).attr("name"));
  } catch (nb::python_error const&) {
    fail(where + ": dtype must be float32 or float64, got " + text_of(nb::repr(h)));
  }
  if (name == "float32") return Dtype::float32;
  if (name == "float64") return Dtype::float64;
  fail(where + ": dtype must be float32 or float64, got " + name);
}

/// The dtype of a new object: `dtype` when given, else float32 when `first` is a float32 array, else float64.
inline Dtype inferred_dtype(nb::handle dtype, nb::handle sequence, std::string const& where) {
  if (!dtype.is_none()) return dtype_arg(dtype, where);
  if (PySequence_Check(sequence.ptr()) && PySequence_Size(sequence.ptr()) > 0) {
    nb::object first = nb::steal(PySequence_GetItem(sequence.ptr(), 0));
    if (first.is_valid() && nb::hasattr(first, "dtype") && text_of(nb::str(first.attr("dtype"))) == "float32") {
      return Dtype::float32;
    }
  }
  PyErr_Clear();
  return Dtype::float64;
}

inline nb::object numpy_dtype(Dtype dt) { return numpy().attr("dtype")(dtype_name(dt)); }

/// Calls `f(Scalar{})` with the scalar type of `dt`.
template <class F>
decltype(auto) dispatch(Dtype dt, F&& f) {
  if (dt == Dtype::float32) return f(float{});
  return f(double{});
}

/// A fresh array (uninitialized) and its data.
struct Output {
  nb::object array;
  void* data = nullptr;
};

/// A fresh NumPy array.
inline Output new_host_array(std::vector<std::size_t> const& shape, Dtype dt) {
  Output out;
  out.array = numpy().attr("empty")(nb::cast(shape), "dtype"_a = dtype_name(dt));
  out.data = nb::cast<HostArray>(out.array, false).data();
  return out;
}

/// A fresh array in the module's memory: NumPy in a host build; in a device build, device memory from Kokkos
/// handed out as a DLPack-capable array (freed when Python drops it, unless Kokkos is finalized by then).
inline Output new_array(std::vector<std::size_t> const& shape, Dtype dt) {
  if constexpr (!device_build) {
    return new_host_array(shape, dt);
  } else {
    std::size_t bytes = dtype_bytes(dt);
    for (std::size_t n : shape) bytes *= n;
    Output out;
    out.data = Kokkos::kokkos_malloc<Memory>("t3k::python::array", bytes > 0 ? bytes : 1);
    nb::capsule owner(out.data, [](void* p) noexcept {
      if (Kokkos::is_initialized()) Kokkos::kokkos_free<Memory>(p);
    });
    nb::ndarray<> array(out.data, shape.size(), shape.data(), owner, nullptr, dlpack_dtype(dt), array_device_type,
                        array_device_id());
    out.array = nb::cast(array);
    return out;
  }
}

/// Copies `bytes` from `src` (in `SourceMemory`) to `dst` in the module's memory: memcpy in a host build, a
/// blocking Kokkos copy in a device build.
template <class SourceMemory>
void copy_bytes_to_array(void* dst, void const* src, std::size_t bytes) {
  if (bytes == 0) return;
  if constexpr (!device_build && std::is_same_v<SourceMemory, Kokkos::HostSpace>) {
    std::memcpy(dst, src, bytes);
  } else {
    using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
    without_gil_locked([&] {
      Kokkos::deep_copy(Kokkos::View<char*, Memory, Unmanaged>(static_cast<char*>(dst), bytes),
                        Kokkos::View<char const*, SourceMemory, Unmanaged>(static_cast<char const*>(src), bytes));
    });
  }
}

/// A host array's copy in the module's memory (a device build's upload of a host argument).
inline Array upload(Array const& host, Dtype dt) {
  Output out = new_array(shape_of(host), dt);
  copy_bytes_to_array<Kokkos::HostSpace>(out.data, host.data(), host.nbytes());
  return nb::cast<Array>(out.array, false);
}

/// A NumPy copy of an array of the module (a download, in a device build).
inline nb::object host_copy(Array const& a) {
  std::vector<std::size_t> const shape = shape_of(a);
  Dtype const dt = a.dtype() == dlpack_dtype(Dtype::float32) ? Dtype::float32
                   : a.dtype() == dlpack_dtype(Dtype::int32) ? Dtype::int32
                                                             : Dtype::float64;
  Output out = new_host_array(shape, dt);
  if (a.nbytes() == 0) return out.array;
  if constexpr (!device_build) {
    std::memcpy(out.data, a.data(), a.nbytes());
  } else {
    using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
    without_gil_locked([&] {
      Kokkos::deep_copy(Kokkos::View<char*, Kokkos::HostSpace, Unmanaged>(static_cast<char*>(out.data), a.nbytes()),
                        Kokkos::View<char const*, Memory, Unmanaged>(static_cast<char const*>(a.data()), a.nbytes()));
    });
  }
  return out.array;
}

template <class View, std::size_t... I>
View view_over(void* data, std::vector<std::size_t> const& shape, std::index_sequence<I...>) {
  return View(static_cast<typename View::pointer_type>(data), shape[I]...);
}

/// One fresh array per mode i < d of shape `shape_of(i)`, and Views of the library's output type over them
/// (the `_into` forms write into the arrays): returns the arrays as a list, the Views appended to `views`.
template <class Views, class ShapeOf>
nb::list new_arrays_per_mode(std::size_t d, Dtype dt, Views& views, ShapeOf&& shape_of) {
  using View = typename Views::value_type;
  nb::list out;
  for (std::size_t i = 0; i < d; ++i) {
    std::vector<std::size_t> const shape = shape_of(i);
    Output o = new_array(shape, dt);
    out.append(o.array);
    views.push_back(view_over<View>(o.data, shape, std::make_index_sequence<std::size_t(View::rank)>{}));
  }
  return out;
}

/// Copies a contiguous View (host or the module's memory) into a fresh array of its shape, or of `shape` (as many
/// entries). Holds the GIL.
template <class View>
nb::object array_copy(View const& v, Dtype dt, std::vector<std::size_t> shape = {}) {
  if (shape.empty()) {
    for (std::size_t k = 0; k < std::size_t(View::rank); ++k) shape.push_back(v.extent(k));
  }
  Output out = new_array(shape, dt);
  copy_bytes_to_array<typename View::memory_space>(out.data, v.data(), v.span() * sizeof(typename View::value_type));
  return out.array;
}

/// A read-only view of an array held by `owner` (which keeps it alive), of its shape or of `shape` (as many
/// entries): NumPy in a host build, a DLPack-capable array on the device in a device build.
inline nb::object array_view(Array const& a, nb::handle owner, std::vector<std::size_t> shape = {}) {
  if (shape.empty()) shape = shape_of(a);
  if constexpr (!device_build) {
    nb::ndarray<nb::numpy, nb::ro> view(a.data(), shape.size(), shape.data(), owner, nullptr, a.dtype());
    return nb::cast(view, nb::rv_policy::reference);
  } else {
    nb::ndarray<nb::ro> view(a.data(), shape.size(), shape.data(), owner, nullptr, a.dtype(), a.device_type(),
                             a.device_id());
    return nb::cast(view, nb::rv_policy::reference);
  }
}
inline nb::list array_views(std::vector<Array> const& arrays, nb::handle owner) {
  nb::list out;
  for (auto const& a : arrays) out.append(array_view(a, owner));
  return out;
}

// The library never writes into its inputs; the Views of held arrays are non-const only because the T3, frame and
// variation types hold non-const Views.
template <class Scalar>
Scalar* mutable_data(Array const& a) {
  return const_cast<Scalar*>(static_cast<Scalar const*>(a.data()));
}
template <class Scalar>
Matrix<Scalar> matrix_view(Array const& a) {
  return Matrix<Scalar>(mutable_data<Scalar>(a), a.shape(0), a.shape(1));
}
template <class Scalar>
Tensor3<Scalar> tensor3_view(Array const& a) {
  return Tensor3<Scalar>(mutable_data<Scalar>(a), a.shape(0), a.shape(1), a.shape(2));
}
template <class Scalar>
Tensor4<Scalar> tensor4_view(Array const& a) {
  return Tensor4<Scalar>(mutable_data<Scalar>(a), a.shape(0), a.shape(1), a.shape(2), a.shape(3));
}
template <class Scalar>
std::vector<ProbeView<Scalar>> probe_views(std::vector<Array> const& arrays) {
  std::vector<ProbeView<Scalar>> out;
  for (auto const& a : arrays) out.emplace_back(static_cast<Scalar const*>(a.data()), a.shape(0), a.shape(1));
  return out;
}

/// Whether `v` is NaN or infinite, or negative when `nonnegative`. v - v is 0 exactly for finite v (NaN for NaN and
/// +-inf), and callable on every backend.
template <class Scalar>
KOKKOS_INLINE_FUNCTION bool is_bad_entry(Scalar v, bool nonnegative) {
  return !(v - v == Scalar(0)) || (nonnegative && v < Scalar(0));
}

/// The flat index of the first entry of `a` (of dtype Scalar, in the module's memory) that is NaN or infinite, or
/// negative when `nonnegative`; a.size() when there is none.
template <class Scalar>
std::size_t first_bad_entry(Array const& a, bool nonnegative) {
  Scalar const* data = static_cast<Scalar const*>(a.data());
  std::size_t const n = a.size();
  // A fit's arrays are mostly a few dozen entries: a launch would open a parallel region per array, which on a
  // machine whose cores are busy waits for a second core (perf/busy_machine.py's python-fit).
  if constexpr (t3k::impl::may_run_inline<ExecutionSpace>()) {
    if (t3k::impl::runs_inline<ExecutionSpace>(n)) {
      for (std::size_t i = 0; i < n; ++i)
        if (is_bad_entry(data[i], nonnegative)) return i;
      return n;
    }
  }
  std::size_t first = n;
  run_kernels([&] {
    Kokkos::parallel_reduce(
        "t3k::python::first_bad_entry", Kokkos::RangePolicy<ExecutionSpace>(ExecutionSpace(), 0, n),
        KOKKOS_LAMBDA(std::size_t i, std::size_t & found) {
          if (is_bad_entry(data[i], nonnegative) && i < found) found = i;
        },
        Kokkos::Min<std::size_t>(first));
  });
  return first < n ? first : n;  // the reducer's identity (the largest size_t) when none is
}

/// Refuses arrays holding a NaN or an infinity (or, when `nonnegative`, a negative entry), as the t3k tool refuses
/// such input: the message names the array (`name`, or `name[i]` for item i of several) and the first such entry.
/// **Throws:** ValueError.
inline void require_finite(std::vector<Array> const& arrays, Dtype dt, std::string const& where,
                           std::string const& name, bool indexed, bool nonnegative = false) {
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    Array const& a = arrays[i];
    std::size_t const at = dispatch(dt, [&](auto zero) { return first_bad_entry<decltype(zero)>(a, nonnegative); });
    if (at == a.size()) continue;
    std::string index;
    for (std::size_t k = a.ndim(), rest = at; k-- > 0; rest /= a.shape(k)) {
      index = std::to_string(rest % a.shape(k)) + (index.empty() ? "" : ", ") + index;
    }
    std::string const label = name + (indexed ? "[" + std::to_string(i) + "]" : "") + "[" + index + "]";
    std::string value = "is not finite";
    if constexpr (!device_build) {
      double const v = dt == Dtype::float32 ? double(static_cast<float const*>(a.data())[at])
                                            : static_cast<double const*>(a.data())[at];
      value = "= " + number_text(v);
    }
    fail(where + ": " + label + " " + value + "; every entry of " + name + " must be finite" +
         (nonnegative ? " and >= 0" : ""));
  }
}

}  // namespace t3k_python
