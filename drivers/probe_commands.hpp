#pragma once
/// \file probe_commands.hpp
/// The commands on probe sets (docs/file-format.md lists what each reads and writes): `t3k jets` (a T3's probe
/// jets), `t3k frame` (its orthogonal frame), `t3k jv` (J v of a tangent variation) and `t3k jtr` (J^T r, summed or
/// per probe). They share their flags, the check of --in and --out and the copies of frames and variations between
/// the host and the default memory space.
///
/// Under mpirun jets, jv and jtr shard the probes: each rank reads only its rows and rank 0 alone writes the output
/// file, equal to the single-process one (collective.hpp); frame has no probe set to share. Exit codes as the other
/// commands (exit_codes.hpp): 2 for bad input, naming the flag or the dataset.

#include "t3k/core/communicator.hpp"

#include <string>

namespace CLI {
class App;
}

namespace t3k {
namespace cli {

/// The flags of jets, frame, jv and jtr (each command reads those it registers).
struct ProbeCommandOptions {
  std::string in;                   ///< --in: the input file
  std::string out;                  ///< --out: the output file (written atomically)
  int order = -1;                   ///< --order (jets, jv); -1: the order attribute of /probes
  std::string chunk_size = "auto";  ///< --chunk-size (jtr): auto, none or a positive integer
  bool per_probe = false;           ///< --per-probe (jtr): one gradient per probe instead of the sum
};

/// The subcommands add_probe_commands registers, to compare with the one selected.
struct ProbeCommands {
  CLI::App* jets = nullptr;
  CLI::App* frame = nullptr;
  CLI::App* jv = nullptr;
  CLI::App* jtr = nullptr;
};

/// Adds jets, frame, jv and jtr to `app`, storing their flags in `options` (which must outlive parsing).
ProbeCommands add_probe_commands(CLI::App& app, ProbeCommandOptions& options);

/// Runs jets: reads /t3 and /probes, writes /jets. Kokkos initialized. Collective. \return the exit code.
int run_jets(ProbeCommandOptions const& opt, Communicator const& comm);
/// Runs frame: reads /t3, writes /frame. Kokkos initialized; on one rank. \return the exit code.
int run_frame(ProbeCommandOptions const& opt);
/// Runs jv: reads /frame, /variation and /probes, writes /tangent_jets. Kokkos initialized. Collective.
/// \return the exit code.
int run_jv(ProbeCommandOptions const& opt, Communicator const& comm);
/// Runs jtr: reads /frame, /probes and /residual, writes /grad or /grad_per_probe. Kokkos initialized. Collective.
/// \return the exit code.
int run_jtr(ProbeCommandOptions const& opt, Communicator const& comm);

}  // namespace cli
}  // namespace t3k
