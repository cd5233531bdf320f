#pragma once
/// \file fit_progress.hpp
/// The progress of a `t3k fit` run: a table on a terminal, plain lines otherwise, and the --log-json file.

#include "drivers/fit_types.hpp"

#include "t3k/core/memory_tracking.hpp"
#include "t3k/optimizers/optimizer_common.hpp"

#include <cstddef>
#include <cstdio>

namespace t3k {
namespace fit {

/// Reports each iteration record; peak memory comes from `tracker`, which must outlive it.
class Progress {
 public:
  /// Opens the --log-json file (emptied unless resuming). **Throws:** FitUsageError when it cannot be opened.
  Progress(RunOptions const& options, AllocationTracker const& tracker);
  ~Progress();
  Progress(Progress const&) = delete;
  Progress& operator=(Progress const&) = delete;

  void operator()(IterationRecord const& r);

 private:
  bool quiet_, tty_;
  AllocationTracker const& tracker_;
  std::FILE* json_ = nullptr;
  std::size_t lines_ = 0;
};

}  // namespace fit
}  // namespace t3k
