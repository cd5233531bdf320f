#pragma once
/// \file wait_policy.hpp
/// How the OpenMP threads of `t3k` wait between parallel regions. Kokkos' OpenMP backend opens one parallel region
/// per kernel and a fit runs thousands of short ones; by default libgomp's idle threads spin (about 300000 rounds)
/// before they sleep, and on a machine whose cores other processes share that spinning takes the core from the
/// thread every other one waits for. Under such load even a spin of 1000 rounds made a fit several times slower than
/// sleeping at once (perf/busy_machine.py; docs/performance.md, "Running beside other work"), so `t3k` sleeps.
///
/// libgomp reads its environment once, when it is loaded, before `main`: so `t3k` sets the default and executes
/// itself again (the same program, the same arguments, the same process), and only when the user set neither
/// OMP_WAIT_POLICY nor GOMP_SPINCOUNT.

#include <optional>
#include <string>

namespace t3k {
namespace cli {

/// The variable and value `t3k` sets when the user sets no waiting policy: idle threads sleep at once.
inline constexpr char const* default_wait_variable = "OMP_WAIT_POLICY";
inline constexpr char const* default_wait_value = "passive";

/// First thing in `main`, before MPI or Kokkos start: when neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set,
/// sets the default and executes /proc/self/exe with `argv` unchanged. The process keeps its id, open files,
/// signal mask and ignored signals, so callers (a shell, mpirun) see no difference.
/// **Blocking:** returns only when no new image was executed: a variable was set, or exec failed (the environment
/// is then restored and `t3k` runs with the runtime's own default).
void apply_default_wait_policy(char** argv);

/// The waiting policy the OpenMP runtime read: OMP_WAIT_POLICY and GOMP_SPINCOUNT as this process image started
/// with them (/proc/self/environ; the current environment where that cannot be read), e.g.
/// "OMP_WAIT_POLICY=passive (t3k's default)" or "GOMP_SPINCOUNT=300000 (from the environment)".
std::string wait_policy_description();

/// The value of `name` in the environment this process image started with; nullopt when unset.
std::optional<std::string> startup_environment(char const* name);

}  // namespace cli
}  // namespace t3k
