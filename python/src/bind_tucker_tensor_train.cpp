/// \file bind_tucker_tensor_train.cpp
/// Python bindings of the Tucker tensor train: construction (from arrays, random), to_dense, norm, t3_svd,
/// inner_product and the manifold dimension.

#include "bindings.hpp"
#include "objects.hpp"
#include "sharing_arg.hpp"

#include "t3k/algorithms/manifold_dimension.hpp"
#include "t3k/algorithms/random_t3.hpp"
#include "t3k/algorithms/t3_from_dense.hpp"
#include "t3k/algorithms/t3_linear_algebra.hpp"
#include "t3k/algorithms/t3_svd.hpp"
#include "t3k/algorithms/to_dense.hpp"

#include <cstring>
#include <string>
#include <vector>

namespace t3k_python {
namespace {

PyTuckerTensorTrain random_t3(nb::handle shape, nb::handle tucker_ranks, nb::handle tt_ranks, nb::handle seed,
                              nb::handle dtype) {
  std::string const where = "t3k.TuckerTensorTrain.random";
  auto const big_n = size_list_arg(shape, where, "shape");
  auto const n = size_list_arg(tucker_ranks, where, "tucker_ranks");
  auto const r = size_list_arg(tt_ranks, where, "tt_ranks");
  std::size_t const s = size_arg(seed, where, "seed");
  Dtype const dt = dtype_arg(dtype, where);
  // The library's cores and their copy into the module's arrays.
  require_memory(times(t3_bytes(big_n, n, r, dt), 2), where, "a T3 of this shape, tucker_ranks and tt_ranks");
  return dispatch(dt, [&](auto zero) {
    using Scalar = decltype(zero);
    t3k::TuckerTensorTrain<Scalar, Memory> x;
    run_kernels([&] { x = t3k::random_t3<Scalar>(ExecutionSpace(), big_n, n, r, std::uint64_t(s)); });
    return t3_from_library(x, dt);
  });
}

nb::object to_dense(PyTuckerTensorTrain const& x) {
  return dispatch(x.dtype, [&](auto zero) {
    using Scalar = decltype(zero);
    auto const t3 = x.view<Scalar>();
    require_memory(times(array_bytes(t3.mode_shapes(), x.dtype), 2), "t3k.TuckerTensorTrain.to_dense",
                   "the dense tensor of shape " + t3k::impl::shape_string(t3.mode_shapes()));
    Kokkos::View<Scalar*, Memory> flat;
    run_kernels([&] { flat = t3k::to_dense(ExecutionSpace(), t3); });
    return array_copy(flat, x.dtype, t3.mode_shapes());
  });
}

/// manifold_dimension of these lists, with the sharing `sharing` (None: unshared).
std::size_t dimension_of(std::string const& where, std::vector<std::size_t> const& big_n,
                         std::vector<std::size_t> const& n, std::vector<std::size_t> const& r, nb::handle sharing,
                         std::string const& whose_shape, std::string const& whose_ranks) {
  if (sharing.is_none()) return t3k::manifold_dimension(big_n, n, r);
  // The lists first, so that a shape the ranks do not fit is named as without a sharing.
  t3k::impl::check_t3_shape_lists(where, big_n, n, r);
  auto const s = sharing_arg(sharing, big_n, where, whose_shape);
  check_sharing_ranks(s, n, where, whose_ranks);
  return t3k::manifold_dimension(big_n, n, r, s);
}

std::size_t manifold_dimension(nb::handle shape, nb::handle tucker_ranks, nb::handle tt_ranks, nb::handle sharing) {
  std::string const where = "t3k.manifold_dimension";
  auto const big_n = size_list_arg(shape, where, "shape");
  auto const n = size_list_arg(tucker_ranks, where, "tucker_ranks");
  auto const r = size_list_arg(tt_ranks, where, "tt_ranks");
  return dimension_of(where, big_n, n, r, sharing, "shape", "tucker_ranks");
}

/// The manifold dimension at the shapes and ranks of `x`, with the sharing `sharing` (None: unshared).
std::size_t t3_dimension(PyTuckerTensorTrain const& x, nb::handle sharing) {
  std::vector<std::size_t> big_n, n, r;
  for (auto const& a : x.tucker) {
    n.push_back(a.shape(0));
    big_n.push_back(a.shape(1));
  }
  for (auto const& a : x.tt) r.push_back(a.shape(0));
  r.push_back(x.tt.back().shape(2));
  return dimension_of("t3k.TuckerTensorTrain.shared_manifold_dimension", big_n, n, r, sharing, "the T3", "the T3");
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

std::vector<long long> rank_caps(nb::handle h, std::string const& where, std::string const& name) {
  std::vector<long long> out;
  if (h.is_none()) return out;
  for (std::size_t v : size_list_arg(h, where, name)) out.push_back(static_cast<long long>(v));
  return out;
}

/// A T3-SVD result as (T3, Tucker singular values per mode, TT singular values per interior bond); the singular
/// values are host values, NumPy in every build.
template <class Scalar>
nb::tuple svd_result_tuple(t3k::T3SvdResult<Scalar, Memory> const& result, Dtype dt) {
  auto arrays = [&](std::vector<std::vector<Scalar>> const& values) {
    nb::list out;
    for (auto const& v : values) {
      Output o = new_host_array({v.size()}, dt);
      if (!v.empty()) std::memcpy(o.data, v.data(), v.size() * sizeof(Scalar));
      out.append(o.array);
    }
    return out;
  };
  return nb::make_tuple(t3_from_library(result.t3, dt), arrays(result.tucker_singular_values),
                        arrays(result.tt_singular_values));
}

t3k::T3SvdOptions svd_options(nb::handle max_tucker_ranks, nb::handle max_tt_ranks, double rtol,
                              std::string const& where) {
  t3k::T3SvdOptions options;
  options.max_tucker_ranks = rank_caps(max_tucker_ranks, where, "max_tucker_ranks");
  options.max_tt_ranks = rank_caps(max_tt_ranks, where, "max_tt_ranks");
  options.rtol = rtol;
  return options;
}

nb::tuple t3_svd(PyTuckerTensorTrain const& x, nb::handle max_tucker_ranks, nb::handle max_tt_ranks, double rtol) {
  auto const options = svd_options(max_tucker_ranks, max_tt_ranks, rtol, "t3k.t3_svd");
  return dispatch(x.dtype, [&](auto zero) {
    using Scalar = decltype(zero);
    auto const t3 = x.view<Scalar>();
    t3k::T3SvdResult<Scalar, Memory> result;
    run_kernels([&] { result = t3k::t3_svd(ExecutionSpace(), t3, options); });
    return svd_result_tuple(result, x.dtype);
  });
}

/// The T3 of a dense d-dimensional array (shapes from the array), truncated as t3_svd. dtype: by default float32
/// for a float32 array, else float64.
nb::tuple t3_from_dense(nb::handle dense, nb::handle max_tucker_ranks, nb::handle max_tt_ranks, double rtol,
                        nb::handle dtype) {
  std::string const where = "t3k.t3_from_dense";
  auto const options = svd_options(max_tucker_ranks, max_tt_ranks, rtol, where);
  Dtype const dt = inferred_dtype(dtype, nb::make_tuple(dense), where);
  Array const a = as_array(dense, dt, 0, where, "dense", "(N_0 x .. x N_{d-1})");
  std::vector<std::size_t> const shape = shape_of(a);
  if (shape.empty()) fail(where + ": dense must be an array of d >= 1 dimensions, got a 0-d array");
  require_finite({a}, dt, where, "dense", false);
  // The host copies of the dense tensor and of its unfoldings and projections (t3_from_dense works on the host).
  constexpr std::uint64_t dense_copies = 4;
  require_memory(times(array_bytes(shape, dt), dense_copies), where,
                 "the T3 of a dense tensor of shape " + t3k::impl::shape_string(shape));
  return dispatch(dt, [&](auto zero) {
    using Scalar = decltype(zero);
    InputView<Scalar, Scalar const*> const flat(static_cast<Scalar const*>(a.data()), a.size());
    t3k::T3SvdResult<Scalar, Memory> result;
    run_kernels([&] { result = t3k::t3_from_dense(ExecutionSpace(), flat, shape, options); });
    return svd_result_tuple(result, dt);
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

}  // namespace

void bind_tucker_tensor_train(nb::module_& m) {
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
          "tucker_cores", [](PyTuckerTensorTrain const& x) { return array_views(x.tucker, nb::find(&x)); },
          nb::for_getter(nb::sig("def tucker_cores(self) -> list[numpy.ndarray]")),
          "U_0..U_{d-1}, read-only views (n_i, N_i).")
      .def_prop_ro(
          "tt_cores", [](PyTuckerTensorTrain const& x) { return array_views(x.tt, nb::find(&x)); },
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
      .def_prop_ro(
          "manifold_dimension", [](PyTuckerTensorTrain const& x) { return t3_dimension(x, nb::none()); },
          "The dimension of the manifold of T3s of this T3's shape and ranks: its degrees of freedom\n"
          "(t3k.manifold_dimension).")
      .def("shared_manifold_dimension", &t3_dimension, "sharing"_a.none(),
           nb::sig("def shared_manifold_dimension(self, sharing: typing.Sequence[int] | None) -> int"),
           "manifold_dimension with shared Tucker factors: sharing gives one integer label per mode, modes with\n"
           "equal labels use one factor, which counts once (t3k.manifold_dimension(..., sharing=...)). None: the\n"
           "manifold_dimension property. Raises ValueError naming sharing when it does not fit this T3.")
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
  m.def("manifold_dimension", &manifold_dimension, "shape"_a, "tucker_ranks"_a, "tt_ranks"_a,
        "sharing"_a.none() = nb::none(),
        nb::sig("def manifold_dimension(shape: typing.Sequence[int], tucker_ranks: typing.Sequence[int], "
                "tt_ranks: typing.Sequence[int], sharing: typing.Sequence[int] | None = None) -> int"),
        "The dimension of the manifold of T3s of this shape and these ranks, the model's degrees of freedom:\n"
        "sum_i n_i (N_i - n_i) + sum_i r_i n_i r_{i+1} - sum_{e=1..d-1} r_e^2, counted at the ranks such T3s\n"
        "actually have (boundary ranks 1, every rank lowered to what its neighbours allow; docs/math.md).\n"
        "sharing: one integer label per mode; modes with equal labels share one Tucker factor (equal sizes and\n"
        "Tucker ranks), which counts once, n_g (N_g - n_g), and a group's rank is bounded by its modes together\n"
        "(docs/math.md, \"Shared Tucker factors\"). None: no sharing.\n"
        "Nothing runs. Raises ValueError for inconsistent lists.");
  m.def("t3_from_dense", &t3_from_dense, "dense"_a, "max_tucker_ranks"_a.none() = nb::none(),
        "max_tt_ranks"_a.none() = nb::none(), "rtol"_a = 0.0, "dtype"_a.none() = nb::none(),
        nb::sig("def t3_from_dense(dense: numpy.typing.ArrayLike, max_tucker_ranks: typing.Sequence[int] | None = "
                "None, max_tt_ranks: typing.Sequence[int] | None = None, rtol: float = 0.0, "
                "dtype: numpy.typing.DTypeLike = None) -> tuple[TuckerTensorTrain, list[numpy.ndarray], "
                "list[numpy.ndarray]]"),
        "The T3 of a dense d-dimensional array (its shape is the T3's): HOSVD Tucker factors, an exact train of\n"
        "the projected core, then t3_svd with these caps and tolerance (none: exact to rounding). Returns as\n"
        "t3_svd. dtype: by default float32 for a float32 array, else float64. Runs on the host (LAPACK); meant\n"
        "for tensors of up to some millions of entries. Raises ValueError for a NaN or an infinity in dense.");
}

}  // namespace t3k_python
