/// \file bind_tangent_space.cpp
/// Python bindings of the tangent space: orthogonal frames, variations, J (tangent_probe_derivatives) and J^T
/// (probe_derivatives_transpose), and J^T timed in C++ for perf/python_transpose_overhead.py.

#include "bindings.hpp"
#include "objects.hpp"
#include "workspace_checks.hpp"

#include "t3k/algorithms/orthogonal_frame.hpp"
#include "t3k/algorithms/probe_derivatives_transpose.hpp"
#include "t3k/algorithms/tangent_probe_derivatives.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace t3k_python {
namespace {

PyOrthogonalFrame orthogonal_frame(PyTuckerTensorTrain const& x) {
  return dispatch(x.dtype, [&](auto zero) {
    using Scalar = decltype(zero);
    auto const t3 = x.view<Scalar>();
    t3k::OrthogonalFrame<Scalar, Memory> frame;
    run_kernels([&] { frame = t3k::orthogonal_frame(ExecutionSpace(), t3); });
    PyOrthogonalFrame out;
    out.dtype = x.dtype;
    auto keep = [&](auto const& view) { return nb::cast<Array>(array_copy(view, x.dtype), false); };
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
  check_together("up_tucker, left_tt, right_tt, outer_tt and centre_tucker",
                 [&] { dispatch(f.dtype, [&](auto zero) { (void)f.view<decltype(zero)>(); }); });
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
         " TT blocks; both must number d >= 1 (arguments tucker and tt)");
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
  std::string const where = "t3k.T3Variation.zeros";
  std::size_t const n = size_arg(n_stack, where, "n_stack");
  return dispatch(frame.dtype, [&](auto zero) {
    using Scalar = decltype(zero);
    // The library's variations and their copy.
    require_memory(times(variation_bytes(t3k::impl::frame_shapes(frame.view<Scalar>()), n, frame.dtype), 2), where,
                   "a stack of n_stack = " + std::to_string(n) + " variations");
    t3k::T3Variation<Scalar, Memory> v;
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
    Bytes bytes = 0;
    for (std::size_t n : shapes) bytes = sum_bytes(bytes, array_bytes({variation.n_stack(), w, k + 1, n}, frame.dtype));
    require_memory(bytes, where,
                   "the jets of n_stack = " + std::to_string(variation.n_stack()) +
                       " variations (v) at W = " + std::to_string(w) + " probes (ww) and order " + std::to_string(k));
    t3k::TangentProbeJets<Scalar, Memory> z;
    nb::list const out = new_arrays_per_mode(frame.n_modes(), frame.dtype, z, [&](std::size_t i) {
      return std::vector<std::size_t>{variation.n_stack(), w, k + 1, shapes[i]};
    });
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
  if (!residuals.empty() && !w_arrays.empty()) {
    bool const stacked = residuals[0].ndim() == 4;
    check_transpose_memory<Scalar>("t3k.probe_derivatives_transpose", t3k::MeasurementKind::probes, f,
                                   w_arrays[0].shape(0), residuals[0].shape(stacked ? 2 : 1),
                                   stacked ? residuals[0].shape(0) : 1, options, frame.dtype);
  }
  auto const wv = probe_views<Scalar>(w_arrays);
  auto const pv = probe_views<Scalar>(p_arrays);
  t3k::T3Variation<Scalar, Memory> out;
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

}  // namespace

void bind_tangent_space(nb::module_& m) {
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
          "up_tucker", [](PyOrthogonalFrame const& f) { return array_views(f.up, nb::find(&f)); },
          nb::for_getter(nb::sig("def up_tucker(self) -> list[numpy.ndarray]")), "U_i (nU_i, N_i), orthonormal rows.")
      .def_prop_ro(
          "left_tt", [](PyOrthogonalFrame const& f) { return array_views(f.left, nb::find(&f)); },
          nb::for_getter(nb::sig("def left_tt(self) -> list[numpy.ndarray]")), "L_i (rL_i, nU_i, rL_{i+1}).")
      .def_prop_ro(
          "right_tt", [](PyOrthogonalFrame const& f) { return array_views(f.right, nb::find(&f)); },
          nb::for_getter(nb::sig("def right_tt(self) -> list[numpy.ndarray]")), "R_i (rR_i, nU_i, rR_{i+1}).")
      .def_prop_ro(
          "outer_tt", [](PyOrthogonalFrame const& f) { return array_views(f.outer, nb::find(&f)); },
          nb::for_getter(nb::sig("def outer_tt(self) -> list[numpy.ndarray]")), "O_i (rL_i, nO_i, rR_{i+1}).")
      .def_prop_ro(
          "centre_tucker",
          [](PyOrthogonalFrame const& f) -> nb::object {
            if (f.centre.empty()) return nb::none();
            return array_views(f.centre, nb::find(&f));
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
          "tucker", [](PyT3Variation const& v) { return array_views(v.tucker, nb::find(&v)); },
          nb::for_getter(nb::sig("def tucker(self) -> list[numpy.ndarray]")),
          "V_i (n_stack, nO_i, N_i), read-only views.")
      .def_prop_ro(
          "tt", [](PyT3Variation const& v) { return array_views(v.tt, nb::find(&v)); },
          nb::for_getter(nb::sig("def tt(self) -> list[numpy.ndarray]")),
          "H_i (n_stack, rL_i, nU_i, rR_{i+1}), read-only views.")
      .def_prop_ro(
          "n_stack", [](PyT3Variation const& v) { return v.tt[0].shape(0); }, "The length of the stack axis.")
      .def_prop_ro(
          "n_modes", [](PyT3Variation const& v) { return v.tt.size(); }, "d, the number of modes.")
      .def_prop_ro(
          "dtype", [](PyT3Variation const& v) { return numpy_dtype(v.dtype); },
          nb::for_getter(nb::sig("def dtype(self) -> numpy.dtype")), "float32 or float64.");

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
  m.def("_time_transpose", &time_transpose, "frame"_a, "ww"_a, "pp"_a, "residuals"_a, "sum_over_probes"_a = true,
        "chunk_size"_a.none() = nb::none(), "repeats"_a = 1,
        "Benchmark aid: seconds of each C++ probe_derivatives_transpose call, timed in C++.");
}

}  // namespace t3k_python
