/// \file estimate_chunk_command.cpp
/// `t3k estimate-chunk` (estimate_chunk_command.hpp).

#include "drivers/estimate_chunk_command.hpp"

#include "drivers/errors.hpp"
#include "drivers/flag_checks.hpp"
#include "t3k/io/file_safety.hpp"
#include "t3k/io/hdf5_io.hpp"

#include "t3k/algorithms/estimate_chunk_size.hpp"
#include "t3k/core/error.hpp"

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

namespace t3k {
namespace cli {

namespace {

using Space = Kokkos::DefaultExecutionSpace;

/// A byte count: a positive number with an optional unit B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB
/// (powers of 1024), such as "4GB" or "1.5 GiB". **Throws:** UsageError naming `flag`.
std::uint64_t parse_bytes(std::string const& text, char const* flag) {
  std::string const what =
      std::string(flag) + ": must be a positive byte count such as 4096, 512MB or 4GiB, got '" + text + "'";
  std::size_t pos = 0;
  long double value = 0;
  try {
    value = std::stold(text, &pos);
  } catch (...) {
    throw UsageError(what);
  }
  std::string unit = text.substr(pos);
  unit.erase(0, unit.find_first_not_of(' '));
  struct Unit {
    char const* name;
    long double scale;
  };
  static Unit const units[] = {
      {"", 1},       {"B", 1},         {"KB", 1e3L},        {"MB", 1e6L},           {"GB", 1e9L},
      {"TB", 1e12L}, {"KiB", 1024.0L}, {"MiB", 1048576.0L}, {"GiB", 1073741824.0L}, {"TiB", 1099511627776.0L}};
  long double scale = 0;
  for (auto const& u : units) {
    if (unit == u.name) scale = u.scale;
  }
  // Digits only before the unit: stold also reads "nan", "inf" and hexadecimal.
  bool const plain = text.find_first_of("nNiIxXpP") == std::string::npos || pos < text.find_first_of("nNiIxXpP");
  if (scale == 0 || !plain || !std::isfinite(double(value)) || !(value > 0)) throw UsageError(what);
  long double const bytes = value * scale;
  if (bytes >= 18446744073709551616.0L) {
    throw UsageError(std::string(flag) + ": " + text + " is more than 2^64 - 1 bytes");
  }
  return std::uint64_t(bytes);
}

int estimate_chunk(EstimateChunkOptions const& opt) {
  // One extent whose float64 entries alone pass 2^64 bytes: named here; larger products are refused by the model.
  for (auto const& [flag, values] :
       {std::make_pair("--mode-shapes", &opt.mode_shapes), std::make_pair("--tucker-ranks", &opt.tucker_ranks),
        std::make_pair("--tt-ranks", &opt.tt_ranks)}) {
    for (std::size_t v : *values) {
      if (!io::checked_product(v, sizeof(double) * 2)) {
        throw UsageError(std::string(flag) + ": " + std::to_string(v) +
                         " is too large: its entries alone pass 2^64 bytes");
      }
    }
  }
  std::uint64_t const max_bytes = opt.max_bytes.empty() ? 0 : parse_bytes(opt.max_bytes, "--max-bytes");
  auto const scalar = opt.scalar == "float" ? t3k::ScalarType::float32 : t3k::ScalarType::float64;
  std::size_t const n_probes = opt.n_probes, n_tangent = opt.n_tangent, n_shards = opt.n_shards;
  auto const order = static_cast<std::size_t>(opt.order);
  // Chunks on this build's default space are multiples of its reduction block (64 probes on host backends, 2048 on
  // device backends).
  constexpr std::size_t block = t3k::reduction_block_size_for<Space>();
  auto const model = t3k::transpose_memory_model(opt.mode_shapes, opt.tucker_ranks, opt.tt_ranks, order, n_tangent,
                                                 true, scalar, block);
  // chunk_size is what `--chunk-size auto` runs at on this build's default space (on host backends the balance
  // estimate capped to a cache-sized workspace); balance_chunk_size is the memory policy alone.
  std::size_t const balance = t3k::estimate_chunk_size(opt.mode_shapes, opt.tucker_ranks, opt.tt_ranks, order, n_probes,
                                                       n_tangent, n_shards, scalar, block);
  std::size_t const chunk = t3k::automatic_chunk_size<Space>(opt.mode_shapes, opt.tucker_ranks, opt.tt_ranks, order,
                                                             n_probes, n_tangent, n_shards, scalar);
  std::size_t const rows = (n_probes + n_shards - 1) / n_shards;
  // Every figure before the first line: a size past 2^64 fails the command, not half of its output.
  std::size_t const peak_none = model.peak_bytes(rows, rows), peak_auto = model.peak_bytes(rows, chunk);
  std::size_t capped = 0;
  if (max_bytes > 0) {
    try {
      capped = t3k::max_chunk_size_within(opt.mode_shapes, opt.tucker_ranks, opt.tt_ranks, order, n_probes, max_bytes,
                                          n_tangent, n_shards, scalar, block);
    } catch (t3k::InvalidArgument const& e) {
      throw UsageError(std::string("--max-bytes: ") + e.what());
    }
  }
  fmt::print("chunk_size: {}\n", chunk);
  fmt::print("balance_chunk_size: {}\n", balance);
  fmt::print("probe_rows_per_shard: {}\n", rows);
  fmt::print("reduction_block: {}\n", block);
  fmt::print("bytes_per_row:\n  input: {}\n  sweep: {}\n  assembly: {}\n", model.input_bytes_per_row,
             model.sweep_bytes_per_row, model.assembly_bytes_per_row);
  fmt::print("fixed_bytes: {}\n", model.fixed_bytes);
  fmt::print("peak_bytes:\n  chunk_none: {}\n  chunk_auto: {}\n", peak_none, peak_auto);
  if (max_bytes > 0) {
    fmt::print("max_chunk_size_within: {}\n", capped);
  }
  return exit_success;
}

}  // namespace

CLI::App* add_estimate_chunk_command(CLI::App& app, EstimateChunkOptions& opt) {
  auto* estimate = app.add_subcommand(
      "estimate-chunk", "print the automatic chunk size of J^T, the bytes per probe row of each stage and the peaks");
  estimate->add_option("--mode-shapes", opt.mode_shapes, "N_0 .. N_{d-1}")->required()->delimiter(',');
  estimate->add_option("--tucker-ranks", opt.tucker_ranks, "n_0 .. n_{d-1}")->required()->delimiter(',');
  estimate->add_option("--tt-ranks", opt.tt_ranks, "r_0 .. r_d")->required()->delimiter(',');
  estimate->add_option("--order", opt.order, "jet order K")
      ->required()
      ->check(integer_in(0, static_cast<long long>(io::max_jet_order)));
  estimate->add_option("--n-probes", opt.n_probes, "probes W")->required()->check(integer_at_least(1));
  estimate->add_option("--n-tangent", opt.n_tangent, "residual stacks per call")->check(integer_at_least(1));
  estimate->add_option("--n-shards", opt.n_shards, "MPI ranks sharing the probes")->check(integer_at_least(1));
  estimate->add_option("--scalar", opt.scalar, "float or double")->check(CLI::IsMember({"float", "double"}));
  estimate->add_option("--max-bytes", opt.max_bytes,
                       "also print the largest chunk whose peak stays within this many bytes (units B, KB, MB, GB, "
                       "TB, KiB, MiB, GiB, TiB)");
  return estimate;
}

int run_estimate_chunk(EstimateChunkOptions const& opt) {
  try {
    return estimate_chunk(opt);
  } catch (t3k::InvalidArgument const& e) {
    throw UsageError(std::string("--mode-shapes, --tucker-ranks, --tt-ranks, --order, --n-probes: ") + e.what());
  } catch (t3k::DimensionMismatch const& e) {
    throw UsageError(std::string("--mode-shapes, --tucker-ranks, --tt-ranks: ") + e.what());
  }
}

}  // namespace cli
}  // namespace t3k
