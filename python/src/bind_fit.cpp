/// \file bind_fit.cpp
/// Python bindings of fitting: fit over the four optimizers, for problems of every measurement kind
/// (bind_fitting_problem.cpp), whose keyword options come from the key tables of `t3k fit`
/// (drivers/optimizer_keys.hpp).

#include "bindings.hpp"
#include "objects.hpp"

#include "fit_options.hpp"
#include "sharing_arg.hpp"

#include "t3k/optimizers/adam.hpp"
#include "t3k/optimizers/gradient_descent.hpp"
#include "t3k/optimizers/mc_sgd.hpp"
#include "t3k/optimizers/newton_cg.hpp"

#include <cmath>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace t3k_python {
namespace {

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
  std::string continuation_key, edge_key;
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
      auto it = std::find_if(keys.begin(), keys.end(),
                             [&](auto const& k) { return key == t3k_python::continuation_keyword(k.key); });
      if (it == keys.end()) continue;
      it->set(c, option_value(where, *it, item.second));
      continuation_key = key;
      if (key != "continuation_rule" && key != "stage_iterations" && key != "stage_tol_decrease" &&
          key != "rank_rtol" && key != "rank_step") {
        edge_key = key;
      }
    }
  }
  // As in the configuration file: the edge-conditioning controls would be ignored by the saturation rule.
  if (!edge_key.empty() && c.rule != t3k::GrowthRule::edge_conditioning) {
    fail(where + ": " + edge_key + " is a control of continuation_rule='edge_conditioning'");
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
t3k::FitResult<Scalar, Memory> optimize(t3k::FittingProblem<Scalar, Memory> const& p,
                                        t3k::TuckerTensorTrain<Scalar, Memory> const& x, Options const& o) {
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
      if (truth < 0) {
        PyErr_Clear();
        throw nb::type_error(("t3k.fit: callback must return None, True or False, got " + describe(answer) +
                              ", which has no truth value")
                                 .c_str());
      }
      stop = truth == 1;
    } catch (nb::python_error& e) {
      if (!e.matches(PyExc_StopIteration)) throw;
      stop = true;
    }
  };
  options.common.stop_when = [&](t3k::IterationRecord const&) { return stop; };
  t3k::FitResult<Scalar, Memory> result;
  run_kernels([&] { result = optimize(p, x, options); });
  if (result.reason == t3k::stop_request_reason) {
    result.reason = "stopped by the callback at iteration " + std::to_string(result.history.back().iteration);
  }
  // Whatever stopped the fit, a point whose loss is not finite has not converged.
  if (!result.history.empty() && !std::isfinite(result.history.back().loss)) {
    result.converged = false;
    if (result.reason.find("non-finite") == std::string::npos) result.reason += " (the loss is not finite)";
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

/// Refuses an x0 that does not fit the problem (named as x0, not as the probe array the library would meet first)
/// or holds a NaN or an infinity, and a fit whose model copies, residual and J v arrays and J^T workspace exceed
/// the memory available, as `t3k fit` checks before it starts.
void check_fit_start(std::string const& where, PyFittingProblem const& problem, PyTuckerTensorTrain const& x0,
                     t3k::ChunkSize const& chunk) {
  auto const n_big = problem.mode_sizes();
  std::vector<std::size_t> x0_n, n, r;
  for (auto const& u : x0.tucker) x0_n.push_back(u.shape(1)), n.push_back(u.shape(0));
  for (auto const& g : x0.tt) r.push_back(g.shape(0));
  r.push_back(x0.tt.back().shape(2));
  if (x0_n.size() != n_big.size()) {
    fail(where + ": x0 has d = " + std::to_string(x0_n.size()) + " modes (shape " + t3k::impl::shape_string(x0_n) +
         ") but the problem's " + t3k::to_string(problem.kind) + " have " + std::to_string(n_big.size()) +
         " (mode sizes " + t3k::impl::shape_string(n_big) + "); x0 must have one mode per mode of the problem");
  }
  for (std::size_t i = 0; i < n_big.size(); ++i) {
    if (x0_n[i] == n_big[i]) continue;
    // The core at fault, by name: the library would meet the mismatch first at the problem's arrays of mode i.
    fail(where + ": x0.tucker_cores[" + std::to_string(i) + "] has shape [" + std::to_string(n[i]) + " x " +
         std::to_string(x0_n[i]) + "], expected [" + std::to_string(n[i]) + " x " + std::to_string(n_big[i]) +
         "]: the problem's " + t3k::to_string(problem.kind) + " have mode sizes " + t3k::impl::shape_string(n_big) +
         " and x0 " + t3k::impl::shape_string(x0_n));
  }
  require_finite(x0.tucker, x0.dtype, where, "x0.tucker_cores", true);
  require_finite(x0.tt, x0.dtype, where, "x0.tt_cores", true);
  std::size_t const w = problem.n_probes(), k = problem.order();
  std::size_t sum_n = 0;  // the widths of the residual jets: N_i per mode for probes, one for a scalar kind
  for (std::size_t i = 0; i < problem.targets.size(); ++i) sum_n += problem.jet_shape(i)[2];
  constexpr std::uint64_t model_copies = 6;  // iterate, trial, gradient and search directions, as `t3k fit` counts
  Bytes bytes = sum_bytes(times(t3_bytes(n_big, n, r, x0.dtype), model_copies),
                          times(array_bytes({w, k + 1, sum_n}, x0.dtype), 3));  // residuals, J v, spare residual
  try {
    auto const model = dispatch(x0.dtype, [&](auto zero) {
      using Scalar = decltype(zero);
      auto const sh = t3k::impl::frame_shapes_of_t3(where, n_big, n, r);
      constexpr std::size_t block = t3k::reduction_block_size_for<ExecutionSpace>();
      auto const c = t3k::impl::resolve_chunk_size<ExecutionSpace, Scalar>(problem.kind, chunk, sh, k, w, 1);
      return t3k::impl::transpose_memory_model_elements<Scalar>(problem.kind, sh, k, 1, true, block)
          .allocated_bytes(w, t3k::impl::rows_per_chunk(c, w, block));
    });
    bytes = sum_bytes(bytes, Bytes(model));
  } catch (t3k::InvalidArgument const&) {
    bytes = std::nullopt;
  }
  require_memory(bytes, where,
                 "a fit of x0's ranks on W = " + std::to_string(w) + " " + t3k::to_string(problem.kind) +
                     " (problem) at order " + std::to_string(k));
}

/// The sharing keyword of fit for x0: labels for x0's modes, and x0's Tucker ranks equal within every group (the
/// optimizers would refuse them too, but without naming the keyword).
t3k::ModeSharing fit_sharing(nb::handle sharing, PyTuckerTensorTrain const& x0, std::string const& where) {
  std::vector<std::size_t> big_n, n;
  for (auto const& u : x0.tucker) big_n.push_back(u.shape(1)), n.push_back(u.shape(0));
  auto out = sharing_arg(sharing, big_n, where, "x0");
  if (out.n_modes() > 0) check_sharing_ranks(out, n, where, "x0");
  return out;
}

nb::dict fit(PyFittingProblem const& problem, PyTuckerTensorTrain const& x0, std::string const& optimizer,
             nb::handle chunk_size, nb::handle callback, nb::handle sharing, nb::dict options) {
  std::string const where = "t3k.fit";
  if (problem.dtype != x0.dtype) {
    fail(where + ": the problem is " + dtype_name(problem.dtype) + " but x0 is " + dtype_name(x0.dtype));
  }
  if (!callback.is_none() && !PyCallable_Check(callback.ptr())) {
    fail(where + ": callback must be None or callable, got " + describe(callback));
  }
  auto const chunk = chunk_size_arg(chunk_size, where);
  check_fit_start(where, problem, x0, chunk);
  auto const shared = fit_sharing(sharing, x0, where);
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
        // A rank continuation grows a shared factor as one edge: one maximum rank per group.
        if (shared.n_modes() > 0 && o.common.continuation.enabled()) {
          auto const& cap = o.common.continuation.max_tucker_ranks;
          for (auto const& group : shared.groups()) {
            for (std::size_t i : group) {
              if (cap[i] != cap[group.front()]) {
                fail(where + ": sharing " + labels_text(shared.labels()) + " gives modes " +
                     std::to_string(group.front()) + " and " + std::to_string(i) +
                     " one factor, but max_tucker_ranks gives them " + std::to_string(cap[group.front()]) + " and " +
                     std::to_string(cap[i]) + "; a group has one rank");
              }
            }
          }
        }
        o.common.sharing = shared;
        if constexpr (std::is_same_v<Options, t3k::McSgdOptions> || std::is_same_v<Options, t3k::AdamOptions>) {
          // A batch_size given larger than W is refused, as `t3k fit` refuses it; the default (mc_sgd's 64) takes
          // all W probes of a smaller problem.
          if (options.contains("batch_size") && o.batch_size > problem.n_probes()) {
            fail(where + ": batch_size must be at most the number of probes W = " + std::to_string(problem.n_probes()) +
                 ", got " + std::to_string(o.batch_size));
          }
        }
        o.common.chunk_size = chunk;
        return dispatch(x0.dtype, [&](auto zero) { return run_fit<decltype(zero)>(problem, x0, o, callback); });
      },
      *choice);
}

}  // namespace

void bind_fit(nb::module_& m) {
  m.def("_fit", &fit, "problem"_a, "x0"_a, "optimizer"_a, "chunk_size"_a.none(), "callback"_a.none(),
        "sharing"_a.none(), "options"_a, "The optimizers; t3k.fit wraps this (see help(t3k.fit)).");
  m.def("_optimizer_keys", &optimizer_keys,
        "The optimizer options as the YAML schema defines them: {optimizer: [(key, type, default, allowed)]},\n"
        "the keys every optimizer takes under ''.");
}

}  // namespace t3k_python
