#pragma once
/// \file version.hpp
/// `t3k --version`: what a bug report needs to know of this build and this machine.

namespace t3k {
namespace cli {

/// Prints the T3K and Kokkos versions, the enabled backends, the host BLAS and the OpenMP waiting policy, and the
/// host BLAS warning when there is one. Needs no Kokkos initialization.
void print_version();

}  // namespace cli
}  // namespace t3k
