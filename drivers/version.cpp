/// \file version.cpp
/// `t3k --version` (version.hpp).

#include "drivers/version.hpp"

#include "drivers/wait_policy.hpp"

#include "t3k/algorithms/impl/host/host_blas.hpp"
#include "t3k/core/build_info.hpp"
#include "t3k/version.hpp"

#include <fmt/core.h>

#include <Kokkos_Core.hpp>

#include <string>

namespace t3k {
namespace cli {

namespace {

using Space = Kokkos::DefaultExecutionSpace;

}  // namespace

void print_version() {
  fmt::print("t3k {}\n", T3K_VERSION_STRING);
  fmt::print("Kokkos {} (backends: {}; default execution space: {})\n", kokkos_version_string(), kokkos_backends(),
             Space::name());
  fmt::print("host BLAS: {}\n", host_blas_description());
  fmt::print("OpenMP waiting: {}\n", wait_policy_description());
  std::string const blas_warning = host_blas_warning();
  if (!blas_warning.empty()) fmt::print("warning: {}\n", blas_warning);
}

}  // namespace cli
}  // namespace t3k
