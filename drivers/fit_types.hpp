#pragma once
/// \file fit_types.hpp
/// The spaces and types `t3k fit` runs with (double precision in the default execution space), and its flags.

#include "t3k/optimizers/optimizer_common.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>

namespace t3k {
namespace fit {

using Space = Kokkos::DefaultExecutionSpace;
using Mem = Space::memory_space;
using DeviceT3 = TuckerTensorTrain<double, Mem>;
using Problem = FittingProblem<double, Mem>;
using Checkpoint = OptimizerCheckpoint<double, Mem>;
using Control = CheckpointControl<double, Mem>;
using Result = FitResult<double, Mem>;

/// Flags of `t3k fit` beyond the configuration.
struct RunOptions {
  bool resume = false;           ///< continue from output.directory/checkpoint.h5
  bool quiet = false;            ///< no progress lines and no closing report
  std::string log_json;          ///< one JSON object per iteration to this file ("" = none)
  std::size_t stop_after = 0;    ///< test aid: exit 3 right after the checkpoint of this iteration is written (0: off)
  bool force_plain_log = false;  ///< plain log lines even on a terminal
};

}  // namespace fit
}  // namespace t3k
