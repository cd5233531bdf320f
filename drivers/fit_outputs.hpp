#pragma once
/// \file fit_outputs.hpp
/// The run directory of `t3k fit` (docs/config.md, output): model.h5, history.csv, summary.yaml and
/// convergence.svg, each written atomically.

#include "drivers/fit_config.hpp"
#include "drivers/fit_setup.hpp"
#include "drivers/fit_types.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace t3k {
namespace fit {

using Clock = std::chrono::steady_clock;

/// The names of the files of a run directory.
struct RunFiles {
  static constexpr char const* model = "model.h5";
  static constexpr char const* history = "history.csv";
  static constexpr char const* summary = "summary.yaml";
  static constexpr char const* plot = "convergence.svg";
  static constexpr char const* checkpoint = "checkpoint.h5";
};

/// Seconds of each phase of a run, for summary.yaml.
struct Timings {
  double setup = 0, fit = 0, output = 0, total = 0;
};

/// What summary.yaml reports besides the configuration and the result.
struct RunFacts {
  Timings timings;               ///< setup and fit; output and total are measured while writing
  Clock::time_point start;       ///< of the run, for the total
  std::size_t resumed_from = 0;  ///< the checkpoint's iteration, 0 for a fresh run
  std::int64_t peak_bytes = 0;   ///< peak of Kokkos allocations in the default memory space
  bool checkpointed = false;     ///< whether checkpoint.h5 holds a checkpoint of this run
};

/// Writes model.h5, history.csv, convergence.svg and summary.yaml into `directory`.
/// **Blocking:** yes. **Throws:** io::FileError or FitRuntimeError when a file cannot be written.
void write_run_directory(std::string const& directory, Config const& config, Setup const& setup, Result const& result,
                         RunFacts facts);

/// A resumed run's history: the checkpoint's records before the first new one, then the new ones.
std::vector<IterationRecord> merged_history(std::vector<IterationRecord> const& before,
                                            std::vector<IterationRecord> const& now);

/// One curve of a convergence plot.
struct PlotSeries {
  std::string label;
  std::vector<double> x, y;
};

/// One log-scale panel: its curves, and a reference value drawn as a dashed horizontal line (0: none).
struct PlotPanel {
  std::string label;
  std::vector<PlotSeries> curves;
  double reference = 0;
  std::string reference_label;
};

/// A dashed vertical mark (a rank step) at `x`, labelled in the first panel (e.g. the ranks it moved to).
struct PlotMark {
  double x = 0;
  std::string label;
};

/// A standalone SVG of log-scale panels against a shared linear x axis, with axes, decade ticks, tick labels, axis
/// labels, a legend above a panel that has several curves, dashed vertical marks at `marks` (rank steps) with their
/// labels and a title. The data sit inside the frame with margins. Non-positive or non-finite values break a curve.
std::string convergence_svg(std::string const& title, std::string const& x_label, std::vector<PlotPanel> const& panels,
                            std::vector<PlotMark> const& marks = {});

/// The ranks each rank step of a continuation moved to, from its notes ("rank step at iteration N: Tucker ranks
/// [..] -> [..], TT ranks [..] -> [..]" and "unused ranks dropped at iteration N: Tucker ranks [..], TT ranks [..]"),
/// as "Tucker 2-3-2, TT 1-2-2-1" by iteration.
std::map<std::size_t, std::string> rank_step_labels(std::vector<std::string> const& notes);

}  // namespace fit
}  // namespace t3k
