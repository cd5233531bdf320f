/// \file t3k_module.cpp
/// The Python module `t3k._t3k` (nanobind): the library's public API on NumPy arrays, for float64 and float32.
///
/// Arrays come in through nanobind's ndarray (buffer protocol or DLPack) and are wrapped as unmanaged host Views: a
/// C-contiguous array of the computation's dtype is used in place, anything else is converted once by
/// numpy.ascontiguousarray. Results are NumPy arrays allocated here (the `_into` forms write into them) or copied
/// from the library's Views. Python objects hold NumPy arrays, never Kokkos Views, so that no View outlives
/// Kokkos::finalize at interpreter exit. Kernels run with the GIL released, one call at a time (Kokkos' host
/// backends do not take concurrent launches from several host threads).

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "t3k/algorithms/estimate_chunk_size.hpp"
#include "t3k/algorithms/orthogonal_frame.hpp"
#include "t3k/algorithms/probe_derivatives.hpp"
#include "t3k/algorithms/probe_derivatives_transpose.hpp"
#include "t3k/algorithms/random_t3.hpp"
#include "t3k/algorithms/t3_linear_algebra.hpp"
#include "t3k/algorithms/tangent_probe_derivatives.hpp"
#include "t3k/algorithms/to_dense.hpp"
#include "t3k/core/chunk_size.hpp"
#include "t3k/core/error.hpp"
#include "t3k/core/orthogonal_frame.hpp"
#include "t3k/core/t3_variation.hpp"
#include "t3k/core/tucker_tensor_train.hpp"
#include "t3k/version.hpp"

#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using ExecutionSpace = Kokkos::DefaultHostExecutionSpace;
using HostMemory = ExecutionSpace::memory_space;

enum class Dtype { float32, float64 };

/// Any C-contiguous host array (dtype and rank are checked where it is converted); read-only arrays are accepted.
using Array = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;
/// A writable one: the outputs allocated here.
using OutputArray = nb::ndarray<nb::c_contig, nb::device::cpu>;

template <class Scalar>
using Matrix = Kokkos::View<Scalar**, Kokkos::LayoutRight, HostMemory>;
template <class Scalar>
using Tensor3 = Kokkos::View<Scalar***, Kokkos::LayoutRight, HostMemory>;
template <class Scalar>
using Tensor4 = Kokkos::View<Scalar****, Kokkos::LayoutRight, HostMemory>;
template <class Scalar, class DataType>
using InputView = Kokkos::View<DataType, Kokkos::LayoutRight, HostMemory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class Scalar>
using ProbeView = InputView<Scalar, Scalar const**>;

char const* dtype_name(Dtype dt) { return dt == Dtype::float32 ? "float32" : "float64"; }
nb::dlpack::dtype dlpack_dtype(Dtype dt) { return dt == Dtype::float32 ? nb::dtype<float>() : nb::dtype<double>(); }
nb::module_ numpy() { return nb::module_::import_("numpy"); }

/// The library's messages name C++ functions (t3k::probe_derivatives); Python users know them as t3k.<name>.
std::string python_message(std::string text) {
  for (std::size_t at = text.find("t3k::"); at != std::string::npos; at = text.find("t3k::", at)) {
    text.replace(at, 5, "t3k.");
  }
  return text;
}

std::string text_of(nb::handle str) { return nb::str(str).c_str(); }

[[noreturn]] void fail(std::string const& message) { throw nb::value_error(message.c_str()); }

std::string describe(nb::handle obj) {
  if (nb::hasattr(obj, "shape") && nb::hasattr(obj, "dtype")) {
    return "an array of shape " + text_of(nb::repr(obj.attr("shape"))) + " and dtype " +
           text_of(nb::str(obj.attr("dtype")));
  }
  return "a " + text_of(nb::type_name(obj.type()));
}

std::string shape_string(Array const& a) {
  std::string out = "(";
  for (std::size_t k = 0; k < a.ndim(); ++k) out += (k ? ", " : "") + std::to_string(a.shape(k));
  return out + (a.ndim() == 1 ? ",)" : ")");
}

/// `obj` as a C-contiguous `ndim`-d array of dtype `dt` (ndim 0: any rank): in place when it is one already (no
/// copy), else converted by numpy.ascontiguousarray. **Throws:** ValueError naming `where`, `name` and `expected`.
Array as_array(nb::handle obj, Dtype dt, std::size_t ndim, std::string const& where, std::string const& name,
               std::string const& expected) {
  Array a;
  if (nb::try_cast(obj, a, false) && a.dtype() == dlpack_dtype(dt) && (ndim == 0 || a.ndim() == ndim)) return a;
  std::string const wanted = where + ": " + name + " must be a " + (ndim ? std::to_string(ndim) + "-d " : "") +
                             "array of real numbers " + expected + ", got ";
  nb::object converted;
  try {
    if (nb::cast<bool>(numpy().attr("iscomplexobj")(obj))) fail(wanted + describe(obj));
    converted = numpy().attr("ascontiguousarray")(obj, "dtype"_a = dtype_name(dt));
  } catch (nb::python_error const&) {
    fail(wanted + describe(obj));
  }
  if (!nb::try_cast(converted, a, false)) fail(wanted + describe(obj));
  if (ndim != 0 && a.ndim() != ndim) fail(wanted + "an array of shape " + shape_string(a));
  return a;
}

/// A sequence of arrays, one per mode, as in as_array; item i is named name[i].
std::vector<Array> as_array_list(nb::handle seq, Dtype dt, std::size_t ndim, std::string const& where,
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
std::size_t size_arg(nb::handle h, std::string const& where, std::string const& name, std::size_t minimum = 0) {
  std::string const wanted = where + ": " + name + " must be an integer >= " + std::to_string(minimum) + ", got ";
  if (nb::isinstance<nb::bool_>(h) || !PyIndex_Check(h.ptr())) fail(wanted + describe(h));
  nb::object index = nb::steal(PyNumber_Index(h.ptr()));
  if (!index.is_valid()) throw nb::python_error();
  int overflow = 0;
  long long const value = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow > 0) fail(wanted + "an integer too large");
  if (overflow < 0 || value < 0 || std::size_t(value) < minimum) fail(wanted + std::to_string(value));
  return std::size_t(value);
}

std::vector<std::size_t> size_list_arg(nb::handle seq, std::string const& where, std::string const& name) {
  if (!PySequence_Check(seq.ptr()) || nb::isinstance<nb::str>(seq)) {
    fail(where + ": " + name + " must be a sequence of integers, got " + describe(seq));
  }
  std::vector<std::size_t> out;
  for (nb::handle item : seq) out.push_back(size_arg(item, where, name + "[" + std::to_string(out.size()) + "]"));
  return out;
}

/// None (all probes at once), "auto", "none" or a positive integer.
t3k::ChunkSize chunk_size_arg(nb::handle h, std::string const& where) {
  if (h.is_none()) return t3k::ChunkSize::none();
  if (nb::isinstance<nb::str>(h)) {
    std::string const text = nb::cast<std::string>(h);
    if (text == "auto") return t3k::ChunkSize::automatic();
    if (text == "none") return t3k::ChunkSize::none();
    fail(where + ": chunk_size must be None, 'auto' or a positive integer, got '" + text + "'");
  }
  return t3k::ChunkSize::of(size_arg(h, where, "chunk_size", 1));
}

Dtype dtype_arg(nb::handle h, std::string const& where) {
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
Dtype inferred_dtype(nb::handle dtype, nb::handle sequence, std::string const& where) {
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

nb::object numpy_dtype(Dtype dt) { return numpy().attr("dtype")(dtype_name(dt)); }

/// Calls `f(Scalar{})` with the scalar type of `dt`.
template <class F>
decltype(auto) dispatch(Dtype dt, F&& f) {
  if (dt == Dtype::float32) return f(float{});
  return f(double{});
}

/// A fresh NumPy array (uninitialized) and its data.
struct Output {
  nb::object array;
  void* data = nullptr;
};
Output new_array(std::vector<std::size_t> const& shape, Dtype dt) {
  Output out;
  out.array = numpy().attr("empty")(nb::cast(shape), "dtype"_a = dtype_name(dt));
  out.data = nb::cast<OutputArray>(out.array, false).data();
  return out;
}
template <class Scalar>
Scalar* data_of(Output const& o) {
  return static_cast<Scalar*>(o.data);
}

/// Copies a contiguous View into a fresh NumPy array of its shape. Holds the GIL.
template <class View>
nb::object numpy_copy(View const& v, Dtype dt) {
  std::vector<std::size_t> shape;
  for (std::size_t k = 0; k < std::size_t(View::rank); ++k) shape.push_back(v.extent(k));
  Output out = new_array(shape, dt);
  if (v.span() > 0) std::memcpy(out.data, v.data(), v.span() * sizeof(typename View::value_type));
  return out.array;
}

/// A read-only NumPy view of an array held by `owner` (which keeps it alive).
nb::object numpy_view(Array const& a, nb::handle owner) {
  std::vector<std::size_t> shape;
  for (std::size_t k = 0; k < a.ndim(); ++k) shape.push_back(a.shape(k));
  nb::ndarray<nb::numpy, nb::ro> view(a.data(), a.ndim(), shape.data(), owner, nullptr, a.dtype());
  return nb::cast(view, nb::rv_policy::reference);
}
nb::list numpy_views(std::vector<Array> const& arrays, nb::handle owner) {
  nb::list out;
  for (auto const& a : arrays) out.append(numpy_view(a, owner));
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

std::mutex& kernel_mutex() {
  static std::mutex mutex;
  return mutex;
}

/// Runs `f` (which must not touch Python objects) with the GIL released, one call at a time, and waits for its
/// kernels: the library's calls are asynchronous, and NumPy reads the results right after.
template <class F>
void run_kernels(F&& f) {
  nb::gil_scoped_release release;
  std::lock_guard<std::mutex> lock(kernel_mutex());
  f();
  ExecutionSpace().fence();
}

// ------------------------------------------------------------------------------------------------- the objects

/// A Tucker tensor train on NumPy arrays: U_i (n_i, N_i), G_i (r_i, n_i, r_{i+1}).
struct PyTuckerTensorTrain {
  Dtype dtype = Dtype::float64;
  std::vector<Array> tucker, tt;

  template <class Scalar>
  t3k::TuckerTensorTrain<Scalar, HostMemory> view() const {
    std::vector<Matrix<Scalar>> us;
    std::vector<Tensor3<Scalar>> gs;
    for (auto const& a : tucker) us.push_back(matrix_view<Scalar>(a));
    for (auto const& a : tt) gs.push_back(tensor3_view<Scalar>(a));
    return t3k::TuckerTensorTrain<Scalar, HostMemory>(std::move(us), std::move(gs));  // validates the shapes
  }
  std::size_t n_modes() const { return tt.size(); }
};

/// An orthogonal frame on NumPy arrays (centre factors optional).
struct PyOrthogonalFrame {
  Dtype dtype = Dtype::float64;
  std::vector<Array> up, left, right, outer, centre;

  template <class Scalar>
  t3k::OrthogonalFrame<Scalar, HostMemory> view() const {
    std::vector<Matrix<Scalar>> u, s;
    std::vector<Tensor3<Scalar>> l, r, o;
    for (auto const& a : up) u.push_back(matrix_view<Scalar>(a));
    for (auto const& a : centre) s.push_back(matrix_view<Scalar>(a));
    for (auto const& a : left) l.push_back(tensor3_view<Scalar>(a));
    for (auto const& a : right) r.push_back(tensor3_view<Scalar>(a));
    for (auto const& a : outer) o.push_back(tensor3_view<Scalar>(a));
    return t3k::OrthogonalFrame<Scalar, HostMemory>(std::move(u), std::move(l), std::move(r), std::move(o),
                                                    std::move(s));
  }
  std::size_t n_modes() const { return up.size(); }
};

/// A stack of variations on NumPy arrays: V_i (n, nO_i, N_i), H_i (n, rL_i, nU_i, rR_{i+1}).
struct PyT3Variation {
  Dtype dtype = Dtype::float64;
  std::vector<Array> tucker, tt;

  template <class Scalar>
  t3k::T3Variation<Scalar, HostMemory> view() const {
    t3k::T3Variation<Scalar, HostMemory> v;
    for (auto const& a : tucker) v.tucker.push_back(tensor3_view<Scalar>(a));
    for (auto const& a : tt) v.tt.push_back(tensor4_view<Scalar>(a));
    return v;
  }
};

template <class Scalar>
PyTuckerTensorTrain t3_from_library(t3k::TuckerTensorTrain<Scalar, HostMemory> const& x, Dtype dt) {
  PyTuckerTensorTrain out;
  out.dtype = dt;
  for (std::size_t i = 0; i < x.n_modes(); ++i) {
    out.tucker.push_back(nb::cast<Array>(numpy_copy(x.tucker_core(i), dt), false));
    out.tt.push_back(nb::cast<Array>(numpy_copy(x.tt_core(i), dt), false));
  }
  return out;
}

template <class Scalar>
PyT3Variation variation_from_library(t3k::T3Variation<Scalar, HostMemory> const& v, Dtype dt) {
  PyT3Variation out;
  out.dtype = dt;
  for (std::size_t i = 0; i < v.n_modes(); ++i) {
    out.tucker.push_back(nb::cast<Array>(numpy_copy(v.tucker[i], dt), false));
    out.tt.push_back(nb::cast<Array>(numpy_copy(v.tt[i], dt), false));
  }
  return out;
}

nb::tuple size_tuple(std::vector<std::size_t> const& values) {
  nb::list l;
  for (auto v : values) l.append(v);
  return nb::tuple(l);
}

// ---------------------------------------------------------------------------------------------- the functions

PyTuckerTensorTrain make_t3(nb::handle tucker_cores, nb::handle tt_cores, nb::handle dtype) {
  std::string const where = "t3k.TuckerTensorTrain";
  PyTuckerTensorTrain x;
  x.dtype = inferred_dtype(dtype, tucker_cores, where);
  x.tucker = as_array_list(tucker_cores, x.dtype, 2, where, "tucker_cores", "(n_i x N_i)");
  x.tt = as_array_list(tt_cores, x.dtype, 3, where, "tt_cores", "(r_i x n_i x r_{i+1})");
  dispatch(x.dtype, [&](auto zero) { (void)x.view<decltype(zero)>(); });
  return x;
}

PyTuckerTensorTrain random_t3(nb::handle shape, nb::handle tucker_ranks, nb::handle tt_ranks, nb::handle seed,
                              nb::handle dtype) {
  std::string const where = "t3k.TuckerTensorTrain.random";
  auto const big_n = size_list_arg(shape, where, "shape");
  auto const n = size_list_arg(tucker_ranks, where, "tucker_ranks");
  auto const r = size_list_arg(tt_ranks, where, "tt_ranks");
  std::size_t const s = size_arg(seed, where, "seed");
  Dtype const dt = dtype_arg(dtype, where);
  return dispatch(dt, [&](auto zero) {
    using Scalar = decltype(zero);
    t3k::TuckerTensorTrain<Scalar, HostMemory> x;
    run_kernels([&] { x = t3k::random_t3<Scalar>(ExecutionSpace(), big_n, n, r, std::uint64_t(s)); });
    return t3_from_library(x, dt);
  });
}

nb::object to_dense(PyTuckerTensorTrain const& x) {
  return dispatch(x.dtype, [&](auto zero) {
    using Scalar = decltype(zero);
    auto const t3 = x.view<Scalar>();
    Kokkos::View<Scalar*, HostMemory> flat;
    run_kernels([&] { flat = t3k::to_dense(ExecutionSpace(), t3); });
    return numpy_copy(flat, x.dtype).attr("reshape")(size_tuple(t3.mode_shapes()));
  });
}

double norm(PyTuckerTensorTrain const& x) {
  return dispatch(x.dtype, [&](auto zero) {
    using Scalar = decltype(zero);
    auto const t3 = x.view<Scalar>();
    Scalar result = 0;
    run_kernels([&] { result = t3k::norm(ExecutionSpace(), t3); });
    return double(result);
  });
}

nb::list probe_derivatives(PyTuckerTensorTrain const& x, nb::handle ww, nb::handle pp, nb::handle order,
                           nb::handle chunk_size) {
  std::string const where = "t3k.probe_derivatives";
  std::size_t const k = size_arg(order, where, "order");
  auto const chunk = chunk_size_arg(chunk_size, where);
  auto const w_arrays = as_array_list(ww, x.dtype, 2, where, "ww", "(W x N_i)");
  auto const p_arrays = as_array_list(pp, x.dtype, 2, where, "pp", "(W x N_i)");
  return dispatch(x.dtype, [&](auto zero) {
    using Scalar = decltype(zero);
    auto const t3 = x.view<Scalar>();
    auto const shapes = t3.mode_shapes();
    std::size_t const w = w_arrays.empty() ? 0 : w_arrays[0].shape(0);
    nb::list out;
    t3k::ProbeJets<Scalar, HostMemory> z;
    for (std::size_t i = 0; i < x.n_modes(); ++i) {
      Output o = new_array({w, k + 1, shapes[i]}, x.dtype);
      out.append(o.array);
      z.emplace_back(data_of<Scalar>(o), w, k + 1, shapes[i]);
    }
    auto const wv = probe_views<Scalar>(w_arrays);
    auto const pv = probe_views<Scalar>(p_arrays);
    run_kernels([&] { t3k::probe_derivatives_into(ExecutionSpace(), t3, wv, pv, k, z, chunk); });
    return out;
  });
}

nb::list probes(PyTuckerTensorTrain const& x, nb::handle ww) {
  std::string const where = "t3k.probes";
  auto const w_arrays = as_array_list(ww, x.dtype, 2, where, "ww", "(W x N_i)");
  return dispatch(x.dtype, [&](auto zero) {
    using Scalar = decltype(zero);
    auto const t3 = x.view<Scalar>();
    auto const shapes = t3.mode_shapes();
    std::size_t const w = w_arrays.empty() ? 0 : w_arrays[0].shape(0);
    nb::list out;
    t3k::Probes<Scalar, HostMemory> z;
    for (std::size_t i = 0; i < x.n_modes(); ++i) {
      Output o = new_array({w, shapes[i]}, x.dtype);
      out.append(o.array);
      z.emplace_back(data_of<Scalar>(o), w, shapes[i]);
    }
    auto const wv = probe_views<Scalar>(w_arrays);
    run_kernels([&] { t3k::probes_into(ExecutionSpace(), t3, wv, z); });
    return out;
  });
}

PyOrthogonalFrame orthogonal_frame(PyTuckerTensorTrain const& x) {
  return dispatch(x.dtype, [&](auto zero) {
    using Scalar = decltype(zero);
    auto const t3 = x.view<Scalar>();
    t3k::OrthogonalFrame<Scalar, HostMemory> frame;
    run_kernels([&] { frame = t3k::orthogonal_frame(ExecutionSpace(), t3); });
    PyOrthogonalFrame out;
    out.dtype = x.dtype;
    auto keep = [&](auto const& view) { return nb::cast<Array>(numpy_copy(view, x.dtype), false); };
    for (std::size_t i = 0; i < frame.n_modes(); ++i) {
      out.up.push_back(keep(frame.up_tucker(i)));
      out.left.push_back(keep(frame.left_tt(i)));
      out.right.push_back(keep(frame.right_tt(i)));
      out.outer.push_back(keep(frame.outer_tt(i)));
      out.centre.push_back(keep(frame.centre_tucker(i)));
    }
    return out;
  });
}

PyOrthogonalFrame make_frame(nb::handle up_tucker, nb::handle left_tt, nb::handle right_tt, nb::handle outer_tt,
                             nb::handle centre_tucker, nb::handle dtype) {
  std::string const where = "t3k.OrthogonalFrame";
  PyOrthogonalFrame f;
  f.dtype = inferred_dtype(dtype, up_tucker, where);
  f.up = as_array_list(up_tucker, f.dtype, 2, where, "up_tucker", "(nU_i x N_i)");
  f.left = as_array_list(left_tt, f.dtype, 3, where, "left_tt", "(rL_i x nU_i x rL_{i+1})");
  f.right = as_array_list(right_tt, f.dtype, 3, where, "right_tt", "(rR_i x nU_i x rR_{i+1})");
  f.outer = as_array_list(outer_tt, f.dtype, 3, where, "outer_tt", "(rL_i x nO_i x rR_{i+1})");
  if (!centre_tucker.is_none()) {
    f.centre = as_array_list(centre_tucker, f.dtype, 2, where, "centre_tucker", "(nO_i x nU_i)");
  }
  dispatch(f.dtype, [&](auto zero) { (void)f.view<decltype(zero)>(); });
  return f;
}

PyT3Variation make_variation(nb::handle tucker, nb::handle tt, nb::handle dtype) {
  std::string const where = "t3k.T3Variation";
  PyT3Variation v;
  v.dtype = inferred_dtype(dtype, tucker, where);
  v.tucker = as_array_list(tucker, v.dtype, 3, where, "tucker", "(n_stack x nO_i x N_i)");
  v.tt = as_array_list(tt, v.dtype, 4, where, "tt", "(n_stack x rL_i x nU_i x rR_{i+1})");
  if (v.tucker.size() != v.tt.size() || v.tt.empty()) {
    fail(where + ": got " + std::to_string(v.tucker.size()) + " Tucker and " + std::to_string(v.tt.size()) +
         " TT blocks; both must number d >= 1");
  }
  std::size_t const n = v.tt[0].shape(0);
  for (std::size_t i = 0; i < v.tt.size(); ++i) {
    if (v.tucker[i].shape(0) != n || v.tt[i].shape(0) != n) {
      fail(where + ": block " + std::to_string(i) + " has a stack of " + std::to_string(v.tucker[i].shape(0)) +
           " (tucker) and " + std::to_string(v.tt[i].shape(0)) + " (tt), expected " + std::to_string(n) +
           " (the stack of tt[0])");
    }
  }
  return v;
}

PyT3Variation zero_variation(PyOrthogonalFrame const& frame, nb::handle n_stack) {
  std::size_t const n = size_arg(n_stack, "t3k.T3Variation.zeros", "n_stack");
  return dispatch(frame.dtype, [&](auto zero) {
    using Scalar = decltype(zero);
    t3k::T3Variation<Scalar, HostMemory> v;
    run_kernels([&] { v = t3k::zero_variation<Scalar>(ExecutionSpace(), frame.view<Scalar>(), n); });
    return variation_from_library(v, frame.dtype);
  });
}

nb::list tangent_probe_derivatives(PyOrthogonalFrame const& frame, PyT3Variation const& v, nb::handle ww, nb::handle pp,
                                   nb::handle order, nb::handle chunk_size) {
  std::string const where = "t3k.tangent_probe_derivatives";
  if (v.dtype != frame.dtype) {
    fail(where + ": the variation is " + dtype_name(v.dtype) + " but the frame is " + dtype_name(frame.dtype));
  }
  std::size_t const k = size_arg(order, where, "order");
  auto const chunk = chunk_size_arg(chunk_size, where);
  auto const w_arrays = as_array_list(ww, frame.dtype, 2, where, "ww", "(W x N_i)");
  auto const p_arrays = as_array_list(pp, frame.dtype, 2, where, "pp", "(W x N_i)");
  return dispatch(frame.dtype, [&](auto zero) {
    using Scalar = decltype(zero);
    auto const f = frame.view<Scalar>();
    auto const variation = v.view<Scalar>();
    auto const shapes = f.mode_shapes();
    std::size_t const w = w_arrays.empty() ? 0 : w_arrays[0].shape(0);
    nb::list out;
    t3k::TangentProbeJets<Scalar, HostMemory> z;
    for (std::size_t i = 0; i < frame.n_modes(); ++i) {
      Output o = new_array({variation.n_stack(), w, k + 1, shapes[i]}, frame.dtype);
      out.append(o.array);
      z.emplace_back(data_of<Scalar>(o), variation.n_stack(), w, k + 1, shapes[i]);
    }
    auto const wv = probe_views<Scalar>(w_arrays);
    auto const pv = probe_views<Scalar>(p_arrays);
    run_kernels([&] { t3k::tangent_probe_derivatives_into(ExecutionSpace(), f, variation, wv, pv, k, z, chunk); });
    return out;
  });
}

template <class Scalar, class DataType>
PyT3Variation transpose_with(PyOrthogonalFrame const& frame, std::vector<Array> const& w_arrays,
                             std::vector<Array> const& p_arrays, std::vector<Array> const& residuals,
                             t3k::TransposeOptions const& options) {
  using ResidualView = InputView<Scalar, DataType>;
  std::vector<ResidualView> rv;
  for (auto const& a : residuals) {
    if constexpr (int(ResidualView::rank) == 3) {
      rv.emplace_back(static_cast<Scalar const*>(a.data()), a.shape(0), a.shape(1), a.shape(2));
    } else {
      rv.emplace_back(static_cast<Scalar const*>(a.data()), a.shape(0), a.shape(1), a.shape(2), a.shape(3));
    }
  }
  auto const f = frame.view<Scalar>();
  auto const wv = probe_views<Scalar>(w_arrays);
  auto const pv = probe_views<Scalar>(p_arrays);
  t3k::T3Variation<Scalar, HostMemory> out;
  run_kernels([&] { out = t3k::probe_derivatives_transpose(ExecutionSpace(), f, wv, pv, rv, options); });
  return variation_from_library(out, frame.dtype);
}

PyT3Variation probe_derivatives_transpose(PyOrthogonalFrame const& frame, nb::handle ww, nb::handle pp,
                                          nb::handle residuals, bool sum_over_probes, nb::handle chunk_size) {
  std::string const where = "t3k.probe_derivatives_transpose";
  t3k::TransposeOptions options;
  options.sum_over_probes = sum_over_probes;
  options.chunk_size = chunk_size_arg(chunk_size, where);
  auto const w_arrays = as_array_list(ww, frame.dtype, 2, where, "ww", "(W x N_i)");
  auto const p_arrays = as_array_list(pp, frame.dtype, 2, where, "pp", "(W x N_i)");
  char const* const expected = "(W x (K+1) x N_i), or (n_t x W x (K+1) x N_i) for a stack";
  auto r_arrays = as_array_list(residuals, frame.dtype, 0, where, "residuals", expected);
  std::size_t const rank = r_arrays.empty() ? 3 : r_arrays[0].ndim();
  if (rank != 3 && rank != 4)
    fail(where + ": residuals[0] must be 3-d " + expected + ", got " + shape_string(r_arrays[0]));
  for (std::size_t i = 0; i < r_arrays.size(); ++i) {
    if (r_arrays[i].ndim() != rank) {
      fail(where + ": residuals[" + std::to_string(i) + "] has shape " + shape_string(r_arrays[i]) + ", expected a " +
           std::to_string(rank) + "-d array like residuals[0]");
    }
  }
  return dispatch(frame.dtype, [&](auto zero) {
    using Scalar = decltype(zero);
    if (rank == 3) return transpose_with<Scalar, Scalar const***>(frame, w_arrays, p_arrays, r_arrays, options);
    return transpose_with<Scalar, Scalar const****>(frame, w_arrays, p_arrays, r_arrays, options);
  });
}

t3k::ScalarType scalar_type(Dtype dt) {
  return dt == Dtype::float32 ? t3k::ScalarType::float32 : t3k::ScalarType::float64;
}

std::size_t estimate_chunk_size(nb::handle shape, nb::handle tucker_ranks, nb::handle tt_ranks, nb::handle order,
                                nb::handle n_probes, nb::handle n_tangent, nb::handle n_shards, nb::handle dtype,
                                nb::handle block_rows) {
  std::string const where = "t3k.estimate_chunk_size";
  return t3k::estimate_chunk_size(size_list_arg(shape, where, "shape"),
                                  size_list_arg(tucker_ranks, where, "tucker_ranks"),
                                  size_list_arg(tt_ranks, where, "tt_ranks"), size_arg(order, where, "order"),
                                  size_arg(n_probes, where, "n_probes"), size_arg(n_tangent, where, "n_tangent"),
                                  size_arg(n_shards, where, "n_shards", 1), scalar_type(dtype_arg(dtype, where)),
                                  size_arg(block_rows, where, "block_rows", 1));
}

std::size_t max_chunk_size_within(nb::handle shape, nb::handle tucker_ranks, nb::handle tt_ranks, nb::handle order,
                                  nb::handle n_probes, nb::handle target_bytes, nb::handle n_tangent,
                                  nb::handle n_shards, nb::handle dtype, nb::handle block_rows) {
  std::string const where = "t3k.max_chunk_size_within";
  return t3k::max_chunk_size_within(
      size_list_arg(shape, where, "shape"), size_list_arg(tucker_ranks, where, "tucker_ranks"),
      size_list_arg(tt_ranks, where, "tt_ranks"), size_arg(order, where, "order"),
      size_arg(n_probes, where, "n_probes"), size_arg(target_bytes, where, "target_bytes"),
      size_arg(n_tangent, where, "n_tangent"), size_arg(n_shards, where, "n_shards", 1),
      scalar_type(dtype_arg(dtype, where)), size_arg(block_rows, where, "block_rows", 1));
}

/// The address a call would read `obj` from (for tests of the no-copy path).
std::uintptr_t array_address(nb::handle obj, nb::handle dtype, std::size_t ndim) {
  return reinterpret_cast<std::uintptr_t>(
      as_array(obj, dtype_arg(dtype, "t3k._array_address"), ndim, "t3k._array_address", "obj", "").data());
}

bool kokkos_owned = false;

void finalize_kokkos() {
  std::lock_guard<std::mutex> lock(kernel_mutex());
  if (kokkos_owned && Kokkos::is_initialized()) Kokkos::finalize();
  kokkos_owned = false;
}

}  // namespace

NB_MODULE(_t3k, m) {
  m.doc() =
      "T3K: Tucker tensor trains, their probe jets, the Jacobian J and its transpose, on NumPy arrays.\n\n"
      "Kokkos is initialized on import (its host backend, OpenMP where built with it; OMP_NUM_THREADS sets the\n"
      "threads) and finalized at interpreter exit. Calls release the GIL and run one at a time.";

  if (!Kokkos::is_initialized()) {
    // argv form: the same on Kokkos 3.4 and 4.x. Kokkos' OMP_PROC_BIND advice is meant for programs, not importers.
    std::vector<std::string> args{"t3k", "--kokkos-disable-warnings"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    int argc = int(argv.size());
    Kokkos::initialize(argc, argv.data());
    kokkos_owned = true;
  }
  nb::module_::import_("atexit").attr("register")(nb::cpp_function(&finalize_kokkos));

  nb::register_exception_translator([](std::exception_ptr const& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (t3k::InvalidArgument const& e) {
      PyErr_SetString(PyExc_ValueError, python_message(e.what()).c_str());
    } catch (t3k::DimensionMismatch const& e) {
      PyErr_SetString(PyExc_ValueError, python_message(e.what()).c_str());
    }
  });

  m.attr("__version__") = T3K_VERSION_STRING;
  m.attr("reduction_block_size") = t3k::reduction_block_size;

  nb::class_<PyTuckerTensorTrain>(
      m, "TuckerTensorTrain",
      "A Tucker tensor train: Tucker cores U_i of shape (n_i, N_i) and TT cores G_i of shape (r_i, n_i, r_{i+1}),\n"
      "X[j_0, .., j_{d-1}] = 1^T M_0(j_0) .. M_{d-1}(j_{d-1}) 1 with M_i(j)[a, b] = sum_u G_i[a, u, b] U_i[u, j].\n\n"
      "The cores are held as given when they are C-contiguous arrays of the T3's dtype (no copy: changing them\n"
      "changes the T3), else as converted copies. The properties return read-only views of them.")
      .def(
          "__init__",
          [](PyTuckerTensorTrain* self, nb::handle tucker_cores, nb::handle tt_cores, nb::handle dtype) {
            new (self) PyTuckerTensorTrain(make_t3(tucker_cores, tt_cores, dtype));
          },
          "tucker_cores"_a, "tt_cores"_a, "dtype"_a.none() = nb::none(),
          nb::sig("def __init__(self, tucker_cores: typing.Sequence[numpy.typing.ArrayLike], "
                  "tt_cores: typing.Sequence[numpy.typing.ArrayLike], dtype: numpy.typing.DTypeLike = None) -> None"),
          "Builds a T3 from d Tucker cores (n_i, N_i) and d TT cores (r_i, n_i, r_{i+1}).\n\n"
          "dtype: float32 or float64; by default float32 when tucker_cores[0] is float32, else float64.\n"
          "Raises ValueError naming the core and both shapes when the cores do not fit together.")
      .def_static("random", &random_t3, "shape"_a, "tucker_ranks"_a, "tt_ranks"_a, "seed"_a = 0, "dtype"_a = "float64",
                  nb::sig("def random(shape: typing.Sequence[int], tucker_ranks: typing.Sequence[int], "
                          "tt_ranks: typing.Sequence[int], seed: int = 0, dtype: numpy.typing.DTypeLike = 'float64') "
                          "-> TuckerTensorTrain"),
                  "A T3 with i.i.d. normal cores (Tucker cores scaled by 1/sqrt(N_i), TT cores by 1/sqrt(r_i n_i)),\n"
                  "the same for a seed on every backend. tt_ranks has d + 1 entries r_0..r_d (usually r_0 = r_d = 1).")
      .def("to_dense", &to_dense, nb::sig("def to_dense(self) -> numpy.ndarray"),
           "The dense tensor, shape (N_0, .., N_{d-1}) (for small tensors).")
      .def("norm", &norm, "The Frobenius norm ||X||, computed from the cores.")
      .def_prop_ro(
          "tucker_cores", [](PyTuckerTensorTrain const& x) { return numpy_views(x.tucker, nb::find(&x)); },
          nb::for_getter(nb::sig("def tucker_cores(self) -> list[numpy.ndarray]")),
          "U_0..U_{d-1}, read-only views (n_i, N_i).")
      .def_prop_ro(
          "tt_cores", [](PyTuckerTensorTrain const& x) { return numpy_views(x.tt, nb::find(&x)); },
          nb::for_getter(nb::sig("def tt_cores(self) -> list[numpy.ndarray]")),
          "G_0..G_{d-1}, read-only views (r_i, n_i, r_{i+1}).")
      .def_prop_ro(
          "shape",
          [](PyTuckerTensorTrain const& x) {
            return size_tuple(dispatch(x.dtype, [&](auto z) { return x.view<decltype(z)>().mode_shapes(); }));
          },
          nb::for_getter(nb::sig("def shape(self) -> tuple[int, ...]")), "(N_0, .., N_{d-1}).")
      .def_prop_ro(
          "tucker_ranks",
          [](PyTuckerTensorTrain const& x) {
            std::vector<std::size_t> n;
            for (auto const& a : x.tucker) n.push_back(a.shape(0));
            return n;
          },
          "[n_0, .., n_{d-1}].")
      .def_prop_ro(
          "tt_ranks",
          [](PyTuckerTensorTrain const& x) {
            std::vector<std::size_t> r;
            for (auto const& a : x.tt) r.push_back(a.shape(0));
            r.push_back(x.tt.back().shape(2));
            return r;
          },
          "[r_0, .., r_d] (d + 1 entries).")
      .def_prop_ro("n_modes", &PyTuckerTensorTrain::n_modes, "d, the number of modes.")
      .def_prop_ro(
          "dtype", [](PyTuckerTensorTrain const& x) { return numpy_dtype(x.dtype); },
          nb::for_getter(nb::sig("def dtype(self) -> numpy.dtype")), "float32 or float64.")
      .def("__repr__", [](PyTuckerTensorTrain const& x) {
        auto list = [](std::vector<std::size_t> const& v) {
          std::string s = "[";
          for (std::size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
          return s + "]";
        };
        std::vector<std::size_t> big_n, n, r;
        for (auto const& a : x.tucker) big_n.push_back(a.shape(1)), n.push_back(a.shape(0));
        for (auto const& a : x.tt) r.push_back(a.shape(0));
        r.push_back(x.tt.back().shape(2));
        return "TuckerTensorTrain(shape=" + list(big_n) + ", tucker_ranks=" + list(n) + ", tt_ranks=" + list(r) +
               ", dtype=" + dtype_name(x.dtype) + ")";
      });

  nb::class_<PyOrthogonalFrame>(
      m, "OrthogonalFrame",
      "The orthogonal frame of a T3 (docs/math.md): up Tucker factors U_i (nU_i, N_i), left-orthogonal L_i\n"
      "(rL_i, nU_i, rL_{i+1}), right-orthogonal R_i (rR_i, nU_i, rR_{i+1}) and outer O_i (rL_i, nO_i, rR_{i+1})\n"
      "TT cores, and, for a frame built from a T3, the centre factors S_i (nO_i, nU_i).")
      .def(
          "__init__",
          [](PyOrthogonalFrame* self, nb::handle up, nb::handle left, nb::handle right, nb::handle outer,
             nb::handle centre,
             nb::handle dtype) { new (self) PyOrthogonalFrame(make_frame(up, left, right, outer, centre, dtype)); },
          "up_tucker"_a, "left_tt"_a, "right_tt"_a, "outer_tt"_a, "centre_tucker"_a.none() = nb::none(),
          "dtype"_a.none() = nb::none(),
          nb::sig("def __init__(self, up_tucker: typing.Sequence[numpy.typing.ArrayLike], "
                  "left_tt: typing.Sequence[numpy.typing.ArrayLike], "
                  "right_tt: typing.Sequence[numpy.typing.ArrayLike], "
                  "outer_tt: typing.Sequence[numpy.typing.ArrayLike], "
                  "centre_tucker: typing.Sequence[numpy.typing.ArrayLike] | None = None, "
                  "dtype: numpy.typing.DTypeLike = None) -> None"),
          "A frame from its cores (e.g. read from a file). Raises ValueError when the cores do not fit together.")
      .def_prop_ro(
          "up_tucker", [](PyOrthogonalFrame const& f) { return numpy_views(f.up, nb::find(&f)); },
          nb::for_getter(nb::sig("def up_tucker(self) -> list[numpy.ndarray]")), "U_i (nU_i, N_i), orthonormal rows.")
      .def_prop_ro(
          "left_tt", [](PyOrthogonalFrame const& f) { return numpy_views(f.left, nb::find(&f)); },
          nb::for_getter(nb::sig("def left_tt(self) -> list[numpy.ndarray]")), "L_i (rL_i, nU_i, rL_{i+1}).")
      .def_prop_ro(
          "right_tt", [](PyOrthogonalFrame const& f) { return numpy_views(f.right, nb::find(&f)); },
          nb::for_getter(nb::sig("def right_tt(self) -> list[numpy.ndarray]")), "R_i (rR_i, nU_i, rR_{i+1}).")
      .def_prop_ro(
          "outer_tt", [](PyOrthogonalFrame const& f) { return numpy_views(f.outer, nb::find(&f)); },
          nb::for_getter(nb::sig("def outer_tt(self) -> list[numpy.ndarray]")), "O_i (rL_i, nO_i, rR_{i+1}).")
      .def_prop_ro(
          "centre_tucker",
          [](PyOrthogonalFrame const& f) -> nb::object {
            if (f.centre.empty()) return nb::none();
            return numpy_views(f.centre, nb::find(&f));
          },
          nb::for_getter(nb::sig("def centre_tucker(self) -> list[numpy.ndarray] | None")),
          "S_i (nO_i, nU_i) with C_i[a, u, b] = sum_o O_i[a, o, b] S_i[o, u], or None.")
      .def_prop_ro(
          "shape",
          [](PyOrthogonalFrame const& f) {
            std::vector<std::size_t> s;
            for (auto const& a : f.up) s.push_back(a.shape(1));
            return size_tuple(s);
          },
          nb::for_getter(nb::sig("def shape(self) -> tuple[int, ...]")), "(N_0, .., N_{d-1}).")
      .def_prop_ro("n_modes", &PyOrthogonalFrame::n_modes, "d, the number of modes.")
      .def_prop_ro(
          "dtype", [](PyOrthogonalFrame const& f) { return numpy_dtype(f.dtype); },
          nb::for_getter(nb::sig("def dtype(self) -> numpy.dtype")), "float32 or float64.");

  nb::class_<PyT3Variation>(
      m, "T3Variation",
      "A stack of variations (tangent vectors in frame coordinates, docs/math.md): Tucker blocks V_i of shape\n"
      "(n_stack, nO_i, N_i) and TT blocks H_i of shape (n_stack, rL_i, nU_i, rR_{i+1}).")
      .def(
          "__init__",
          [](PyT3Variation* self, nb::handle tucker, nb::handle tt, nb::handle dtype) {
            new (self) PyT3Variation(make_variation(tucker, tt, dtype));
          },
          "tucker"_a, "tt"_a, "dtype"_a.none() = nb::none(),
          nb::sig("def __init__(self, tucker: typing.Sequence[numpy.typing.ArrayLike], "
                  "tt: typing.Sequence[numpy.typing.ArrayLike], dtype: numpy.typing.DTypeLike = None) -> None"),
          "A variation stack from its blocks (held without a copy where the layout allows, as T3 cores).")
      .def_static("zeros", &zero_variation, "frame"_a, "n_stack"_a = 1,
                  nb::sig("def zeros(frame: OrthogonalFrame, n_stack: int = 1) -> T3Variation"),
                  "A zero stack of n_stack variations with the frame's shapes.")
      .def_prop_ro(
          "tucker", [](PyT3Variation const& v) { return numpy_views(v.tucker, nb::find(&v)); },
          nb::for_getter(nb::sig("def tucker(self) -> list[numpy.ndarray]")),
          "V_i (n_stack, nO_i, N_i), read-only views.")
      .def_prop_ro(
          "tt", [](PyT3Variation const& v) { return numpy_views(v.tt, nb::find(&v)); },
          nb::for_getter(nb::sig("def tt(self) -> list[numpy.ndarray]")),
          "H_i (n_stack, rL_i, nU_i, rR_{i+1}), read-only views.")
      .def_prop_ro(
          "n_stack", [](PyT3Variation const& v) { return v.tt[0].shape(0); }, "The length of the stack axis.")
      .def_prop_ro(
          "n_modes", [](PyT3Variation const& v) { return v.tt.size(); }, "d, the number of modes.")
      .def_prop_ro(
          "dtype", [](PyT3Variation const& v) { return numpy_dtype(v.dtype); },
          nb::for_getter(nb::sig("def dtype(self) -> numpy.dtype")), "float32 or float64.");

  m.def("probes", &probes, "x"_a, "ww"_a,
        nb::sig("def probes(x: TuckerTensorTrain, ww: typing.Sequence[numpy.typing.ArrayLike]) -> "
                "list[numpy.ndarray]"),
        "Order-0 probes z_i = X contracted with ww[m] in every mode m != i: one (W, N_i) array per mode.\n\n"
        "ww: one (W, N_i) array per mode. Raises ValueError naming the array and both shapes.");
  m.def("probe_derivatives", &probe_derivatives, "x"_a, "ww"_a, "pp"_a, "order"_a, "chunk_size"_a.none() = "auto",
        nb::sig("def probe_derivatives(x: TuckerTensorTrain, ww: typing.Sequence[numpy.typing.ArrayLike], "
                "pp: typing.Sequence[numpy.typing.ArrayLike], order: int, "
                "chunk_size: int | str | None = 'auto') -> list[numpy.ndarray]"),
        "Probe jets of X: one (W, order + 1, N_i) array per mode holding the Taylor coefficients z_i^(k) of\n"
        "z_i(t) = X contracted with ww[m] + t pp[m] in every mode m != i (coefficients, not derivatives: no k!).\n"
        "Orders k >= d are zero.\n\n"
        "ww, pp: one (W, N_i) array per mode. chunk_size: probes per pass ('auto', None for all at once, or an\n"
        "integer); the result does not depend on it. Raises ValueError naming the array and both shapes.");
  m.def("orthogonal_frame", &orthogonal_frame, "x"_a,
        nb::sig("def orthogonal_frame(x: TuckerTensorTrain) -> OrthogonalFrame"),
        "The orthogonal frame of X by QR sweeps, with its centre factors (docs/math.md).");
  m.def("tangent_probe_derivatives", &tangent_probe_derivatives, "frame"_a, "v"_a, "ww"_a, "pp"_a, "order"_a,
        "chunk_size"_a.none() = "auto",
        nb::sig("def tangent_probe_derivatives(frame: OrthogonalFrame, v: T3Variation, "
                "ww: typing.Sequence[numpy.typing.ArrayLike], pp: typing.Sequence[numpy.typing.ArrayLike], "
                "order: int, chunk_size: int | str | None = 'auto') -> list[numpy.ndarray]"),
        "The Jacobian J applied to a stack of variations: the probe jets of the tangent tensors T(v_t), one\n"
        "(n_stack, W, order + 1, N_i) array per mode. J acts on all variations, gauged or not.");
  m.def("probe_derivatives_transpose", &probe_derivatives_transpose, "frame"_a, "ww"_a, "pp"_a, "residuals"_a,
        "sum_over_probes"_a = true, "chunk_size"_a.none() = "auto",
        nb::sig("def probe_derivatives_transpose(frame: OrthogonalFrame, ww: typing.Sequence[numpy.typing.ArrayLike], "
                "pp: typing.Sequence[numpy.typing.ArrayLike], residuals: typing.Sequence[numpy.typing.ArrayLike], "
                "sum_over_probes: bool = True, chunk_size: int | str | None = 'auto') -> T3Variation"),
        "J^T: residual jets back-projected into a variation, so that for every v\n"
        "sum(J(v) * r) over probes, modes, orders and entries = sum_i <V_i, V~_i> + <H_i, H~_i>.\n\n"
        "residuals: one (W, K+1, N_i) array per mode, or (n_t, W, K+1, N_i) for a stack of n_t.\n"
        "sum_over_probes: True gives n_t variations (the gradients J^T r); False gives n_t * W, index t * W + s.\n"
        "chunk_size: probes per pass ('auto': the memory model's choice, None: all at once, or an integer, rounded\n"
        "down to a multiple of reduction_block_size); every chunk size gives the same result bit for bit.\n"
        "The result is not gauged.");
  m.def("estimate_chunk_size", &estimate_chunk_size, "shape"_a, "tucker_ranks"_a, "tt_ranks"_a, "order"_a, "n_probes"_a,
        "n_tangent"_a = 1, "n_shards"_a = 1, "dtype"_a = "float64", "block_rows"_a = t3k::reduction_block_size,
        nb::sig("def estimate_chunk_size(shape: typing.Sequence[int], tucker_ranks: typing.Sequence[int], "
                "tt_ranks: typing.Sequence[int], order: int, n_probes: int, n_tangent: int = 1, n_shards: int = 1, "
                "dtype: numpy.typing.DTypeLike = 'float64', block_rows: int = 64) -> int"),
        "The balance chunk size of J^T for these T3 shapes: the largest chunk whose workspace stays within the\n"
        "bytes of the probe data itself; a multiple of block_rows, or all probes. Nothing runs.");
  m.def("max_chunk_size_within", &max_chunk_size_within, "shape"_a, "tucker_ranks"_a, "tt_ranks"_a, "order"_a,
        "n_probes"_a, "target_bytes"_a, "n_tangent"_a = 1, "n_shards"_a = 1, "dtype"_a = "float64",
        "block_rows"_a = t3k::reduction_block_size,
        nb::sig("def max_chunk_size_within(shape: typing.Sequence[int], tucker_ranks: typing.Sequence[int], "
                "tt_ranks: typing.Sequence[int], order: int, n_probes: int, target_bytes: int, n_tangent: int = 1, "
                "n_shards: int = 1, dtype: numpy.typing.DTypeLike = 'float64', block_rows: int = 64) -> int"),
        "The largest J^T chunk whose peak memory (inputs, workspace, gradients) stays within target_bytes.\n"
        "Raises ValueError stating the bytes needed when even one block does not fit.");
  m.def(
      "num_threads", [] { return ExecutionSpace().concurrency(); },
      "Threads of the host execution space Kokkos was initialized with.");
  m.def("_array_address", &array_address, "obj"_a, "dtype"_a, "ndim"_a,
        "Testing aid: the address a call reads obj from (the array's own when no copy is made).");
}
