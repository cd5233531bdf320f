/// \file bind_scalar_measurements.cpp
/// Python bindings of the scalar measurements of a T3 (docs/math.md, measurements): entries and applies and their
/// jets, J on the tangent space and J^T, for entries (multi-indices) and applies (one vector per mode).

#include "bindings.hpp"
#include "objects.hpp"
#include "sample_arrays.hpp"
#include "workspace_checks.hpp"

#include "t3k/algorithms/apply_derivatives.hpp"
#include "t3k/algorithms/apply_derivatives_transpose.hpp"
#include "t3k/algorithms/tangent_apply_derivatives.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace t3k_python {
namespace {

using Kind = t3k::MeasurementKind;
using Indices = t3k::EntryIndices<Memory>;

/// The checked samples of one call: ww (applies) or indices (entries), and the directions pp (empty for None).
struct Samples {
  Kind kind = Kind::applies;
  std::vector<Array> ww, pp, indices;
  std::size_t n() const { return kind == Kind::entries ? indices[0].shape(0) : ww.empty() ? 0 : ww[0].shape(0); }
  std::string name() const { return kind == Kind::entries ? "indices" : "ww"; }
};

/// Reads the samples of `kind` against a model of mode sizes `shape`. pp may be None only for order 0
/// (`order` is unknown, as for J^T, until the residuals are read: then pp is checked by the library).
Samples samples_arg(Kind kind, nb::handle samples, nb::handle pp, std::size_t const* order,
                    std::vector<std::size_t> const& shape, Dtype dt, std::string const& where) {
  Samples out;
  out.kind = kind;
  if (kind == Kind::entries) {
    out.indices.push_back(as_index_array(samples, shape, where));
  } else {
    out.ww = as_array_list(samples, dt, 2, where, "ww", "(W x N_i)");
  }
  if (!pp.is_none()) {
    out.pp = as_array_list(pp, dt, 2, where, "pp", "(W x N_i)");
    require_rows(out.pp, "pp", out.n(), kind == Kind::entries ? "indices" : "ww[0]", where);
  } else if (order && *order > 0) {
    fail(where + ": pp must hold one (W x N_i) direction per mode for order >= 1, got None");
  }
  return out;
}

/// The library's samples over the arrays of `s`.
template <class Scalar>
t3k::impl::ScalarSamples<ProbeView<Scalar>, Indices> library_samples(Samples const& s) {
  Indices idx;
  if (s.kind == Kind::entries) idx = index_view<Indices>(s.indices[0]);
  return {s.kind, probe_views<Scalar>(s.ww), probe_views<Scalar>(s.pp), idx};
}

std::vector<std::size_t> shape_of(PyTuckerTensorTrain const& x) {
  std::vector<std::size_t> out;
  for (auto const& u : x.tucker) out.push_back(u.shape(1));
  return out;
}
std::vector<std::size_t> shape_of(PyOrthogonalFrame const& f) {
  std::vector<std::size_t> out;
  for (auto const& u : f.up) out.push_back(u.shape(1));
  return out;
}

/// Jets (W, K+1) of the samples, or the measurements themselves (W) when `flat`.
nb::object scalar_jets(Kind kind, PyTuckerTensorTrain const& x, nb::handle samples, nb::handle pp, nb::handle order,
                       nb::handle chunk_size, bool flat, std::string const& where) {
  std::size_t const k = flat ? 0 : size_arg(order, where, "order");
  auto const chunk = chunk_size.is_none() ? t3k::ChunkSize::none() : chunk_size_arg(chunk_size, where);
  Samples const s = samples_arg(kind, samples, pp, &k, shape_of(x), x.dtype, where);
  return dispatch(x.dtype, [&](auto zero) {
    using Scalar = decltype(zero);
    auto const t3 = x.view<Scalar>();
    std::size_t const w = s.n();
    require_memory(
        array_bytes({w, k + 1}, x.dtype), where,
        "the jets of W = " + std::to_string(w) + " samples (" + s.name() + ") at order " + std::to_string(k));
    Output out = flat ? new_array({w}, x.dtype) : new_array({w, k + 1}, x.dtype);
    Matrix<Scalar> const jets(static_cast<Scalar*>(out.data), w, k + 1);
    auto const wv = probe_views<Scalar>(s.ww);
    auto const pv = probe_views<Scalar>(s.pp);
    try {
      run_kernels([&] {
        if (kind == Kind::entries) {
          t3k::entry_derivatives_into(ExecutionSpace(), t3, index_view<Indices>(s.indices[0]), pv, k, jets, chunk);
        } else {
          t3k::apply_derivatives_into(ExecutionSpace(), t3, wv, pv, k, jets, chunk);
        }
      });
    } catch (std::runtime_error const& e) {  // t3k::InvalidArgument, t3k::DimensionMismatch
      // entries and applies are the library's jets of order 0: their messages name the function called.
      std::string text = python_message(e.what());
      std::string const library = kind == Kind::entries ? "t3k.entry_derivatives:" : "t3k.apply_derivatives:";
      if (text.compare(0, library.size(), library) == 0) text = where + ":" + text.substr(library.size());
      fail(text);
    }
    return out.array;
  });
}

nb::object entries(PyTuckerTensorTrain const& x, nb::handle indices) {
  return scalar_jets(Kind::entries, x, indices, nb::none(), nb::none(), nb::str("auto"), true, "t3k.entries");
}
nb::object applies(PyTuckerTensorTrain const& x, nb::handle ww) {
  return scalar_jets(Kind::applies, x, ww, nb::none(), nb::none(), nb::str("auto"), true, "t3k.applies");
}
nb::object entry_derivatives(PyTuckerTensorTrain const& x, nb::handle indices, nb::handle pp, nb::handle order,
                             nb::handle chunk_size) {
  return scalar_jets(Kind::entries, x, indices, pp, order, chunk_size, false, "t3k.entry_derivatives");
}
nb::object apply_derivatives(PyTuckerTensorTrain const& x, nb::handle ww, nb::handle pp, nb::handle order,
                             nb::handle chunk_size) {
  return scalar_jets(Kind::applies, x, ww, pp, order, chunk_size, false, "t3k.apply_derivatives");
}

/// J v: (n_stack, W, K+1).
nb::object tangent_scalar_jets(Kind kind, PyOrthogonalFrame const& frame, PyT3Variation const& v, nb::handle samples,
                               nb::handle pp, nb::handle order, nb::handle chunk_size, std::string const& where) {
  if (v.dtype != frame.dtype) {
    fail(where + ": the variation is " + dtype_name(v.dtype) + " but the frame is " + dtype_name(frame.dtype));
  }
  std::size_t const k = size_arg(order, where, "order");
  auto const chunk = chunk_size.is_none() ? t3k::ChunkSize::none() : chunk_size_arg(chunk_size, where);
  Samples const s = samples_arg(kind, samples, pp, &k, shape_of(frame), frame.dtype, where);
  return dispatch(frame.dtype, [&](auto zero) {
    using Scalar = decltype(zero);
    auto const f = frame.view<Scalar>();
    auto const variation = v.view<Scalar>();
    std::size_t const w = s.n(), nt = variation.n_stack();
    require_memory(array_bytes({nt, w, k + 1}, frame.dtype), where,
                   "the jets of n_stack = " + std::to_string(nt) + " variations (v) at W = " + std::to_string(w) +
                       " samples (" + s.name() + ") and order " + std::to_string(k));
    Output out = new_array({nt, w, k + 1}, frame.dtype);
    Tensor3<Scalar> const jets(static_cast<Scalar*>(out.data), nt, w, k + 1);
    auto const wv = probe_views<Scalar>(s.ww);
    auto const pv = probe_views<Scalar>(s.pp);
    run_kernels([&] {
      if (kind == Kind::entries) {
        t3k::tangent_entry_derivatives_into(ExecutionSpace(), f, variation, index_view<Indices>(s.indices[0]), pv, k,
                                            jets, chunk);
      } else {
        t3k::tangent_apply_derivatives_into(ExecutionSpace(), f, variation, wv, pv, k, jets, chunk);
      }
    });
    return out.array;
  });
}

nb::object tangent_entry_derivatives(PyOrthogonalFrame const& frame, PyT3Variation const& v, nb::handle indices,
                                     nb::handle pp, nb::handle order, nb::handle chunk_size) {
  return tangent_scalar_jets(Kind::entries, frame, v, indices, pp, order, chunk_size, "t3k.tangent_entry_derivatives");
}
nb::object tangent_apply_derivatives(PyOrthogonalFrame const& frame, PyT3Variation const& v, nb::handle ww,
                                     nb::handle pp, nb::handle order, nb::handle chunk_size) {
  return tangent_scalar_jets(Kind::applies, frame, v, ww, pp, order, chunk_size, "t3k.tangent_apply_derivatives");
}

template <class Scalar, class ResidualView>
PyT3Variation scalar_transpose_with(std::string const& where, PyOrthogonalFrame const& frame, Samples const& s,
                                    Array const& residuals, t3k::TransposeOptions const& options) {
  ResidualView rv;
  if constexpr (int(ResidualView::rank) == 2) {
    rv = ResidualView(static_cast<Scalar const*>(residuals.data()), residuals.shape(0), residuals.shape(1));
  } else {
    rv = ResidualView(static_cast<Scalar const*>(residuals.data()), residuals.shape(0), residuals.shape(1),
                      residuals.shape(2));
  }
  auto const f = frame.view<Scalar>();
  constexpr bool stacked = int(ResidualView::rank) == 3;
  check_transpose_memory<Scalar>(where, s.kind, f, s.n(), residuals.shape(stacked ? 2 : 1),
                                 stacked ? residuals.shape(0) : 1, options, frame.dtype, s.name());
  auto const samples = library_samples<Scalar>(s);
  t3k::T3Variation<Scalar, Memory> out;
  run_kernels([&] {
    if (s.kind == Kind::entries) {
      out = t3k::entry_derivatives_transpose(ExecutionSpace(), f, samples.indices, samples.pp, rv, options);
    } else {
      out = t3k::apply_derivatives_transpose(ExecutionSpace(), f, samples.ww, samples.pp, rv, options);
    }
  });
  return variation_from_library(out, frame.dtype);
}

PyT3Variation scalar_transpose(Kind kind, PyOrthogonalFrame const& frame, nb::handle samples, nb::handle pp,
                               nb::handle residuals, bool sum_over_probes, nb::handle chunk_size,
                               std::string const& where) {
  t3k::TransposeOptions options;
  options.sum_over_probes = sum_over_probes;
  options.chunk_size = chunk_size_arg(chunk_size, where);
  char const* const expected = "(W x (K+1)), or (n_t x W x (K+1)) for a stack";
  Array const r = as_array(residuals, frame.dtype, 0, where, "residuals", expected);
  if (r.ndim() != 2 && r.ndim() != 3) {
    fail(where + ": residuals must be a 2-d or 3-d array of real numbers " + expected + ", got an array of shape " +
         shape_string(r));
  }
  std::size_t const order_plus_one = r.shape(r.ndim() - 1);
  std::size_t const order = order_plus_one > 0 ? order_plus_one - 1 : 0;
  Samples const s = samples_arg(kind, samples, pp, &order, shape_of(frame), frame.dtype, where);
  return dispatch(frame.dtype, [&](auto zero) {
    using Scalar = decltype(zero);
    if (r.ndim() == 2) {
      return scalar_transpose_with<Scalar, InputView<Scalar, Scalar const**>>(where, frame, s, r, options);
    }
    return scalar_transpose_with<Scalar, InputView<Scalar, Scalar const***>>(where, frame, s, r, options);
  });
}

PyT3Variation entry_derivatives_transpose(PyOrthogonalFrame const& frame, nb::handle indices, nb::handle pp,
                                          nb::handle residuals, bool sum_over_probes, nb::handle chunk_size) {
  return scalar_transpose(Kind::entries, frame, indices, pp, residuals, sum_over_probes, chunk_size,
                          "t3k.entry_derivatives_transpose");
}
PyT3Variation apply_derivatives_transpose(PyOrthogonalFrame const& frame, nb::handle ww, nb::handle pp,
                                          nb::handle residuals, bool sum_over_probes, nb::handle chunk_size) {
  return scalar_transpose(Kind::applies, frame, ww, pp, residuals, sum_over_probes, chunk_size,
                          "t3k.apply_derivatives_transpose");
}

}  // namespace

void bind_scalar_measurements(nb::module_& m) {
  m.def("entries", &entries, "x"_a, "indices"_a,
        nb::sig("def entries(x: TuckerTensorTrain, indices: numpy.typing.ArrayLike) -> numpy.ndarray"),
        "The entries X[indices[s, 0], .., indices[s, d-1]]: a (W,) array.\n\n"
        "indices: (W, d) integers of any dtype, 0-based, 0 <= indices[s, i] < N_i (a multi-index may repeat).\n"
        "Raises ValueError naming the first index out of range and its mode's size.");
  m.def("applies", &applies, "x"_a, "ww"_a,
        nb::sig("def applies(x: TuckerTensorTrain, ww: typing.Sequence[numpy.typing.ArrayLike]) -> numpy.ndarray"),
        "The applies X(ww[0][s], .., ww[d-1][s]) (X contracted with ww[m][s] in every mode m): a (W,) array.\n\n"
        "ww: one (W, N_i) array per mode. Raises ValueError naming the array and both shapes.");
  m.def("entry_derivatives", &entry_derivatives, "x"_a, "indices"_a, "pp"_a.none() = nb::none(), "order"_a = 0,
        "chunk_size"_a.none() = "auto",
        nb::sig("def entry_derivatives(x: TuckerTensorTrain, indices: numpy.typing.ArrayLike, "
                "pp: typing.Sequence[numpy.typing.ArrayLike] | None = None, order: int = 0, "
                "chunk_size: int | str | None = 'auto') -> numpy.ndarray"),
        "Jets of entries: a (W, order + 1) array of the Taylor coefficients a^(k) of\n"
        "a(t) = X(e_{indices[s, 0]} + t pp[0][s], .., e_{indices[s, d-1]} + t pp[d-1][s]) (e_j one-hot; orders k > d\n"
        "are zero). pp: one (W, N_i) direction per mode, required for order >= 1. chunk_size: samples per pass\n"
        "('auto', None for all at once, or an integer); the result does not depend on it.");
  m.def("apply_derivatives", &apply_derivatives, "x"_a, "ww"_a, "pp"_a.none() = nb::none(), "order"_a = 0,
        "chunk_size"_a.none() = "auto",
        nb::sig("def apply_derivatives(x: TuckerTensorTrain, ww: typing.Sequence[numpy.typing.ArrayLike], "
                "pp: typing.Sequence[numpy.typing.ArrayLike] | None = None, order: int = 0, "
                "chunk_size: int | str | None = 'auto') -> numpy.ndarray"),
        "Jets of applies: a (W, order + 1) array of the Taylor coefficients a^(k) of\n"
        "a(t) = X(ww[0][s] + t pp[0][s], .., ww[d-1][s] + t pp[d-1][s]) (orders k > d are zero).\n"
        "pp: required for order >= 1. chunk_size: as entry_derivatives.");
  m.def(
      "tangent_entry_derivatives", &tangent_entry_derivatives, "frame"_a, "v"_a, "indices"_a,
      "pp"_a.none() = nb::none(), "order"_a = 0, "chunk_size"_a.none() = "auto",
      nb::sig("def tangent_entry_derivatives(frame: OrthogonalFrame, v: T3Variation, indices: numpy.typing.ArrayLike, "
              "pp: typing.Sequence[numpy.typing.ArrayLike] | None = None, order: int = 0, "
              "chunk_size: int | str | None = 'auto') -> numpy.ndarray"),
      "J v for entries: the entry jets of the tangent tensors T(v_t), an (n_stack, W, order + 1) array.");
  m.def("tangent_apply_derivatives", &tangent_apply_derivatives, "frame"_a, "v"_a, "ww"_a, "pp"_a.none() = nb::none(),
        "order"_a = 0, "chunk_size"_a.none() = "auto",
        nb::sig("def tangent_apply_derivatives(frame: OrthogonalFrame, v: T3Variation, "
                "ww: typing.Sequence[numpy.typing.ArrayLike], pp: typing.Sequence[numpy.typing.ArrayLike] | None = "
                "None, order: int = 0, chunk_size: int | str | None = 'auto') -> numpy.ndarray"),
        "J v for applies: the apply jets of the tangent tensors T(v_t), an (n_stack, W, order + 1) array.");
  m.def("entry_derivatives_transpose", &entry_derivatives_transpose, "frame"_a, "indices"_a, "pp"_a.none(),
        "residuals"_a, "sum_over_probes"_a = true, "chunk_size"_a.none() = "auto",
        nb::sig("def entry_derivatives_transpose(frame: OrthogonalFrame, indices: numpy.typing.ArrayLike, "
                "pp: typing.Sequence[numpy.typing.ArrayLike] | None, residuals: numpy.typing.ArrayLike, "
                "sum_over_probes: bool = True, chunk_size: int | str | None = 'auto') -> T3Variation"),
        "J^T for entries: residual jets (W, K+1), or (n_t, W, K+1) for a stack, back-projected into variations, so\n"
        "that sum(tangent_entry_derivatives(frame, v, indices, pp, K) * r) = sum_i <V_i, V~_i> + <H_i, H~_i>.\n"
        "pp: None for K = 0. sum_over_probes and chunk_size: as probe_derivatives_transpose (every chunk size\n"
        "gives the same result bit for bit; False gives n_t * W variations, index t * W + s). Not gauged.");
  m.def("apply_derivatives_transpose", &apply_derivatives_transpose, "frame"_a, "ww"_a, "pp"_a.none(), "residuals"_a,
        "sum_over_probes"_a = true, "chunk_size"_a.none() = "auto",
        nb::sig("def apply_derivatives_transpose(frame: OrthogonalFrame, ww: typing.Sequence[numpy.typing.ArrayLike], "
                "pp: typing.Sequence[numpy.typing.ArrayLike] | None, residuals: numpy.typing.ArrayLike, "
                "sum_over_probes: bool = True, chunk_size: int | str | None = 'auto') -> T3Variation"),
        "J^T for applies: as entry_derivatives_transpose, with one (W, N_i) vector per mode instead of indices.");
}

}  // namespace t3k_python
