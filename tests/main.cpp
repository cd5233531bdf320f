// GoogleTest main that holds Kokkos for the whole run.
#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <cstdlib>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Kokkos' OpenMP backend prints a warning to stdout when OMP_PROC_BIND is unset. ctest's test discovery reads
  // --gtest_list_tests from stdout, so the warning lines would be registered as (empty, always passing) tests.
  // Unbound threads are what the tests want anyway (CI's machine has two cores shared with the build).
  setenv("OMP_PROC_BIND", "false", 0);
  Kokkos::ScopeGuard kokkos(argc, argv);
  return RUN_ALL_TESTS();
}
