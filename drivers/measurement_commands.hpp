#pragma once
/// \file measurement_commands.hpp
/// `t3k predict` and `t3k score`: a model (/t3, as `t3k fit` writes model.h5) evaluated at the samples of a data
/// file of any measurement kind (docs/file-format.md), read by the reader `t3k fit` uses (io::read_fitting_data).
///
/// Under mpirun both shard the samples like jets: each rank reads only its rows, rank 0 alone writes the output
/// file (predict) or prints (score). Exit codes as the other commands (exit_codes.hpp): 2 for bad input, naming the
/// flag or the dataset.

#include "t3k/core/communicator.hpp"

#include <string>

namespace CLI {
class App;
}

namespace t3k {
namespace cli {

struct MeasurementCommandOptions {
  std::string model;    ///< --model: the file holding /t3
  std::string in;       ///< --in: the data file
  std::string out;      ///< --out (predict)
  std::string weights;  ///< --weights (score): a dataset of per-sample weights; empty for none
  int order = -1;       ///< --order (predict); -1: the file's
};

/// Adds `predict`: writes /entries/values or /applies/values (W, K+1), or /jets/\<i\> for probes.
CLI::App* add_predict_command(CLI::App& app, MeasurementCommandOptions& options);
/// Adds `score`: prints kind, W, K, loss, zero_loss and relative_residual as YAML.
CLI::App* add_score_command(CLI::App& app, MeasurementCommandOptions& options);

/// Runs predict (Kokkos initialized). Collective. \return the exit code; **Throws:** as jets does.
int run_predict(MeasurementCommandOptions const& options, Communicator const& comm);
/// Runs score (Kokkos initialized). Collective. \return the exit code; **Throws:** as jets does.
int run_score(MeasurementCommandOptions const& options, Communicator const& comm);

}  // namespace cli
}  // namespace t3k
