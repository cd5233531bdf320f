#pragma once
/// \file t3k.hpp
/// Umbrella header: the whole public API of T3K.

#include "t3k_version.hpp"

#include "core/chunk_size.hpp"
#include "core/error.hpp"
#include "core/tucker_tensor_train.hpp"
#include "core/uniform_tucker_tensor_train.hpp"

#include "algorithms/probe_derivatives.hpp"
#include "algorithms/random_t3.hpp"
#include "algorithms/t3_linear_algebra.hpp"
#include "algorithms/to_dense.hpp"
