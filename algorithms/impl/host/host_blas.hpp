#pragma once
/// \file host_blas.hpp
/// The host BLAS behind Kokkos Kernels' dense products, as it describes itself, and the one setting of it that a user
/// may have to change: which of its kernels OpenBLAS runs.
///
/// Debian's OpenBLAS (a DYNAMIC_ARCH build) picks its kernels from the CPU's family and model number when it is
/// loaded. A CPU newer than the library is a model it does not know, and it falls back to its Prescott kernels (SSE3),
/// several times slower than its AVX2 or AVX-512 ones for every BLAS and LAPACK call of T3K (docs/performance.md). The
/// choice is made before main runs and only the environment variable OPENBLAS_CORETYPE changes it, so T3K cannot fix
/// it for the process it runs in: openblas_core_advice says which value to set, and the t3k tool prints it.

#include "t3k/core/impl/kokkos_compat.hpp"

#include <cstdlib>
#include <string>

// OpenBLAS's self-description: weak references, null where the BLAS linked is not OpenBLAS (or where the library
// is linked without a BLAS), declared outside namespaces so that they name the library's C symbols.
#if defined(__GNUC__) && defined(__ELF__)
extern "C" char* openblas_get_config() __attribute__((weak));
extern "C" char* openblas_get_corename() __attribute__((weak));
#endif

namespace t3k {

/// The vector extensions of the host CPU that decide which of OpenBLAS's x86-64 kernels can run on it.
struct HostCpuVectorFeatures {
  bool avx2_fma = false;     ///< AVX2 and FMA (OpenBLAS's Haswell kernels)
  bool avx512 = false;       ///< AVX-512 F, CD, BW, DQ and VL (its SkylakeX kernels)
  bool avx512_bf16 = false;  ///< and AVX-512 BF16 (its Cooperlake kernels)
};

/// The features of the CPU this process runs on, as the compiler's CPU-detection built-ins report them (which also
/// check that the operating system saves the vector registers); none where the host is not x86-64 or the compiler
/// is not GCC or Clang.
inline HostCpuVectorFeatures host_cpu_vector_features() {
  HostCpuVectorFeatures f;
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  __builtin_cpu_init();
  f.avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  f.avx512 = f.avx2_fma && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vl");
#if defined(__clang__) || __GNUC__ >= 12
  f.avx512_bf16 = f.avx512 && __builtin_cpu_supports("avx512bf16");
#endif
#endif
  return f;
}

/// The OPENBLAS_CORETYPE to set where OpenBLAS runs its fallback kernels (core "Prescott") on a CPU that can run
/// faster ones ("Cooperlake", "SkylakeX" or "Haswell", the fastest these features allow); empty where OpenBLAS's
/// own choice stands: another core, or a CPU without AVX2. A function of its arguments alone (tested).
inline std::string openblas_core_advice(std::string const& openblas_core, HostCpuVectorFeatures const& cpu) {
  if (openblas_core != "Prescott") return std::string();
  if (cpu.avx512_bf16) return "Cooperlake";
  if (cpu.avx512) return "SkylakeX";
  if (cpu.avx2_fma) return "Haswell";
  return std::string();
}

/// The OpenBLAS core this process runs ("Prescott", "SkylakeX", "Zen", ...); empty where Kokkos Kernels calls no
/// BLAS or the BLAS is not OpenBLAS.
inline std::string host_openblas_core() {
#if defined(T3K_HAVE_KOKKOSKERNELS) && defined(KOKKOSKERNELS_ENABLE_TPL_BLAS) && defined(__GNUC__) && defined(__ELF__)
  if (openblas_get_corename != nullptr) return openblas_get_corename();
#endif
  return std::string();
}

/// The host BLAS behind Kokkos Kernels' products as it describes itself ("OpenBLAS 0.3.21 ... DYNAMIC_ARCH ...
/// USE_OPENMP Zen MAX_THREADS=64; core Zen" for OpenBLAS), or why there is none. The core decides how fast T3K's
/// dense products run, so figures from two hosts compare only with it in view (docs/performance.md).
inline std::string host_blas_description() {
#if !defined(T3K_HAVE_KOKKOSKERNELS)
  return "none (no Kokkos Kernels: T3K's plain product kernel)";
#elif !defined(KOKKOSKERNELS_ENABLE_TPL_BLAS)
  return "none (Kokkos Kernels' own kernels)";
#elif defined(__GNUC__) && defined(__ELF__)
  std::string const core = host_openblas_core();
  if (openblas_get_config == nullptr || core.empty()) return "a BLAS other than OpenBLAS";
  return std::string(openblas_get_config()) + "; core " + core;
#else
  return "unknown";
#endif
}

/// A one-sentence warning where this process runs OpenBLAS's fallback kernels on a CPU that has faster ones and the
/// user has not chosen the core (OPENBLAS_CORETYPE unset): what to set; empty otherwise.
inline std::string host_blas_warning() {
  std::string const advice = openblas_core_advice(host_openblas_core(), host_cpu_vector_features());
  if (advice.empty() || std::getenv("OPENBLAS_CORETYPE") != nullptr) return std::string();
  return "OpenBLAS does not know this CPU and runs its Prescott (SSE3) kernels, several times slower than the " +
         advice + " kernels this CPU can run; set OPENBLAS_CORETYPE=" + advice + " in the environment";
}

}  // namespace t3k
