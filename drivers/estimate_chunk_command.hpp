#pragma once
/// \file estimate_chunk_command.hpp
/// `t3k estimate-chunk`: the memory model of J^T for given shapes (docs/math.md, chunking), no data needed: the
/// chunk size `--chunk-size auto` runs at on this build, the bytes per probe row of each stage and the peaks. Sizes
/// whose byte counts pass 2^64 are refused, never wrapped. Runs on rank 0 under mpirun.

#include <cstddef>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace t3k {
namespace cli {

struct EstimateChunkOptions {
  std::vector<std::size_t> mode_shapes;   ///< --mode-shapes N_0 .. N_{d-1}
  std::vector<std::size_t> tucker_ranks;  ///< --tucker-ranks n_0 .. n_{d-1}
  std::vector<std::size_t> tt_ranks;      ///< --tt-ranks r_0 .. r_d
  int order = -1;                         ///< --order K (required)
  std::size_t n_probes = 0;               ///< --n-probes W
  std::size_t n_tangent = 1;              ///< --n-tangent: residual stacks per call
  std::size_t n_shards = 1;               ///< --n-shards: MPI ranks sharing the probes
  std::string scalar = "double";          ///< --scalar: float or double
  std::string max_bytes;                  ///< --max-bytes; empty: not given
};

/// Adds `estimate-chunk` to `app`, storing its flags in `options` (which must outlive parsing).
/// \return the subcommand.
CLI::App* add_estimate_chunk_command(CLI::App& app, EstimateChunkOptions& options);

/// Prints the estimate as YAML (Kokkos initialized). \return the exit code. **Throws:** UsageError naming the
/// flags the library refuses.
int run_estimate_chunk(EstimateChunkOptions const& opt);

}  // namespace cli
}  // namespace t3k
