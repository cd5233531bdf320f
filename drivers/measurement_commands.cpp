/// \file measurement_commands.cpp
/// `t3k predict` and `t3k score` (measurement_commands.hpp).

#include "drivers/measurement_commands.hpp"

#include "drivers/collective.hpp"
#include "drivers/device_copies.hpp"
#include "drivers/exit_codes.hpp"
#include "drivers/fit_setup.hpp"
#include "t3k/io/file_safety.hpp"
#include "t3k/io/fitting_data.hpp"
#include "t3k/io/hdf5_io.hpp"

#include "t3k/algorithms/apply_derivatives.hpp"
#include "t3k/algorithms/probe_derivatives.hpp"
#include "t3k/core/error.hpp"
#include "t3k/optimizers/fitting_problem.hpp"

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace t3k {
namespace cli {

namespace {

using Space = Kokkos::DefaultExecutionSpace;
using Mem = Space::memory_space;

/// What both commands read: the model and this rank's rows of the data file.
struct ModelAndData {
  io::HostT3 x;
  io::FittingData data;
};

/// Reads --model and this rank's rows of --in (collectively: a bad file fails every rank alike) and checks that
/// their mode shapes agree.
ModelAndData read_model_and_data(MeasurementCommandOptions const& opt, Communicator const& comm, bool with_targets,
                                 std::string const& weights) {
  ModelAndData r;
  collectively(comm, command_exit_code, [&] {
    io::require_regular_input(opt.model, "--model");
    io::require_regular_input(opt.in, "--in");
    r.x = io::Reader(opt.model).read_t3();
    io::Reader in(opt.in);
    r.data = io::read_fitting_data(
        in, weights, [&comm](std::size_t n_rows) { return comm.shard_range(n_rows); }, with_targets);
    if (r.data.mode_shapes != r.x.mode_shapes()) {
      throw UsageError(opt.in + ": the " + to_string(r.data.kind) + " are of a tensor of mode shapes " +
                       t3k::impl::shape_string(r.data.mode_shapes) + " but the model " + opt.model + " has " +
                       t3k::impl::shape_string(r.x.mode_shapes()));
    }
  });
  return r;
}

/// The dataset a kind's directions live in ("/entries/p").
std::string directions_of(MeasurementKind kind) { return std::string("/") + to_string(kind) + "/p"; }

}  // namespace

CLI::App* add_predict_command(CLI::App& app, MeasurementCommandOptions& opt) {
  auto* sub = app.add_subcommand("predict",
                                 "read a model (/t3) and the samples of a data file (/entries, /applies or /probes), "
                                 "write the model's values (/entries/values, /applies/values or /jets)");
  sub->add_option("--model", opt.model, "HDF5 file holding the model /t3 (model.h5 of t3k fit)")->required();
  sub->add_option("--in", opt.in, "HDF5 data file of entries, applies or probes")->required();
  sub->add_option("--out", opt.out, "output HDF5 file (written atomically)")->required();
  sub->add_option("--order", opt.order, "jet order K (default: the file's)")
      ->check(CLI::Range(0, static_cast<int>(io::max_jet_order)));
  return sub;
}

CLI::App* add_score_command(CLI::App& app, MeasurementCommandOptions& opt) {
  auto* sub = app.add_subcommand("score",
                                 "read a model (/t3) and a data file, print its loss and relative residual on the "
                                 "file's samples as YAML");
  sub->add_option("--model", opt.model, "HDF5 file holding the model /t3 (model.h5 of t3k fit)")->required();
  sub->add_option("--in", opt.in, "HDF5 data file of entries, applies or probes with their targets")->required();
  sub->add_option("--weights", opt.weights, "dataset of per-sample weights, such as /weights (default: none)");
  return sub;
}

int run_predict(MeasurementCommandOptions const& opt, Communicator const& comm) {
  collectively(comm, command_exit_code, [&] {
    try {
      (void)io::output_target(opt.out, "--out");
    } catch (io::FileError const& e) {
      throw UsageError(e.what());
    }
    for (auto const* input : {&opt.in, &opt.model}) {
      if (io::same_file(*input, opt.out)) {
        throw UsageError("--out: '" + opt.out + "' is an input file ('" + *input +
                         "'); writing it would destroy the input, name another file");
      }
    }
  });
  auto const r = read_model_and_data(opt, comm, false, "");
  auto const& data = r.data;
  std::size_t const order = opt.order >= 0 ? std::size_t(opt.order) : data.order;
  collectively(comm, command_exit_code, [&] {
    if (order >= 1 && data.probes.p.empty()) {
      throw UsageError(opt.in + ": " + directions_of(data.kind) +
                       " (the directions p_i) is missing; jets of order K = " + std::to_string(order) +
                       " need them (pass --order 0 for values alone)");
    }
  });
  Space space;
  auto const x = copy_t3_to<Mem>(space, r.x);
  auto const pp = order >= 1 || data.kind == MeasurementKind::probes ? to_device(data.probes.p)
                                                                     : std::vector<decltype(to_device(io::Matrix()))>();
  std::size_t const w = data.n_file_rows();
  ShardedWriter out(comm, command_exit_code, opt.out);
  if (data.kind == MeasurementKind::probes) {
    io::JetStack jets;
    collectively(comm, command_exit_code, [&] {
      auto const z = probe_derivatives(space, x, to_device(data.probes.w), pp, order);
      for (auto const& zi : z) jets.push_back(to_host(zi));
    });
    for (std::size_t i = 0; i < jets.size(); ++i) out.write_view_rows("/jets/" + std::to_string(i), jets[i]);
  } else {
    io::Matrix values;
    collectively(comm, command_exit_code, [&] {
      // (W, K+1), computed in chunks of samples inside the library.
      values = to_host(data.kind == MeasurementKind::entries
                           ? entry_derivatives(space, x, to_device(data.indices), pp, order)
                           : apply_derivatives(space, x, to_device(data.probes.w), pp, order));
    });
    out.write_view_rows(std::string("/") + to_string(data.kind) + "/values", values);
  }
  out.on_root([&](io::Writer& writer) {
    io::RootAttributes a;
    a.d = std::int64_t(data.mode_shapes.size());
    a.w = std::int64_t(w);
    a.k = std::int64_t(order);
    writer.write_root_attributes(a);
  });
  out.commit();
  return exit_success;
}

int run_score(MeasurementCommandOptions const& opt, Communicator const& comm) {
  if (!opt.weights.empty() && opt.weights[0] != '/') {
    throw UsageError("--weights: must be an absolute HDF5 dataset path such as /weights, got '" + opt.weights + "'");
  }
  ModelAndData r;
  try {
    r = read_model_and_data(opt, comm, true, opt.weights);
  } catch (io::WeightsError const& e) {
    throw UsageError(std::string("--weights: ") + e.what());
  }
  Space space;
  auto const x = copy_t3_to<Mem>(space, r.x);
  fit::Problem problem;
  collectively(comm, command_exit_code, [&] { problem = fit::problem_of(r.data, comm); });
  // Collective for a sharded problem: every rank sums its rows, then one reduction.
  double const loss = evaluate_loss(space, problem, x).loss;
  double const zero = zero_model_loss(space, problem);
  double const relative = zero > 0 ? std::sqrt(loss / zero) : loss > 0 ? std::numeric_limits<double>::infinity() : 0;
  if (comm.rank_index() == 0) {
    // 17 significant digits: the doubles read back exactly.
    fmt::print("kind: {}\nW: {}\nK: {}\nloss: {:.17g}\nzero_loss: {:.17g}\nrelative_residual: {}\n",
               to_string(r.data.kind), r.data.n_file_rows(), r.data.order, loss, zero,
               std::isinf(relative) ? std::string(".inf") : fmt::format("{:.17g}", relative));
  }
  return exit_success;
}

}  // namespace cli
}  // namespace t3k
