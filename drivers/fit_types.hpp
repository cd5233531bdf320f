#pragma once
/// \file fit_types.hpp
/// The spaces and types `t3k fit` runs with: double precision in the default execution space.

#include "t3k/optimizers/optimizer_common.hpp"

#include <Kokkos_Core.hpp>

namespace t3k {
namespace fit {

using Space = Kokkos::DefaultExecutionSpace;
using Mem = Space::memory_space;
using DeviceT3 = TuckerTensorTrain<double, Mem>;
using Problem = FittingProblem<double, Mem>;
using Checkpoint = OptimizerCheckpoint<double, Mem>;
using Control = CheckpointControl<double, Mem>;
using Result = FitResult<double, Mem>;

}  // namespace fit
}  // namespace t3k
