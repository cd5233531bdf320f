#pragma once
/// \file build_info.hpp
/// What a build of T3K runs on, for version lines and run records: the Kokkos version and its enabled backends.

#include "t3k/core/impl/kokkos_compat.hpp"

#include <string>

namespace t3k {

/// The Kokkos version T3K was compiled against, "major.minor.patch".
inline std::string kokkos_version_string() {
  int const v = KOKKOS_VERSION;
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
}

/// Kokkos' enabled backends in Kokkos' own spelling (Serial, OpenMP, Threads, Cuda, HIP, SYCL), joined by
/// `separator`.
inline std::string kokkos_backends(std::string const& separator = " ") {
  std::string b;
  auto const add = [&](char const* name) { b += (b.empty() ? std::string() : separator) + name; };
#ifdef KOKKOS_ENABLE_SERIAL
  add("Serial");
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  add("OpenMP");
#endif
#ifdef KOKKOS_ENABLE_THREADS
  add("Threads");
#endif
#ifdef KOKKOS_ENABLE_CUDA
  add("Cuda");
#endif
#ifdef KOKKOS_ENABLE_HIP
  add("HIP");
#endif
#ifdef KOKKOS_ENABLE_SYCL
  add("SYCL");
#endif
  (void)add;
  return b;
}

}  // namespace t3k
