// The host BLAS's self-description and the OPENBLAS_CORETYPE advice (t3k/algorithms/impl/host/host_blas.hpp): the
// advice as a function of OpenBLAS's core and the CPU's vector features, the description and the core read from the
// library agreeing, and the warning following the advice and the environment. tests/test_cli.cpp checks that a child
// process started with OPENBLAS_CORETYPE set runs the core it names and reports it.
#include "t3k/algorithms/impl/host/host_blas.hpp"

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <cstdlib>
#include <string>

namespace {

using t3k::HostCpuVectorFeatures;
using t3k::openblas_core_advice;

HostCpuVectorFeatures features(bool avx2_fma, bool avx512, bool avx512_bf16) {
  HostCpuVectorFeatures f;
  f.avx2_fma = avx2_fma;
  f.avx512 = avx512;
  f.avx512_bf16 = avx512_bf16;
  return f;
}

TEST(HostBlas, AdviceNamesTheFastestCoreTheCpuRunsOnlyForTheFallback) {
  // The fallback core on CPUs of each kind: the fastest kernels those features run.
  EXPECT_EQ(openblas_core_advice("Prescott", features(true, true, true)), "Cooperlake");
  EXPECT_EQ(openblas_core_advice("Prescott", features(true, true, false)), "SkylakeX");
  EXPECT_EQ(openblas_core_advice("Prescott", features(true, false, false)), "Haswell");
  // A CPU without AVX2 has nothing faster to run.
  EXPECT_EQ(openblas_core_advice("Prescott", features(false, false, false)), "");
  // A core OpenBLAS chose itself stands, whatever the CPU.
  for (char const* core : {"Haswell", "SkylakeX", "Cooperlake", "Zen", "Sandybridge", ""}) {
    EXPECT_EQ(openblas_core_advice(core, features(true, true, true)), "") << core;
  }
}

TEST(HostBlas, DescriptionEndsWithTheCoreTheLibraryRuns) {
#ifdef T3K_HAVE_KOKKOSKERNELS
  // A product through Kokkos Kernels first, so that this program loads the BLAS it calls (linkers drop a library
  // no code refers to) and the description is that of the BLAS T3K's products run on.
  Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> a("a", 2, 2), b("b", 2, 2), c("c", 2, 2);
  a(0, 0) = 1, a(0, 1) = 2, a(1, 0) = 3, a(1, 1) = 4;
  b(0, 0) = 5, b(0, 1) = 6, b(1, 0) = 7, b(1, 1) = 8;
  KokkosBlas::gemm("N", "N", 1.0, a, b, 0.0, c);
  Kokkos::fence();
  EXPECT_EQ(c(0, 0), 19.0);
  EXPECT_EQ(c(0, 1), 22.0);
  EXPECT_EQ(c(1, 0), 43.0);
  EXPECT_EQ(c(1, 1), 50.0);
#endif
  std::string const description = t3k::host_blas_description();
  std::string const core = t3k::host_openblas_core();
  ASSERT_FALSE(description.empty());
  if (description.rfind("OpenBLAS", 0) == 0) {
    ASSERT_FALSE(core.empty());
    std::string const tail = "; core " + core;
    ASSERT_GE(description.size(), tail.size());
    EXPECT_EQ(description.substr(description.size() - tail.size()), tail) << description;
  } else {
    EXPECT_TRUE(core.empty()) << description << " / " << core;
  }
}

TEST(HostBlas, WarningFollowsTheAdviceUnlessTheUserChoseTheCore) {
  char const* const set = std::getenv("OPENBLAS_CORETYPE");
  std::string const saved = set != nullptr ? set : "";
  std::string const advice = openblas_core_advice(t3k::host_openblas_core(), t3k::host_cpu_vector_features());

  ::unsetenv("OPENBLAS_CORETYPE");
  std::string const unset_warning = t3k::host_blas_warning();
  ::setenv("OPENBLAS_CORETYPE", "Prescott", 1);
  std::string const chosen_warning = t3k::host_blas_warning();
  if (set != nullptr) {
    ::setenv("OPENBLAS_CORETYPE", saved.c_str(), 1);
  } else {
    ::unsetenv("OPENBLAS_CORETYPE");
  }

  EXPECT_EQ(chosen_warning, "") << "OPENBLAS_CORETYPE is the user's choice";
  if (advice.empty()) {
    EXPECT_EQ(unset_warning, "");
  } else {
    EXPECT_NE(unset_warning.find("OPENBLAS_CORETYPE=" + advice), std::string::npos) << unset_warning;
  }
}

}  // namespace
