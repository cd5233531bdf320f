#pragma once
/// \file t3k.hpp
/// Umbrella header: the whole public API of T3K.

#include "t3k_version.hpp"

#include "core/chunk_size.hpp"
#include "core/error.hpp"
#include "core/memory_tracking.hpp"
#include "core/orthogonal_frame.hpp"
#include "core/t3_variation.hpp"
#include "core/tucker_tensor_train.hpp"
#include "core/uniform_tucker_tensor_train.hpp"

#include "algorithms/estimate_chunk_size.hpp"
#include "algorithms/gauge_projection.hpp"
#include "algorithms/orthogonal_frame.hpp"
#include "algorithms/orthogonalize.hpp"
#include "algorithms/probe_derivatives.hpp"
#include "algorithms/probe_derivatives_transpose.hpp"
#include "algorithms/random_t3.hpp"
#include "algorithms/retraction.hpp"
#include "algorithms/t3_linear_algebra.hpp"
#include "algorithms/t3_svd.hpp"
#include "algorithms/t3_tangent.hpp"
#include "algorithms/tangent_probe_derivatives.hpp"
#include "algorithms/tangent_space_projection.hpp"
#include "algorithms/tangent_to_t3.hpp"
#include "algorithms/to_dense.hpp"
#include "algorithms/variation_operations.hpp"

#include "optimizers/adam.hpp"
#include "optimizers/fitting_problem.hpp"
#include "optimizers/gradient_descent.hpp"
#include "optimizers/mc_sgd.hpp"
#include "optimizers/minibatches.hpp"
#include "optimizers/newton_cg.hpp"
#include "optimizers/optimizer_common.hpp"
#include "optimizers/planted_problem.hpp"
