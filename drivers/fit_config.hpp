#pragma once
/// \file fit_config.hpp
/// The YAML configuration of `t3k fit` (docs/config.md): schema, parsing and validation.
///
/// Loading checks everything that can be checked without reading data: unknown keys, missing keys, wrong types and
/// out-of-range values. Every problem is reported as one `ConfigError` whose message names the file, the YAML line
/// and column (1-based) and the key path ("run.yaml:12:5: optimizer.cg_rtol: must be a number > 0, got -1"); the
/// driver exits with code 2 on it. Checks that need the data (shapes of an HDF5 probe set or initial T3) are made
/// later by the driver, which reports them through `Config::error_at` with the same format.
///
/// This header does not include yaml-cpp.

#include "drivers/errors.hpp"
#include "drivers/optimizer_keys.hpp"

#include "t3k/core/chunk_size.hpp"
#include "t3k/core/measurement_kind.hpp"
#include "t3k/core/mode_sharing.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace t3k {
namespace fit {

enum class ProblemSource { synthetic, data };
enum class InitKind { random, file, truth_perturbation };

/// problem.synthetic: a planted random T3 and its jets at random samples of one measurement kind.
struct SyntheticProblem {
  MeasurementKind kind = MeasurementKind::probes;  ///< what each of the n_probes samples measures
  std::vector<std::size_t> mode_shapes, tucker_ranks, tt_ranks;
  std::size_t order = 2;
  std::size_t n_probes = 0;
  double noise = 0;
  std::uint64_t seed = 0;
};

/// problem.data: an HDF5 data file of entries, applies or probes with their targets and optional weights
/// (docs/file-format.md); the kind is the file's.
struct DataProblem {
  std::string file;                  ///< as written in the config
  std::string resolved_file;         ///< relative to the config file's directory
  std::optional<std::size_t> order;  ///< must agree with the file when given
  std::string weights;               ///< dataset of per-probe weights (W), empty for none
};

/// One bound of a rank range: one number for every mode (TT: every interior bond) or a full list.
struct RankBound {
  std::size_t all = 0;            ///< > 0: this number everywhere
  std::vector<std::size_t> list;  ///< otherwise: d (Tucker) or d + 1 (TT) entries
  /// The full list for d modes (TT: boundary ranks 1).
  std::vector<std::size_t> expand(std::size_t d, bool tt) const;
};

/// model.tucker_ranks / tt_ranks given as {start, max}: rank continuation.
struct RankRange {
  RankBound start, max;
};

struct ModelConfig {
  /// Fixed ranks, or with rank continuation the start ranks (filled in once d is known).
  std::optional<std::vector<std::size_t>> tucker_ranks, tt_ranks;
  std::optional<RankRange> tucker_range, tt_range;  ///< rank continuation (both or neither)
  RankContinuation continuation;                    ///< stage controls; max ranks filled in once d is known
  InitKind init = InitKind::random;
  std::uint64_t seed = 0;  ///< random and truth_perturbation
  std::string file;        ///< init file as written
  std::string resolved_file;
  double perturbation = 0;  ///< truth_perturbation EPS
  /// model.sharing: one label per mode, modes with equal labels share a Tucker factor (absent: none).
  std::optional<std::vector<long long>> sharing;
};

/// optimizer: the options of the optimizer it names, typed (optimizer_keys.hpp); keys the file leaves out keep the
/// option struct's defaults. The driver sets chunk_size and callback of the common options itself.
struct OptimizerConfig {
  OptimizerChoice options;
  /// The keys the file gives: summary.yaml and the checkpoint fingerprint echo these and no defaults, so that a
  /// fingerprint stays the same when a default changes.
  std::set<std::string> given;

  std::string name() const { return optimizer_name(options); }
  OptimizerOptions const& common() const {
    return std::visit([](auto const& o) -> OptimizerOptions const& { return o.common; }, options);
  }
};

enum class ValidationSource { none, fraction, count, file };

/// validation: held-out probes of the problem (a fraction or a count, drawn by seed) or a separate data file.
struct ValidationConfig {
  ValidationSource source = ValidationSource::none;
  double fraction = 0;
  std::size_t count = 0;
  std::string file, resolved_file;
  std::uint64_t seed = 0;
  std::size_t patience = 0;
};

struct OutputConfig {
  std::string directory;           ///< as written
  std::string resolved_directory;  ///< relative to the config file's directory
  std::size_t checkpoint_every = 0;
};

/// The most host threads Kokkos' OpenMP backend holds a slot for (its thread table has 512 entries).
constexpr int max_kokkos_threads = 512;
/// The largest configuration file read (a configuration is a few hundred bytes).
constexpr long max_config_bytes = 1L << 20;

struct KokkosConfig {
  std::optional<int> threads;
  std::optional<int> device;
};

/// A loaded, validated configuration.
struct Config {
  std::string file;  ///< path of the YAML file
  ProblemSource source = ProblemSource::synthetic;
  SyntheticProblem synthetic;
  DataProblem data;
  /// problem.order_weights: omega_0 .. omega_K, each finite and >= 0, one > 0; empty: all ones (a data problem's K
  /// is checked against the file once it is read).
  std::vector<double> order_weights;
  ModelConfig model;
  ValidationConfig validation;
  OptimizerConfig optimizer;
  /// Probes per J^T pass as the file asks (auto, none or a count); what runs is the count rounded to whole reduction
  /// blocks (FitResult::chunk_size).
  ChunkSize chunk_size = ChunkSize::automatic();
  OutputConfig output;
  KokkosConfig kokkos;
  /// Where each key path given in the file is ("optimizer.cg_rtol" -> 12:5); sections too.
  std::map<std::string, Location> locations;

  /// A ConfigError at `key_path` (its location, or its nearest located parent's).
  ConfigError error_at(std::string const& key_path, std::string const& message) const;
  /// The resolved configuration (defaults filled in) as YAML text, for summary.yaml.
  std::string to_yaml() const;
  /// What a checkpoint must agree with to be resumed: everything but max_iterations, the tolerances, the output
  /// and Kokkos settings.
  std::string fingerprint() const;
};

/// The keys in which two fingerprints (Config::fingerprint) differ, for one line of a refused --resume:
/// "optimizer.batch_size (50 in the checkpoint, 40 now), problem.synthetic.seed (11 in the checkpoint, 12 now)".
std::string fingerprint_changes(std::string const& checkpoint, std::string const& now);

/// The sharing of model.sharing for a model of these mode shapes and Tucker ranks (`ranks_from` names where the ranks
/// come from, for messages); the trivial sharing when the configuration has none.
/// **Throws:** ConfigError at model.sharing for a label count other than d, modes of different sizes or Tucker ranks
/// in one group.
ModeSharing model_sharing(Config const& config, std::vector<std::size_t> const& mode_shapes,
                          std::vector<std::size_t> const& tucker_ranks, std::string const& ranks_from);

/// The start and maximum ranks of a rank continuation for a problem of these mode shapes.
struct ResolvedRanks {
  std::vector<std::size_t> tucker, tt, max_tucker, max_tt;
};
/// Expands model.tucker_ranks / tt_ranks {start, max} for d = mode_shapes.size() modes and checks them (list
/// lengths, boundary TT ranks 1, start <= max, Tucker maxima <= N_i). **Throws:** ConfigError at the key.
ResolvedRanks resolve_ranks(Config const& config, std::vector<std::size_t> const& mode_shapes);

/// model_sharing for a rank continuation: the start and the maximum Tucker ranks are both equal within every group
/// (a group grows as one edge). **Throws:** ConfigError at model.sharing naming the ranks at fault.
ModeSharing continuation_sharing(Config const& config, std::vector<std::size_t> const& mode_shapes,
                                 ResolvedRanks const& ranks);

/// Parses and validates YAML text; `file` names it in messages and anchors relative paths.
/// **Throws:** ConfigError, and nothing else.
Config parse_config(std::string const& text, std::string const& file);
/// Reads and parses a file. **Throws:** ConfigError (also when the file cannot be read).
Config load_config(std::string const& path);

}  // namespace fit
}  // namespace t3k
