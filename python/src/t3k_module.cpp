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
#include "t3k/algorithms/t3_svd.hpp"
#include "t3k/algorithms/tangent_probe_derivatives.hpp"
#include "t3k/algorithms/to_dense.hpp"
#include "t3k/core/chunk_size.hpp"
#include "t3k/core/error.hpp"
#include "t3k/core/orthogonal_frame.hpp"
#include "t3k/core/t3_variation.hpp"
#include "t3k/core/tucker_tensor_train.hpp"
#include "t3k/optimizers/adam.hpp"
#include "t3k/optimizers/gradient_descent.hpp"
#include "t3k/optimizers/mc_sgd.hpp"
#include "t3k/optimizers/newton_cg.hpp"
#include "t3k/optimizers/planted_problem.hpp"
#include "t3k/version.hpp"

// The optimizer key tables of `t3k fit` (compiled into the module): fit's options, their checks and help(t3k.fit)
// come from the same tables as the configuration file's.
#include "drivers/optimizer_keys.hpp"

#ifdef T3K_PYTHON_HDF5
#include "t3k/io/file_safety.hpp"
#include "t3k/io/hdf5_io.hpp"
#endif

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
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

// Recursive: a fit's callback runs on the launching thread with the lock held and may call t3k functions itself.
std::recursive_mutex& kernel_mutex() {
  static std::recursive_mutex mutex;
  return mutex;
}

/// Runs `f` (which must not touch Python objects) with the GIL released, one call at a time, and waits for its
/// kernels: the library's calls are asynchronous, and NumPy reads the results right after.
template <class F>
void run_kernels(F&& f) {
  nb::gil_scoped_release release;
  std::lock_guard<std::recursive_mutex> lock(kernel_mutex());
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

// ---------------------------------------------------------------------------------------------- t3_svd, inner

std::vector<long long> rank_caps(nb::handle h, std::string const& where, std::string const& name) {
  std::vector<long long> out;
  if (h.is_none()) return out;
  for (std::size_t v : size_list_arg(h, where, name)) out.push_back(static_cast<long long>(v));
  return out;
}

nb::tuple t3_svd(PyTuckerTensorTrain const& x, nb::handle max_tucker_ranks, nb::handle max_tt_ranks, double rtol) {
  std::string const where = "t3k.t3_svd";
  t3k::T3SvdOptions options;
  options.max_tucker_ranks = rank_caps(max_tucker_ranks, where, "max_tucker_ranks");
  options.max_tt_ranks = rank_caps(max_tt_ranks, where, "max_tt_ranks");
  options.rtol = rtol;
  return dispatch(x.dtype, [&](auto zero) {
    using Scalar = decltype(zero);
    auto const t3 = x.view<Scalar>();
    t3k::T3SvdResult<Scalar, HostMemory> result;
    run_kernels([&] { result = t3k::t3_svd(ExecutionSpace(), t3, options); });
    auto arrays = [&](std::vector<std::vector<Scalar>> const& values) {
      nb::list out;
      for (auto const& v : values) {
        Output o = new_array({v.size()}, x.dtype);
        if (!v.empty()) std::memcpy(o.data, v.data(), v.size() * sizeof(Scalar));
        out.append(o.array);
      }
      return out;
    };
    return nb::make_tuple(t3_from_library(result.t3, x.dtype), arrays(result.tucker_singular_values),
                          arrays(result.tt_singular_values));
  });
}

double inner_product(PyTuckerTensorTrain const& x, PyTuckerTensorTrain const& y) {
  if (x.dtype != y.dtype) {
    fail(std::string("t3k.inner_product: x is ") + dtype_name(x.dtype) + " but y is " + dtype_name(y.dtype));
  }
  return dispatch(x.dtype, [&](auto zero) {
    using Scalar = decltype(zero);
    auto const a = x.view<Scalar>();
    auto const b = y.view<Scalar>();
    Scalar result = 0;
    run_kernels([&] { result = t3k::inner_product(ExecutionSpace(), a, b); });
    return double(result);
  });
}

// ------------------------------------------------------------------------------------------------------- fit

/// A fitting problem on NumPy arrays: ww[i], pp[i] (W, N_i), targets[i] (W, K+1, N_i), optional weights (W), and
/// an optional validation set (a problem of the same mode sizes and order).
struct PyFittingProblem {
  Dtype dtype = Dtype::float64;
  std::vector<Array> ww, pp, targets;
  std::vector<Array> weights;  ///< empty or one array
  std::shared_ptr<PyFittingProblem const> validation;

  template <class Scalar>
  t3k::FittingProblem<Scalar, HostMemory> view() const {
    t3k::FittingProblem<Scalar, HostMemory> p;
    for (auto const& a : ww) p.ww.push_back(matrix_view<Scalar>(a));
    for (auto const& a : pp) p.pp.push_back(matrix_view<Scalar>(a));
    for (auto const& a : targets) p.targets.push_back(tensor3_view<Scalar>(a));
    if (!weights.empty()) {
      p.weights = Kokkos::View<Scalar*, HostMemory>(mutable_data<Scalar>(weights[0]), weights[0].shape(0));
    }
    p.order = targets.empty() ? 0 : targets[0].shape(1) - 1;
    if (validation)
      p.validation = std::make_shared<t3k::FittingProblem<Scalar, HostMemory> const>(validation->view<Scalar>());
    return p;
  }
  std::size_t order() const { return targets.empty() ? 0 : targets[0].shape(1) - 1; }
  std::size_t n_probes() const { return ww.empty() ? 0 : ww[0].shape(0); }
  std::vector<std::size_t> mode_sizes() const {
    std::vector<std::size_t> out;
    for (auto const& a : ww) out.push_back(a.shape(1));
    return out;
  }
};

/// A library problem (and its validation set) copied into NumPy arrays. Holds the GIL.
template <class Scalar>
PyFittingProblem problem_from_library(t3k::FittingProblem<Scalar, HostMemory> const& p, Dtype dt) {
  PyFittingProblem out;
  out.dtype = dt;
  auto keep = [&](auto const& view) { return nb::cast<Array>(numpy_copy(view, dt), false); };
  for (auto const& v : p.ww) out.ww.push_back(keep(v));
  for (auto const& v : p.pp) out.pp.push_back(keep(v));
  for (auto const& v : p.targets) out.targets.push_back(keep(v));
  if (p.weights.data() != nullptr) out.weights.push_back(keep(p.weights));
  if (p.validation) out.validation = std::make_shared<PyFittingProblem const>(problem_from_library(*p.validation, dt));
  return out;
}

PyFittingProblem make_problem(nb::handle ww, nb::handle pp, nb::handle targets, nb::handle weights, nb::handle dtype,
                              PyFittingProblem const* validation) {
  std::string const where = "t3k.FittingProblem";
  PyFittingProblem p;
  p.dtype = inferred_dtype(dtype, ww, where);
  p.ww = as_array_list(ww, p.dtype, 2, where, "ww", "(W x N_i)");
  p.pp = as_array_list(pp, p.dtype, 2, where, "pp", "(W x N_i)");
  p.targets = as_array_list(targets, p.dtype, 3, where, "targets", "(W x (K+1) x N_i)");
  if (!weights.is_none()) p.weights.push_back(as_array(weights, p.dtype, 1, where, "weights", "(W)"));
  if (p.ww.empty()) fail(where + ": ww must hold one (W x N_i) array per mode, got none");
  if (p.targets.empty() || p.targets[0].shape(1) == 0) {
    fail(where + ": targets must hold one (W x (K+1) x N_i) array per mode with K + 1 >= 1");
  }
  auto const shapes = p.mode_sizes();
  dispatch(p.dtype, [&](auto zero) { t3k::impl::check_problem(where, p.view<decltype(zero)>(), shapes); });
  if (validation) {
    auto const theirs = validation->mode_sizes();
    if (validation->dtype != p.dtype || theirs != shapes || validation->order() != p.order()) {
      fail(where + ": validation must be a FittingProblem of the same dtype, mode sizes and order (" +
           dtype_name(p.dtype) + ", N = " + t3k::impl::shape_string(shapes) + ", K = " + std::to_string(p.order()) +
           "), got " + dtype_name(validation->dtype) + ", N = " + t3k::impl::shape_string(theirs) +
           ", K = " + std::to_string(validation->order()));
    }
    if (validation->validation) fail(where + ": validation must be a problem without a validation set of its own");
    p.validation = std::make_shared<PyFittingProblem const>(*validation);
  }
  return p;
}

/// The problem without `count` (or round(fraction * W)) probes drawn by seed, which become its validation set.
PyFittingProblem hold_out(PyFittingProblem const& problem, nb::handle fraction, nb::handle count, nb::handle seed) {
  std::string const where = "t3k.FittingProblem.hold_out";
  if (fraction.is_none() == count.is_none()) fail(where + ": give exactly one of fraction and count");
  std::size_t const w = problem.n_probes();
  std::size_t n = 0;
  if (!count.is_none()) {
    n = size_arg(count, where, "count", 1);
  } else {
    double f = 0;
    if (nb::isinstance<nb::bool_>(fraction) || !nb::try_cast(fraction, f) || !(f > 0 && f < 1)) {
      fail(where + ": fraction must be a number in (0, 1), got " + text_of(nb::repr(fraction)));
    }
    n = std::size_t(std::llround(f * double(w)));  // as validation.fraction of `t3k fit`
  }
  if (n == 0 || n >= w) {
    fail(where + ": holding out " + std::to_string(n) + " of " + std::to_string(w) +
         " probes leaves none to validate or none to fit (need 1 <= count < W)");
  }
  std::size_t const s = size_arg(seed, where, "seed");
  return dispatch(problem.dtype, [&](auto zero) {
    using Scalar = decltype(zero);
    auto const p = problem.view<Scalar>();
    t3k::FittingProblem<Scalar, HostMemory> train;
    run_kernels([&] { train = t3k::hold_out(ExecutionSpace(), p, n, std::uint64_t(s)); });
    return problem_from_library(train, problem.dtype);
  });
}

PyFittingProblem planted_problem(PyTuckerTensorTrain const& truth, nb::handle n_probes, nb::handle order, double noise,
                                 nb::handle seed) {
  std::string const where = "t3k.FittingProblem.planted";
  std::size_t const w = size_arg(n_probes, where, "n_probes", 1);
  std::size_t const k = size_arg(order, where, "order");
  std::size_t const s = size_arg(seed, where, "seed");
  return dispatch(truth.dtype, [&](auto zero) {
    using Scalar = decltype(zero);
    auto const x = truth.view<Scalar>();
    t3k::FittingProblem<Scalar, HostMemory> p;
    run_kernels([&] { p = t3k::make_planted_problem(ExecutionSpace(), x, w, k, noise, std::uint64_t(s)); });
    return problem_from_library(p, truth.dtype);
  });
}

using t3k::fit::KeyKind;
using t3k::fit::KeyValue;

std::string number_text(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", v);
  return buffer;
}

/// The values a key allows, as help(t3k.fit) and the error messages state them.
template <class Options>
std::string range_text(t3k::fit::OptionKey<Options> const& k) {
  switch (k.kind) {
    case KeyKind::real:
      if (std::isinf(k.max)) return std::string(k.min_open ? "> " : ">= ") + number_text(k.min);
      return std::string("in ") + (k.min_open ? "(" : "[") + number_text(k.min) + ", " + number_text(k.max) +
             (k.max_open ? ")" : "]");
    case KeyKind::integer:
      if (k.integer_max == std::numeric_limits<std::uint64_t>::max()) return ">= " + std::to_string(k.integer_min);
      return "in [" + std::to_string(k.integer_min) + ", " + std::to_string(k.integer_max) + "]";
    case KeyKind::boolean:
      return "True or False";
    case KeyKind::choice: {
      std::string out = "one of ";
      for (std::size_t c = 0; c < k.choices.size(); ++c) out += (c ? ", '" : "'") + k.choices[c] + "'";
      return out;
    }
  }
  return "";
}

char const* kind_name(KeyKind kind) {
  switch (kind) {
    case KeyKind::real:
      return "float";
    case KeyKind::integer:
      return "int";
    case KeyKind::boolean:
      return "bool";
    case KeyKind::choice:
      return "str";
  }
  return "";
}

nb::object python_value(KeyValue const& v) {
  return std::visit([](auto const& value) { return nb::cast(value); }, v);
}

/// A Python value for key `k`, checked against its kind and range as the configuration file's value is.
/// **Throws:** ValueError naming the option, the values it allows and the value given.
template <class Options>
KeyValue option_value(std::string const& where, t3k::fit::OptionKey<Options> const& k, nb::handle v) {
  auto refuse = [&] { fail(where + ": " + k.key + " must be " + range_text(k) + ", got " + text_of(nb::repr(v))); };
  switch (k.kind) {
    case KeyKind::real: {
      if (nb::isinstance<nb::bool_>(v) || nb::isinstance<nb::str>(v)) refuse();
      nb::object f = nb::steal(PyNumber_Float(v.ptr()));
      if (!f.is_valid()) {
        PyErr_Clear();
        refuse();
      }
      double const x = PyFloat_AsDouble(f.ptr());
      bool const below = k.min_open ? !(x > k.min) : !(x >= k.min);
      bool const above = k.max_open ? !(x < k.max) : !(x <= k.max);
      if (below || above) refuse();
      return x;
    }
    case KeyKind::integer: {
      if (nb::isinstance<nb::bool_>(v) || !PyIndex_Check(v.ptr())) refuse();
      nb::object index = nb::steal(PyNumber_Index(v.ptr()));
      if (!index.is_valid()) throw nb::python_error();
      unsigned long long const x = PyLong_AsUnsignedLongLong(index.ptr());
      if (PyErr_Occurred()) {
        PyErr_Clear();
        refuse();
      }
      if (x < k.integer_min || x > k.integer_max) refuse();
      return std::uint64_t(x);
    }
    case KeyKind::boolean:
      if (!nb::isinstance<nb::bool_>(v)) refuse();
      return nb::cast<bool>(v);
    case KeyKind::choice: {
      if (!nb::isinstance<nb::str>(v)) refuse();
      std::string const word = nb::cast<std::string>(v);
      if (std::find(k.choices.begin(), k.choices.end(), word) == k.choices.end()) refuse();
      return word;
    }
  }
  refuse();
  return {};
}

/// fit's keywords beyond the optimizer's keys: early stopping on the validation set (validation.patience of the
/// configuration file) and a rank continuation (model.continuation, with the maximum ranks of model's {start, max}).
std::vector<std::string> fit_extra_keys() {
  std::vector<std::string> out{"validation_patience", "max_tucker_ranks", "max_tt_ranks"};
  for (auto const& k : t3k::fit::continuation_keys()) out.push_back(k.key);
  return out;
}

/// The options of one optimizer from fit's keyword arguments; defaults are the option struct's own.
template <class Options>
Options parse_options(std::string const& where, std::string const& optimizer, nb::dict given) {
  Options options{};
  auto const& keys = t3k::fit::all_keys<Options>();
  auto const extras = fit_extra_keys();
  for (auto item : given) {
    std::string const key = nb::cast<std::string>(nb::str(item.first));
    if (std::find(extras.begin(), extras.end(), key) != extras.end()) continue;
    auto it = std::find_if(keys.begin(), keys.end(), [&](auto const& k) { return key == k.key; });
    if (it == keys.end()) {
      std::string names;
      for (auto const& k : keys) names += (names.empty() ? "" : ", ") + std::string(k.key);
      for (auto const& k : extras) names += ", " + k;
      fail(where + ": " + optimizer + " has no option '" + key + "'; its options are " + names);
    }
    it->set(options, option_value(where, *it, item.second));
  }
  return options;
}

/// A maximum rank keyword: one integer (every mode; for TT ranks every interior bond, the boundary ones 1) or a
/// sequence of `count` integers.
std::vector<std::size_t> max_ranks_arg(nb::handle h, std::size_t count, bool tt, std::string const& where,
                                       std::string const& name) {
  if (PyIndex_Check(h.ptr()) && !nb::isinstance<nb::bool_>(h)) {
    std::size_t const m = size_arg(h, where, name, 1);
    std::vector<std::size_t> out(count, m);
    if (tt) out.front() = out.back() = 1;
    return out;
  }
  auto out = size_list_arg(h, where, name);
  if (out.size() != count) {
    fail(where + ": " + name + " must be one integer or " + std::to_string(count) + " of them, got " +
         std::to_string(out.size()));
  }
  return out;
}

/// Fills `o` (validation_patience, continuation) from fit's extra keywords.
void parse_fit_extras(std::string const& where, nb::dict given, PyFittingProblem const& problem,
                      PyTuckerTensorTrain const& x0, t3k::OptimizerOptions& o) {
  auto& c = o.continuation;
  auto const& keys = t3k::fit::continuation_keys();
  std::string continuation_key;
  for (auto item : given) {
    std::string const key = nb::cast<std::string>(nb::str(item.first));
    if (key == "validation_patience") {
      o.validation_patience = size_arg(item.second, where, key);
      if (o.validation_patience > 0 && !problem.validation) {
        fail(where +
             ": validation_patience needs a problem with a validation set (FittingProblem.hold_out, or "
             "FittingProblem(..., validation=...))");
      }
    } else if (key == "max_tucker_ranks") {
      c.max_tucker_ranks = max_ranks_arg(item.second, x0.n_modes(), false, where, key);
    } else if (key == "max_tt_ranks") {
      c.max_tt_ranks = max_ranks_arg(item.second, x0.n_modes() + 1, true, where, key);
    } else {
      auto it = std::find_if(keys.begin(), keys.end(), [&](auto const& k) { return key == k.key; });
      if (it == keys.end()) continue;
      it->set(c, option_value(where, *it, item.second));
      continuation_key = key;
    }
  }
  if (c.max_tucker_ranks.empty() && c.max_tt_ranks.empty()) {
    if (!continuation_key.empty()) {
      fail(where + ": " + continuation_key + " is an option of a rank continuation: give max_tucker_ranks or " +
           "max_tt_ranks too");
    }
    return;
  }
  // One of them given: the other ranks stay x0's.
  if (c.max_tucker_ranks.empty()) {
    for (auto const& u : x0.tucker) c.max_tucker_ranks.push_back(u.shape(0));
  }
  if (c.max_tt_ranks.empty()) {
    for (auto const& g : x0.tt) c.max_tt_ranks.push_back(g.shape(0));
    c.max_tt_ranks.push_back(x0.tt.back().shape(2));
  }
}

/// For help(t3k.fit) and docs: {optimizer: [(key, type, default, allowed values), ...]}, the common keys under "".
nb::dict optimizer_keys() {
  nb::dict out;
  auto describe_keys = [](auto const& keys, auto const& defaults) {
    nb::list list;
    for (auto const& k : keys) {
      list.append(nb::make_tuple(k.key, kind_name(k.kind), python_value(k.get(defaults)), range_text(k)));
    }
    return list;
  };
  out[""] = describe_keys(t3k::fit::common_keys(), t3k::OptimizerOptions{});
  out["continuation"] = describe_keys(t3k::fit::continuation_keys(), t3k::RankContinuation{});
  for (auto const& name : t3k::fit::optimizer_names()) {
    auto const choice = t3k::fit::default_options(name);
    std::visit(
        [&](auto const& defaults) {
          using Options = std::decay_t<decltype(defaults)>;
          out[name.c_str()] = describe_keys(t3k::fit::optimizer_table<Options>().keys, defaults);
        },
        *choice);
  }
  return out;
}

nb::dict record_dict(t3k::IterationRecord const& r) {
  nb::dict d;
  d["iteration"] = r.iteration;
  d["loss"] = r.loss;
  d["relative_residual"] = r.relative_residual;
  d["gradient_norm"] = r.gradient_norm;
  d["step"] = r.step;
  d["elapsed_seconds"] = r.elapsed_seconds;
  d["chunk_size"] = r.chunk_size;
  d["minibatch_loss"] = r.minibatch_loss;
  d["validation_relative_residual"] = r.validation_relative_residual;
  d["rank_stage"] = r.rank_stage;
  return d;
}

/// The optimizer whose options `o` holds.
template <class Scalar, class Options>
t3k::FitResult<Scalar, HostMemory> optimize(t3k::FittingProblem<Scalar, HostMemory> const& p,
                                            t3k::TuckerTensorTrain<Scalar, HostMemory> const& x, Options const& o) {
  ExecutionSpace const space;
  if constexpr (std::is_same_v<Options, t3k::NewtonCgOptions>) {
    return t3k::newton_cg(space, p, x, o);
  } else if constexpr (std::is_same_v<Options, t3k::GradientDescentOptions>) {
    return t3k::gradient_descent(space, p, x, o);
  } else if constexpr (std::is_same_v<Options, t3k::McSgdOptions>) {
    return t3k::mc_sgd(space, p, x, o);
  } else {
    static_assert(std::is_same_v<Options, t3k::AdamOptions>, "optimize: an optimizer without a case here");
    return t3k::adam(space, p, x, o);
  }
}

/// Runs one optimizer. Between iterations (GIL held): pending signals are handled (Ctrl-C raises
/// KeyboardInterrupt out of fit) and the callback is called; a true return value or StopIteration stops the fit at
/// the point just recorded (through the optimizers' stop_when).
template <class Scalar, class Options>
nb::dict run_fit(PyFittingProblem const& problem, PyTuckerTensorTrain const& x0, Options options, nb::handle callback) {
  auto const p = problem.view<Scalar>();
  auto const x = x0.view<Scalar>();
  bool stop = false;
  options.common.callback = [&](t3k::IterationRecord const& rec) {
    nb::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
    if (callback.is_none()) return;
    try {
      nb::object answer = callback(record_dict(rec));
      int const truth = PyObject_IsTrue(answer.ptr());
      if (truth < 0) throw nb::python_error();
      stop = truth == 1;
    } catch (nb::python_error& e) {
      if (!e.matches(PyExc_StopIteration)) throw;
      stop = true;
    }
  };
  options.common.stop_when = [&](t3k::IterationRecord const&) { return stop; };
  t3k::FitResult<Scalar, HostMemory> result;
  run_kernels([&] { result = optimize(p, x, options); });
  if (result.reason == t3k::stop_request_reason) {
    result.reason = "stopped by the callback at iteration " + std::to_string(result.history.back().iteration);
  }
  nb::dict out;
  out["x"] = nb::cast(t3_from_library(result.x, x0.dtype));
  nb::list history;
  for (auto const& r : result.history) history.append(record_dict(r));
  out["history"] = history;
  out["converged"] = result.converged;
  out["reason"] = result.reason;
  out["chunk_size"] = result.chunk_size;
  out["notes"] = nb::cast(result.notes);
  out["validation_relative_residual"] = result.validation_relative_residual;
  return out;
}

nb::dict fit(PyFittingProblem const& problem, PyTuckerTensorTrain const& x0, std::string const& optimizer,
             nb::handle chunk_size, nb::handle callback, nb::dict options) {
  std::string const where = "t3k.fit";
  if (problem.dtype != x0.dtype) {
    fail(where + ": the problem is " + dtype_name(problem.dtype) + " but x0 is " + dtype_name(x0.dtype));
  }
  if (!callback.is_none() && !PyCallable_Check(callback.ptr())) {
    fail(where + ": callback must be None or callable, got " + describe(callback));
  }
  auto const chunk = chunk_size_arg(chunk_size, where);
  auto const choice = t3k::fit::default_options(optimizer);
  if (!choice) {
    std::string names;
    for (auto const& n : t3k::fit::optimizer_names()) names += (names.empty() ? "'" : ", '") + n + "'";
    fail(where + ": optimizer must be one of " + names + ", got '" + optimizer + "'");
  }
  return std::visit(
      [&](auto const& defaults) {
        using Options = std::decay_t<decltype(defaults)>;
        Options o = parse_options<Options>(where, optimizer, options);
        parse_fit_extras(where, options, problem, x0, o.common);
        o.common.chunk_size = chunk;
        return dispatch(x0.dtype, [&](auto zero) { return run_fit<decltype(zero)>(problem, x0, o, callback); });
      },
      *choice);
}

// ------------------------------------------------------------------------------------------------ load, save

#ifdef T3K_PYTHON_HDF5
std::string path_arg(nb::handle path) {
  nb::object text = nb::module_::import_("os").attr("fsdecode")(path);
  return nb::cast<std::string>(text);
}

void save(nb::handle path, PyTuckerTensorTrain const& x, bool overwrite) {
  std::string const file = path_arg(path);
  if (!overwrite && nb::cast<bool>(nb::module_::import_("os").attr("path").attr("lexists")(file))) {
    PyErr_SetString(PyExc_FileExistsError,
                    ("t3k.save: " + file + " exists; pass overwrite=True to replace it").c_str());
    throw nb::python_error();
  }
  // Files hold float64 (docs/file-format.md): a float32 T3 is widened on the way.
  PyTuckerTensorTrain wide = x;
  if (x.dtype != Dtype::float64) {
    wide.dtype = Dtype::float64;
    wide.tucker = as_array_list(numpy_views(x.tucker, nb::find(&x)), Dtype::float64, 2, "t3k.save", "x", "");
    wide.tt = as_array_list(numpy_views(x.tt, nb::find(&x)), Dtype::float64, 3, "t3k.save", "x", "");
  }
  auto const t3 = wide.view<double>();
  nb::gil_scoped_release release;
  t3k::io::output_target(file, "path");
  t3k::io::Writer writer(file);
  writer.write_t3(t3);
  t3k::io::RootAttributes attributes;
  attributes.d = std::int64_t(t3.n_modes());
  writer.write_root_attributes(attributes);
  writer.commit();
}

PyTuckerTensorTrain load(nb::handle path, nb::handle dtype) {
  std::string const file = path_arg(path);
  Dtype const dt = dtype_arg(dtype, "t3k.load");
  t3k::io::HostT3 t3;
  {
    nb::gil_scoped_release release;
    std::lock_guard<std::recursive_mutex> lock(kernel_mutex());  // the reader allocates Views
    t3k::io::require_regular_input(file, "path");
    t3 = t3k::io::Reader(file).read_t3();
  }
  PyTuckerTensorTrain x = t3_from_library(t3, Dtype::float64);
  if (dt == Dtype::float64) return x;
  return make_t3(numpy_views(x.tucker, nb::none()), numpy_views(x.tt, nb::none()), numpy_dtype(dt));
}
#endif

/// Benchmark aid (perf/python_transpose_overhead.py): the seconds of each of `repeats` calls of the C++
/// probe_derivatives_transpose on these arrays' Views, timed in C++ around the call and its fence, without any
/// Python in between: the reference that t3k.probe_derivatives_transpose's own time is compared with.
std::vector<double> time_transpose(PyOrthogonalFrame const& frame, nb::handle ww, nb::handle pp, nb::handle residuals,
                                   bool sum_over_probes, nb::handle chunk_size, nb::handle repeats) {
  std::string const where = "t3k._time_transpose";
  t3k::TransposeOptions options;
  options.sum_over_probes = sum_over_probes;
  options.chunk_size = chunk_size_arg(chunk_size, where);
  std::size_t const n = size_arg(repeats, where, "repeats", 1);
  auto const w_arrays = as_array_list(ww, frame.dtype, 2, where, "ww", "(W x N_i)");
  auto const p_arrays = as_array_list(pp, frame.dtype, 2, where, "pp", "(W x N_i)");
  auto const r_arrays = as_array_list(residuals, frame.dtype, 3, where, "residuals", "(W x (K+1) x N_i)");
  return dispatch(frame.dtype, [&](auto zero) {
    using Scalar = decltype(zero);
    std::vector<InputView<Scalar, Scalar const***>> rv;
    for (auto const& a : r_arrays) {
      rv.emplace_back(static_cast<Scalar const*>(a.data()), a.shape(0), a.shape(1), a.shape(2));
    }
    auto const f = frame.view<Scalar>();
    auto const wv = probe_views<Scalar>(w_arrays);
    auto const pv = probe_views<Scalar>(p_arrays);
    std::vector<double> seconds;
    run_kernels([&] {
      for (std::size_t k = 0; k < n; ++k) {
        auto const start = std::chrono::steady_clock::now();
        auto const out = t3k::probe_derivatives_transpose(ExecutionSpace(), f, wv, pv, rv, options);
        ExecutionSpace().fence();
        seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
    });
    return seconds;
  });
}

bool kokkos_owned = false;

void finalize_kokkos() {
  std::lock_guard<std::recursive_mutex> lock(kernel_mutex());
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
#ifdef T3K_PYTHON_HDF5
    } catch (t3k::io::FileError const& e) {
      PyErr_SetString(PyExc_OSError, e.what());
#endif
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
  m.def("inner_product", &inner_product, "x"_a, "y"_a,
        "<X, Y>, the Frobenius inner product of two T3s of the same shape, from their cores.");
  m.def("t3_svd", &t3_svd, "x"_a, "max_tucker_ranks"_a.none() = nb::none(), "max_tt_ranks"_a.none() = nb::none(),
        "rtol"_a = 0.0,
        nb::sig("def t3_svd(x: TuckerTensorTrain, max_tucker_ranks: typing.Sequence[int] | None = None, "
                "max_tt_ranks: typing.Sequence[int] | None = None, rtol: float = 0.0) -> "
                "tuple[TuckerTensorTrain, list[numpy.ndarray], list[numpy.ndarray]]"),
        "T3-SVD: truncates X by sequential SVDs to at most max_tucker_ranks (d entries) and max_tt_ranks (d + 1\n"
        "entries, boundary entries ignored), keeping singular values above rtol * the largest of each unfolding.\n"
        "Returns (the truncated T3, the Tucker singular values per mode, the TT singular values per interior bond),\n"
        "every singular value computed, before truncation. None: no cap.");

  nb::class_<PyFittingProblem>(
      m, "FittingProblem",
      "The data of a fit (docs/math.md): probe vectors ww[i] and directions pp[i] of shape (W, N_i), target jets\n"
      "targets[i] of shape (W, K+1, N_i) and optional per-probe weights (W). The loss is\n"
      "0.5 sum_s c_s sum_i sum_k ||z_i^(k)(X; w_s, p_s) - y_{s,i}^(k)||^2. Arrays are held as T3 cores are.")
      .def(
          "__init__",
          [](PyFittingProblem* self, nb::handle ww, nb::handle pp, nb::handle targets, nb::handle weights,
             nb::handle dtype, PyFittingProblem const* validation) {
            new (self) PyFittingProblem(make_problem(ww, pp, targets, weights, dtype, validation));
          },
          "ww"_a, "pp"_a, "targets"_a, "weights"_a.none() = nb::none(), "dtype"_a.none() = nb::none(),
          "validation"_a.none() = nb::none(),
          nb::sig("def __init__(self, ww: typing.Sequence[numpy.typing.ArrayLike], "
                  "pp: typing.Sequence[numpy.typing.ArrayLike], targets: typing.Sequence[numpy.typing.ArrayLike], "
                  "weights: numpy.typing.ArrayLike | None = None, dtype: numpy.typing.DTypeLike = None, "
                  "validation: FittingProblem | None = None) -> None"),
          "A problem from its arrays; K is targets[0].shape[1] - 1. dtype: by default float32 when ww[0] is\n"
          "float32, else float64. validation: held-out probes of the same dtype, mode sizes and order (as\n"
          "validation.file of `t3k fit`), whose relative residual fit records and validation_patience stops on.\n"
          "Raises ValueError naming the array and both shapes when they do not fit.")
      .def("hold_out", &hold_out, "fraction"_a.none() = nb::none(), "count"_a.none() = nb::none(), "seed"_a = 0,
           nb::sig("def hold_out(self, fraction: float | None = None, count: int | None = None, seed: int = 0) "
                   "-> FittingProblem"),
           "A new problem without `count` probes (or round(fraction * W)), drawn by seed, which become its\n"
           "validation set: the same probes as validation.fraction / validation.count of `t3k fit` with that\n"
           "seed. Give exactly one of fraction and count.")
      .def_prop_ro(
          "validation",
          [](PyFittingProblem const& p) -> nb::object {
            if (!p.validation) return nb::none();
            return nb::cast(PyFittingProblem(*p.validation));
          },
          nb::for_getter(nb::sig("def validation(self) -> FittingProblem | None")),
          "The validation set (a FittingProblem sharing its arrays), or None.")
      .def_static("planted", &planted_problem, "truth"_a, "n_probes"_a, "order"_a, "noise"_a = 0.0, "seed"_a = 0,
                  nb::sig("def planted(truth: TuckerTensorTrain, n_probes: int, order: int, noise: float = 0.0, "
                          "seed: int = 0) -> FittingProblem"),
                  "A synthetic problem with a known answer: random probe pairs, targets the probe jets of truth\n"
                  "plus noise * rms(jets) * normal noise (the planted problems of `t3k fit`).")
      .def_prop_ro(
          "ww", [](PyFittingProblem const& p) { return numpy_views(p.ww, nb::find(&p)); },
          nb::for_getter(nb::sig("def ww(self) -> list[numpy.ndarray]")), "(W, N_i) per mode, read-only views.")
      .def_prop_ro(
          "pp", [](PyFittingProblem const& p) { return numpy_views(p.pp, nb::find(&p)); },
          nb::for_getter(nb::sig("def pp(self) -> list[numpy.ndarray]")), "(W, N_i) per mode, read-only views.")
      .def_prop_ro(
          "targets", [](PyFittingProblem const& p) { return numpy_views(p.targets, nb::find(&p)); },
          nb::for_getter(nb::sig("def targets(self) -> list[numpy.ndarray]")),
          "(W, K+1, N_i) per mode, read-only views.")
      .def_prop_ro(
          "weights",
          [](PyFittingProblem const& p) -> nb::object {
            if (p.weights.empty()) return nb::none();
            return numpy_view(p.weights[0], nb::find(&p));
          },
          nb::for_getter(nb::sig("def weights(self) -> numpy.ndarray | None")), "(W,) or None (all ones).")
      .def_prop_ro("order", &PyFittingProblem::order, "K, the jet order.")
      .def_prop_ro("n_probes", &PyFittingProblem::n_probes, "W.")
      .def_prop_ro(
          "dtype", [](PyFittingProblem const& p) { return numpy_dtype(p.dtype); },
          nb::for_getter(nb::sig("def dtype(self) -> numpy.dtype")), "float32 or float64.");

  m.def("_fit", &fit, "problem"_a, "x0"_a, "optimizer"_a, "chunk_size"_a.none(), "callback"_a.none(), "options"_a,
        "The optimizers; t3k.fit wraps this (see help(t3k.fit)).");
  m.def("_optimizer_keys", &optimizer_keys,
        "The optimizer options as the YAML schema defines them: {optimizer: [(key, type, default, allowed)]},\n"
        "the keys every optimizer takes under ''.");
#ifdef T3K_PYTHON_HDF5
  m.def("save", &save, "path"_a, "x"_a, "overwrite"_a = false,
        nb::sig("def save(path: str | os.PathLike, x: TuckerTensorTrain, overwrite: bool = False) -> None"),
        "Writes X as /t3 (docs/file-format.md, float64) with the root attribute d, the layout `t3k fit` writes\n"
        "model.h5 in and `t3k jets` and model.init.file read. Atomic: a temporary file renamed onto path.\n"
        "Raises FileExistsError when path exists and overwrite is False; OSError when it cannot be written.");
  m.def("load", &load, "path"_a, "dtype"_a = "float64",
        nb::sig("def load(path: str | os.PathLike, dtype: numpy.typing.DTypeLike = 'float64') -> TuckerTensorTrain"),
        "Reads /t3 of an HDF5 file (docs/file-format.md), e.g. the model.h5 of `t3k fit`. Raises OSError\n"
        "naming the file and the dataset when it is missing, unreadable or of the wrong shape.");
  m.attr("has_hdf5") = true;
#else
  m.attr("has_hdf5") = false;
#endif
  m.def(
      "num_threads", [] { return ExecutionSpace().concurrency(); },
      "Threads of the host execution space Kokkos was initialized with.");
  m.def("_time_transpose", &time_transpose, "frame"_a, "ww"_a, "pp"_a, "residuals"_a, "sum_over_probes"_a = true,
        "chunk_size"_a.none() = nb::none(), "repeats"_a = 1,
        "Benchmark aid: seconds of each C++ probe_derivatives_transpose call, timed in C++.");
  m.def("_array_address", &array_address, "obj"_a, "dtype"_a, "ndim"_a,
        "Testing aid: the address a call reads obj from (the array's own when no copy is made).");
}
