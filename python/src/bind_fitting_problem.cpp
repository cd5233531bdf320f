/// \file bind_fitting_problem.cpp
/// Python bindings of the fitting problem of every measurement kind (probes, entries, applies): construction from
/// arrays, planted problems, hold_out, and score (the loss of any model on a problem, without an optimizer).

#include "bindings.hpp"
#include "objects.hpp"
#include "sample_arrays.hpp"

#include "t3k/optimizers/fitting_problem.hpp"
#include "t3k/optimizers/planted_problem.hpp"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace t3k_python {

namespace {

using Kind = t3k::MeasurementKind;

bool given(nb::handle h) { return h.is_valid() && !h.is_none(); }

/// The checks every constructor shares, after the samples and targets are read: weights and order_weights read,
/// the library's check of how the arrays fit together, finite data (as `t3k fit` checks its data: a NaN or a
/// negative weight makes a loss that the optimizers would drive anywhere), and the validation set.
void finish_problem(std::string const& where, PyFittingProblem& p, nb::handle weights, nb::handle order_weights,
                    PyFittingProblem const* validation) {
  if (given(weights)) p.weights.push_back(as_array(weights, p.dtype, 1, where, "weights", "(W)"));
  if (given(order_weights)) {
    p.order_weights.push_back(as_array(order_weights, p.dtype, 1, where, "order_weights", "(K+1)"));
    if (p.order_weights[0].shape(0) != p.order() + 1) {
      std::string const jets = p.kind == Kind::probes ? "targets" : "values";
      fail(where + ": order_weights has " + std::to_string(p.order_weights[0].shape(0)) +
           " entries, expected K + 1 = " + std::to_string(p.order() + 1) + " (the orders of " + jets + "; arguments " +
           jets + " and order_weights)");
    }
  }
  // The mode count comes from ww (or shape): a list of another length names both.
  auto count = [&](std::vector<Array> const& arrays, char const* name) {
    if (arrays.empty() || arrays.size() == p.shape.size()) return;
    fail(where + ": " + name + " holds " + std::to_string(arrays.size()) + " arrays but " +
         (p.kind == Kind::entries ? "shape has " : "ww holds ") + std::to_string(p.shape.size()) +
         " (one per mode; arguments " + (p.kind == Kind::entries ? "shape" : "ww") + " and " + name + ")");
  };
  count(p.pp, "pp");
  if (p.kind == Kind::probes) count(p.targets, "targets");
  std::string const sizes_from = p.kind == Kind::entries ? "shape" : "ww";
  check_together(sizes_from + " and the other arrays (the mode sizes N_i are those of " + sizes_from + ")", [&] {
    dispatch(p.dtype, [&](auto zero) { t3k::impl::check_problem(where, p.view<decltype(zero)>(), p.shape); });
  });
  require_finite(p.ww, p.dtype, where, "ww", true);
  require_finite(p.pp, p.dtype, where, "pp", true);
  require_finite(p.targets, p.dtype, where, p.kind == Kind::probes ? "targets" : "values", p.kind == Kind::probes);
  require_finite(p.weights, p.dtype, where, "weights", false, true);
  require_finite(p.order_weights, p.dtype, where, "order_weights", false, true);
  if (!validation) return;
  auto const theirs = validation->mode_sizes();
  if (validation->dtype != p.dtype || validation->kind != p.kind || theirs != p.shape ||
      validation->order() != p.order()) {
    fail(where + ": validation must be a FittingProblem of the same kind, dtype, mode sizes and order (" +
         t3k::to_string(p.kind) + ", " + dtype_name(p.dtype) + ", N = " + t3k::impl::shape_string(p.shape) +
         ", K = " + std::to_string(p.order()) + "), got " + t3k::to_string(validation->kind) + ", " +
         dtype_name(validation->dtype) + ", N = " + t3k::impl::shape_string(theirs) +
         ", K = " + std::to_string(validation->order()));
  }
  if (validation->validation) fail(where + ": validation must be a problem without a validation set of its own");
  p.validation = std::make_shared<PyFittingProblem const>(*validation);
}

/// The dtype of a scalar problem: `dtype`, else float32 when `values` is float32, else float64.
Dtype values_dtype(nb::handle dtype, nb::handle values, std::string const& where) {
  return inferred_dtype(dtype, nb::make_tuple(values), where);
}

/// The directions of a scalar problem (required for K >= 1), after its values (one row per sample of `samples`).
void read_directions(std::string const& where, PyFittingProblem& p, nb::handle pp, std::size_t w,
                     std::string const& samples) {
  if (p.targets[0].shape(0) != w) {
    fail(where + ": values has shape " + shape_string(p.targets[0]) + ", expected " + std::to_string(w) +
         " rows (W = " + std::to_string(w) + " samples in " + samples + ")");
  }
  if (given(pp)) {
    p.pp = as_array_list(pp, p.dtype, 2, where, "pp", "(W x N_i)");
    require_rows(p.pp, "pp", w, samples, where);
  } else if (p.order() > 0) {
    fail(where + ": pp must hold one (W x N_i) direction per mode for K >= 1 (values has K + 1 = " +
         std::to_string(p.order() + 1) + " columns), got None");
  }
}

PyFittingProblem entries_problem(nb::handle indices, nb::handle values, nb::handle shape, nb::handle pp,
                                 nb::handle weights, nb::handle order_weights, nb::handle dtype,
                                 PyFittingProblem const* validation) {
  std::string const where = "t3k.FittingProblem.entries";
  PyFittingProblem p;
  p.kind = Kind::entries;
  p.dtype = values_dtype(dtype, values, where);
  p.shape = size_list_arg(shape, where, "shape");
  if (p.shape.empty()) fail(where + ": shape must hold the mode sizes N_0..N_{d-1}, d >= 1, got none");
  p.indices.push_back(as_index_array(indices, p.shape, where, "indices", true));
  p.targets.push_back(as_values_array(values, p.dtype, where, "values"));
  read_directions(where, p, pp, p.indices[0].shape(0), "indices");
  finish_problem(where, p, weights, order_weights, validation);
  return p;
}

PyFittingProblem applies_problem(nb::handle ww, nb::handle values, nb::handle pp, nb::handle weights,
                                 nb::handle order_weights, nb::handle dtype, PyFittingProblem const* validation) {
  std::string const where = "t3k.FittingProblem.applies";
  PyFittingProblem p;
  p.kind = Kind::applies;
  p.dtype = given(dtype) ? dtype_arg(dtype, where) : inferred_dtype(dtype, ww, where);
  p.ww = as_array_list(ww, p.dtype, 2, where, "ww", "(W x N_i)");
  if (p.ww.empty()) fail(where + ": ww must hold one (W x N_i) array per mode, got none");
  for (auto const& a : p.ww) p.shape.push_back(a.shape(1));
  p.targets.push_back(as_values_array(values, p.dtype, where, "values"));
  read_directions(where, p, pp, p.ww[0].shape(0), "ww[0]");
  finish_problem(where, p, weights, order_weights, validation);
  return p;
}

/// The problem without `count` (or round(fraction * W)) samples drawn by seed, which become its validation set.
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
    fail(where + ": holding out " + std::to_string(n) + " of " + std::to_string(w) + " " +
         t3k::to_string(problem.kind) + " leaves none to validate or none to fit (need 1 <= count < W)");
  }
  std::size_t const s = size_arg(seed, where, "seed");
  return dispatch(problem.dtype, [&](auto zero) {
    using Scalar = decltype(zero);
    auto const p = problem.view<Scalar>();
    t3k::FittingProblem<Scalar, Memory> train;
    run_kernels([&] { train = t3k::hold_out(ExecutionSpace(), p, n, std::uint64_t(s)); });
    return problem_from_library(train, problem.dtype, problem.shape);
  });
}

PyFittingProblem planted_problem(PyTuckerTensorTrain const& truth, nb::handle n_probes, nb::handle order, double noise,
                                 nb::handle seed, nb::handle kind_name) {
  std::string const where = "t3k.FittingProblem.planted";
  Kind const kind = kind_arg(kind_name, where);
  std::size_t const w = size_arg(n_probes, where, "n_probes", 1);
  std::size_t const k = size_arg(order, where, "order");
  std::size_t const s = size_arg(seed, where, "seed");
  if (!(std::isfinite(noise) && noise >= 0))
    fail(where + ": noise must be a finite number >= 0, got " + number_text(noise));
  require_finite(truth.tucker, truth.dtype, where, "truth.tucker_cores", true);
  require_finite(truth.tt, truth.dtype, where, "truth.tt_cores", true);
  std::vector<std::size_t> shape;
  std::size_t sum_n = 0;
  for (auto const& u : truth.tucker) sum_n += u.shape(1), shape.push_back(u.shape(1));
  // The library's vectors, directions (or indices) and targets, and their copy.
  std::size_t const per_sample = kind == Kind::probes ? (k + 3) * sum_n : 2 * sum_n + k + 1 + shape.size();
  require_memory(
      times(array_bytes({w, per_sample}, truth.dtype), 2), where,
      "a problem of n_probes = " + std::to_string(w) + " " + t3k::to_string(kind) + " at order " + std::to_string(k));
  return dispatch(truth.dtype, [&](auto zero) {
    using Scalar = decltype(zero);
    auto const x = truth.view<Scalar>();
    t3k::FittingProblem<Scalar, Memory> p;
    run_kernels([&] { p = t3k::make_planted_problem(ExecutionSpace(), x, kind, w, k, noise, std::uint64_t(s)); });
    return problem_from_library(p, truth.dtype, shape);
  });
}

/// The loss of `x` on `problem`, the loss of X = 0 and their relative residual sqrt(loss / zero_loss), as fit
/// records them.
nb::dict score(PyFittingProblem const& problem, PyTuckerTensorTrain const& x) {
  std::string const where = "t3k.score";
  if (problem.dtype != x.dtype) {
    fail(where + ": the problem is " + dtype_name(problem.dtype) + " but x is " + dtype_name(x.dtype));
  }
  std::vector<std::size_t> x_shape;
  for (auto const& u : x.tucker) x_shape.push_back(u.shape(1));
  if (x_shape != problem.shape) {
    fail(where + ": x has shape " + t3k::impl::shape_string(x_shape) + " but the problem has mode sizes " +
         t3k::impl::shape_string(problem.shape));
  }
  require_finite(x.tucker, x.dtype, where, "x.tucker_cores", true);
  require_finite(x.tt, x.dtype, where, "x.tt_cores", true);
  std::size_t width = 0;
  for (std::size_t i = 0; i < problem.targets.size(); ++i) width += problem.jet_shape(i)[2];
  require_memory(times(array_bytes({problem.n_probes(), problem.order() + 1, width}, x.dtype), 2), where,
                 "the residual of W = " + std::to_string(problem.n_probes()) + " samples (problem) at order " +
                     std::to_string(problem.order()));
  double loss = 0, zero_loss = 0;
  dispatch(x.dtype, [&](auto zero) {
    using Scalar = decltype(zero);
    auto const p = problem.view<Scalar>();
    auto const model = x.view<Scalar>();
    run_kernels([&] {
      loss = t3k::evaluate_loss(ExecutionSpace(), p, model).loss;
      zero_loss = t3k::zero_model_loss(ExecutionSpace(), p);
    });
  });
  nb::dict out;
  out["loss"] = loss;
  out["zero_loss"] = zero_loss;
  out["relative_residual"] =
      zero_loss > 0 ? std::sqrt(std::max(loss, 0.0) / zero_loss) : std::sqrt(std::max(loss, 0.0));
  return out;
}

}  // namespace

PyFittingProblem make_problem(nb::handle ww, nb::handle pp, nb::handle targets, nb::handle weights, nb::handle dtype,
                              PyFittingProblem const* validation, nb::handle order_weights) {
  std::string const where = "t3k.FittingProblem";
  PyFittingProblem p;
  p.dtype = inferred_dtype(dtype, ww, where);
  p.ww = as_array_list(ww, p.dtype, 2, where, "ww", "(W x N_i)");
  p.pp = as_array_list(pp, p.dtype, 2, where, "pp", "(W x N_i)");
  p.targets = as_array_list(targets, p.dtype, 3, where, "targets", "(W x (K+1) x N_i)");
  if (p.ww.empty()) fail(where + ": ww must hold one (W x N_i) array per mode, got none");
  if (p.targets.empty() || p.targets[0].shape(1) == 0) {
    fail(where + ": targets must hold one (W x (K+1) x N_i) array per mode with K + 1 >= 1");
  }
  for (auto const& a : p.ww) p.shape.push_back(a.shape(1));
  finish_problem(where, p, weights, order_weights, validation);
  return p;
}

void bind_fitting_problem(nb::module_& m) {
  nb::class_<PyFittingProblem>(
      m, "FittingProblem",
      "The data of a fit (docs/math.md): W samples of one measurement kind with target jets of order K.\n"
      "- probes (FittingProblem(...)): vectors ww[i] and directions pp[i] (W, N_i), targets[i] (W, K+1, N_i);\n"
      "- entries (FittingProblem.entries): multi-indices (W, d), values (W, K+1), pp[i] for K >= 1;\n"
      "- applies (FittingProblem.applies): vectors ww[i] (W, N_i), values (W, K+1), pp[i] for K >= 1.\n"
      "Optional per-sample weights c_s (W) and per-order weights omega_k (K+1). The loss is\n"
      "0.5 sum_s c_s sum_k omega_k^2 ||measurement_s^(k)(X) - target_s^(k)||^2. Arrays are held as T3 cores are.")
      .def(
          "__init__",
          [](PyFittingProblem* self, nb::handle ww, nb::handle pp, nb::handle targets, nb::handle weights,
             nb::handle dtype, PyFittingProblem const* validation, nb::handle order_weights) {
            new (self) PyFittingProblem(make_problem(ww, pp, targets, weights, dtype, validation, order_weights));
          },
          "ww"_a, "pp"_a, "targets"_a, "weights"_a.none() = nb::none(), "dtype"_a.none() = nb::none(),
          "validation"_a.none() = nb::none(), "order_weights"_a.none() = nb::none(),
          nb::sig("def __init__(self, ww: typing.Sequence[numpy.typing.ArrayLike], "
                  "pp: typing.Sequence[numpy.typing.ArrayLike], targets: typing.Sequence[numpy.typing.ArrayLike], "
                  "weights: numpy.typing.ArrayLike | None = None, dtype: numpy.typing.DTypeLike = None, "
                  "validation: FittingProblem | None = None, order_weights: numpy.typing.ArrayLike | None = None) "
                  "-> None"),
          "A problem of probes from its arrays; K is targets[0].shape[1] - 1. dtype: by default float32 when\n"
          "ww[0] is float32, else float64. validation: held-out samples of the same kind, dtype, mode sizes and\n"
          "order (as validation.file of `t3k fit`), whose relative residual fit records and validation_patience\n"
          "stops on. order_weights: omega_0..omega_K (each finite and >= 0). Raises ValueError naming the array\n"
          "and both shapes when they do not fit, or the first entry that is not finite.")
      .def_static(
          "entries",
          [](nb::handle indices, nb::handle values, nb::handle shape, nb::handle pp, nb::handle weights,
             nb::handle order_weights, nb::handle dtype, PyFittingProblem const* validation) {
            return entries_problem(indices, values, shape, pp, weights, order_weights, dtype, validation);
          },
          "indices"_a, "values"_a, "shape"_a, "pp"_a.none() = nb::none(), "weights"_a.none() = nb::none(),
          "order_weights"_a.none() = nb::none(), "dtype"_a.none() = nb::none(), "validation"_a.none() = nb::none(),
          nb::sig("def entries(indices: numpy.typing.ArrayLike, values: numpy.typing.ArrayLike, "
                  "shape: typing.Sequence[int], pp: typing.Sequence[numpy.typing.ArrayLike] | None = None, "
                  "weights: numpy.typing.ArrayLike | None = None, order_weights: numpy.typing.ArrayLike | None = "
                  "None, dtype: numpy.typing.DTypeLike = None, validation: FittingProblem | None = None) -> "
                  "FittingProblem"),
          "A problem of entries (tensor completion): indices (W, d) integers of any dtype, 0 <= indices[s, i] <\n"
          "shape[i]; values (W) or (W, K+1): the entries, or their jets along pp (one (W, N_i) direction per mode,\n"
          "required for K >= 1). shape: the mode sizes N_0..N_{d-1}. dtype: by default float32 when values is\n"
          "float32, else float64. Raises ValueError naming the first index out of range and its mode's size.")
      .def_static(
          "applies",
          [](nb::handle ww, nb::handle values, nb::handle pp, nb::handle weights, nb::handle order_weights,
             nb::handle dtype, PyFittingProblem const* validation) {
            return applies_problem(ww, values, pp, weights, order_weights, dtype, validation);
          },
          "ww"_a, "values"_a, "pp"_a.none() = nb::none(), "weights"_a.none() = nb::none(),
          "order_weights"_a.none() = nb::none(), "dtype"_a.none() = nb::none(), "validation"_a.none() = nb::none(),
          nb::sig("def applies(ww: typing.Sequence[numpy.typing.ArrayLike], values: numpy.typing.ArrayLike, "
                  "pp: typing.Sequence[numpy.typing.ArrayLike] | None = None, "
                  "weights: numpy.typing.ArrayLike | None = None, order_weights: numpy.typing.ArrayLike | None = "
                  "None, dtype: numpy.typing.DTypeLike = None, validation: FittingProblem | None = None) -> "
                  "FittingProblem"),
          "A problem of applies: vectors ww[i] (W, N_i); values (W) or (W, K+1): X(ww[0][s], .., ww[d-1][s]) or\n"
          "its jets along pp (required for K >= 1). dtype: as FittingProblem's.")
      .def("hold_out", &hold_out, "fraction"_a.none() = nb::none(), "count"_a.none() = nb::none(), "seed"_a = 0,
           nb::sig("def hold_out(self, fraction: float | None = None, count: int | None = None, seed: int = 0) "
                   "-> FittingProblem"),
           "A new problem without `count` samples (or round(fraction * W)), drawn by seed, which become its\n"
           "validation set: the same samples as validation.fraction / validation.count of `t3k fit` with that\n"
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
                  "kind"_a = "probes",
                  nb::sig("def planted(truth: TuckerTensorTrain, n_probes: int, order: int, noise: float = 0.0, "
                          "seed: int = 0, kind: str = 'probes') -> FittingProblem"),
                  "A synthetic problem with a known answer (the planted problems of `t3k fit`): n_probes samples of\n"
                  "`kind` ('probes', 'entries' or 'applies'; entries distinct, drawn by seed), random directions for\n"
                  "order >= 1, targets the jets of truth plus noise * rms(jets) * normal noise.")
      .def_prop_ro(
          "kind", [](PyFittingProblem const& p) { return t3k::to_string(p.kind); }, "'probes', 'entries' or 'applies'.")
      .def_prop_ro(
          "ww", [](PyFittingProblem const& p) { return array_views(p.ww, nb::find(&p)); },
          nb::for_getter(nb::sig("def ww(self) -> list[numpy.ndarray]")),
          "(W, N_i) per mode, read-only views (empty for entries).")
      .def_prop_ro(
          "pp", [](PyFittingProblem const& p) { return array_views(p.pp, nb::find(&p)); },
          nb::for_getter(nb::sig("def pp(self) -> list[numpy.ndarray]")),
          "(W, N_i) per mode, read-only views (empty for entries and applies of order 0 given without pp).")
      .def_prop_ro(
          "indices",
          [](PyFittingProblem const& p) -> nb::object {
            if (p.indices.empty()) return nb::none();
            return array_view(p.indices[0], nb::find(&p));
          },
          nb::for_getter(nb::sig("def indices(self) -> numpy.ndarray | None")),
          "The multi-indices of entries, (W, d) int32, or None for the other kinds.")
      .def_prop_ro(
          "targets",
          [](PyFittingProblem const& p) {
            nb::list out;
            for (std::size_t i = 0; i < p.targets.size(); ++i) {
              out.append(array_view(p.targets[i], nb::find(&p), p.jet_shape(i)));
            }
            return out;
          },
          nb::for_getter(nb::sig("def targets(self) -> list[numpy.ndarray]")),
          "(W, K+1, N_i) per mode for probes; one (W, K+1, 1) array for entries and applies. Read-only views.")
      .def_prop_ro(
          "values",
          [](PyFittingProblem const& p) -> nb::object {
            if (p.kind == Kind::probes) return nb::none();
            return array_view(p.targets[0], nb::find(&p), {p.n_probes(), p.order() + 1});
          },
          nb::for_getter(nb::sig("def values(self) -> numpy.ndarray | None")),
          "The target jets of entries and applies, (W, K+1), a read-only view; None for probes.")
      .def_prop_ro(
          "weights",
          [](PyFittingProblem const& p) -> nb::object {
            if (p.weights.empty()) return nb::none();
            return array_view(p.weights[0], nb::find(&p));
          },
          nb::for_getter(nb::sig("def weights(self) -> numpy.ndarray | None")), "(W,) or None (all ones).")
      .def_prop_ro(
          "order_weights",
          [](PyFittingProblem const& p) -> nb::object {
            if (p.order_weights.empty()) return nb::none();
            return array_view(p.order_weights[0], nb::find(&p));
          },
          nb::for_getter(nb::sig("def order_weights(self) -> numpy.ndarray | None")),
          "omega_0..omega_K, (K+1,), or None (all ones).")
      .def_prop_ro(
          "shape", [](PyFittingProblem const& p) { return size_tuple(p.shape); },
          nb::for_getter(nb::sig("def shape(self) -> tuple[int, ...]")), "(N_0, .., N_{d-1}).")
      .def_prop_ro("order", &PyFittingProblem::order, "K, the jet order.")
      .def_prop_ro("n_probes", &PyFittingProblem::n_probes, "W, the number of samples.")
      .def_prop_ro(
          "dtype", [](PyFittingProblem const& p) { return numpy_dtype(p.dtype); },
          nb::for_getter(nb::sig("def dtype(self) -> numpy.dtype")), "float32 or float64.");

  m.def("score", &score, "problem"_a, "x"_a,
        nb::sig("def score(problem: FittingProblem, x: TuckerTensorTrain) -> dict[str, float]"),
        "The loss of x on problem, without an optimizer: {'loss': 0.5 sum_s c_s sum_k omega_k^2 ||r_s^(k)||^2,\n"
        "'zero_loss': the loss of X = 0, 'relative_residual': sqrt(loss / zero_loss)} (as fit records them).\n"
        "Raises ValueError when x's dtype or shape does not fit the problem or its cores are not finite.");
}

}  // namespace t3k_python
