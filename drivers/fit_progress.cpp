/// \file fit_progress.cpp
/// Progress lines and the JSON log of `t3k fit` (fit_progress.hpp).

#include "drivers/fit_progress.hpp"

#include "drivers/errors.hpp"
#include "t3k/io/file_safety.hpp"
#include "t3k/io/hdf5_io.hpp"

#include <fmt/core.h>

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <string>

namespace t3k {
namespace fit {

namespace {

std::string bytes_text(double bytes) {
  char const* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} {}", bytes, units[u]) : fmt::format("{:.1f} {}", bytes, units[u]);
}

/// JSON has no NaN or infinity: they are null.
std::string json_number(double v) { return std::isfinite(v) ? fmt::format("{:.17g}", v) : "null"; }

}  // namespace

Progress::Progress(RunOptions const& options, AllocationTracker const& tracker)
    : quiet_(options.quiet), tty_(!options.force_plain_log && ::isatty(::fileno(stdout)) != 0), tracker_(tracker) {
  if (!options.log_json.empty()) {
    // Appended line by line, never through a symbolic link; a resumed run continues the file.
    try {
      json_ = io::open_log_file(options.log_json, !options.resume, "--log-json");
    } catch (io::FileError const& e) {
      throw FitUsageError(e.what());
    }
  }
}

Progress::~Progress() {
  if (json_) std::fclose(json_);
}

void Progress::operator()(IterationRecord const& r) {
  std::int64_t const peak = tracker_.peak(Mem::name());
  if (json_) {
    fmt::print(json_,
               "{{\"iteration\": {}, \"loss\": {}, \"relative_residual\": {}, \"gradient_norm\": {}, \"step\": {}, "
               "\"elapsed_seconds\": {}, \"chunk_size\": {}, \"peak_memory_bytes\": {}, \"minibatch_loss\": {}, "
               "\"validation_relative_residual\": {}, \"rank_stage\": {}}}\n",
               r.iteration, json_number(r.loss), json_number(r.relative_residual), json_number(r.gradient_norm),
               json_number(r.step), json_number(r.elapsed_seconds), r.chunk_size, peak, json_number(r.minibatch_loss),
               json_number(r.validation_relative_residual), r.rank_stage);
    std::fflush(json_);
  }
  if (quiet_) return;
  if (tty_) {
    if (lines_ % 25 == 0) {
      fmt::print("{:>6}  {:>12}  {:>10}  {:>10}  {:>10}  {:>9}  {:>7}  {:>10}\n", "iter", "loss", "rel.res", "|grad|",
                 "step", "elapsed", "chunk", "peak mem");
    }
    // '>' on every column: fmt would left-align an inf or nan and break the table.
    fmt::print("{:>6}  {:>12.5e}  {:>10.3e}  {:>10.3e}  {:>10.3e}  {:>8.2f}s  {:>7}  {:>10}\n", r.iteration, r.loss,
               r.relative_residual, r.gradient_norm, r.step, r.elapsed_seconds, r.chunk_size, bytes_text(double(peak)));
  } else {
    fmt::print(
        "iteration {} loss {:.6e} relative_residual {:.6e} gradient_norm {:.6e} step {:.6e} elapsed {:.3f} s "
        "chunk {} peak_memory {}{}{}\n",
        r.iteration, r.loss, r.relative_residual, r.gradient_norm, r.step, r.elapsed_seconds, r.chunk_size,
        bytes_text(double(peak)),
        std::isfinite(r.validation_relative_residual)
            ? fmt::format(" validation_relative_residual {:.6e}", r.validation_relative_residual)
            : std::string(),
        r.rank_stage > 0 ? fmt::format(" rank_stage {}", r.rank_stage) : std::string());
  }
  std::fflush(stdout);
  ++lines_;
}

}  // namespace fit
}  // namespace t3k
