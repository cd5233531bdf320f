/// \file fit_run.cpp
/// The order of work of `t3k fit` once its configuration is loaded: the run directory and --resume checks, the
/// problem (fit_setup.hpp), the optimizer with progress (fit_progress.hpp) and checkpoints (fit_checkpoint.hpp),
/// and the outputs (fit_outputs.hpp).

#include "drivers/fit_run.hpp"

#include "drivers/collective.hpp"
#include "drivers/exit_codes.hpp"
#include "drivers/fit_checkpoint.hpp"
#include "drivers/fit_outputs.hpp"
#include "drivers/fit_progress.hpp"
#include "drivers/fit_setup.hpp"
#include "drivers/fit_types.hpp"
#include "t3k/io/file_safety.hpp"
#include "t3k/io/hdf5_io.hpp"

#include "t3k/algorithms/impl/host/host_blas.hpp"
#include "t3k/core/chunk_size.hpp"
#include "t3k/core/memory_tracking.hpp"
#include "t3k/optimizers/adam.hpp"
#include "t3k/optimizers/gradient_descent.hpp"
#include "t3k/optimizers/mc_sgd.hpp"
#include "t3k/optimizers/newton_cg.hpp"

#include <fmt/core.h>
#include <Kokkos_Core.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <variant>

#include <unistd.h>

namespace t3k {
namespace fit {

namespace {

namespace fs = std::filesystem;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

/// The signal that asked the fit to stop (0: none), noted by the handler and read between iterations: a lock-free
/// atomic, which a signal handler may store to.
std::atomic<int> interrupting_signal{0};
static_assert(ATOMIC_INT_LOCK_FREE == 2, "the interrupt flag must be lock-free to be set in a signal handler");

void note_interrupt(int signal_number) {
  interrupting_signal.store(signal_number);
  // write(2) is async-signal-safe; what it returns is of no use here.
  static char const message[] =
      "\nt3k fit: stopping after this iteration and writing the outputs (signal again to quit now)\n";
  ssize_t const written = ::write(STDERR_FILENO, message, sizeof message - 1);
  (void)written;
}

/// While a fit runs, SIGINT and SIGTERM end it after the current iteration, with its outputs written and (with
/// checkpoint_every) its stop checkpointed: the handler only notes the signal, and is reset by it, so that a second
/// signal ends the process at once. A signal ignored when the fit starts (SIGINT of a background job) stays ignored.
class InterruptHandlers {
 public:
  InterruptHandlers() {
    interrupting_signal.store(0);
    for (std::size_t k = 0; k < 2; ++k) {
      struct sigaction handler {};
      handler.sa_handler = note_interrupt;
      sigemptyset(&handler.sa_mask);
      handler.sa_flags = SA_RESETHAND;
      installed_[k] = sigaction(signals_[k], nullptr, &previous_[k]) == 0 && previous_[k].sa_handler != SIG_IGN &&
                      sigaction(signals_[k], &handler, nullptr) == 0;
    }
  }
  ~InterruptHandlers() {
    for (std::size_t k = 0; k < 2; ++k) {
      if (installed_[k]) sigaction(signals_[k], &previous_[k], nullptr);
    }
  }
  InterruptHandlers(InterruptHandlers const&) = delete;
  InterruptHandlers& operator=(InterruptHandlers const&) = delete;

 private:
  int const signals_[2] = {SIGINT, SIGTERM};
  struct sigaction previous_[2]{};
  bool installed_[2] = {false, false};
};

char const* signal_name(int signal_number) { return signal_number == SIGINT ? "SIGINT" : "SIGTERM"; }

/// A minibatch larger than the probe set is refused; a synthetic problem's is refused already when the
/// configuration is loaded, a data problem's only now that W is known.
void check_batch_size(Config const& config, Problem const& problem, std::size_t batch_size) {
  if (batch_size > problem.n_global_probes()) {
    throw config.error_at("optimizer.batch_size", "is out of range: larger than the number of probes W = " +
                                                      std::to_string(problem.n_global_probes()));
  }
}

Result run(Config const&, Space const& space, Problem const& problem, DeviceT3 const& x0,
           NewtonCgOptions const& options, Control const& control) {
  return newton_cg(space, problem, x0, options, control);
}

Result run(Config const&, Space const& space, Problem const& problem, DeviceT3 const& x0,
           GradientDescentOptions const& options, Control const& control) {
  return gradient_descent(space, problem, x0, options, control);
}

Result run(Config const& config, Space const& space, Problem const& problem, DeviceT3 const& x0,
           McSgdOptions const& options, Control const& control) {
  check_batch_size(config, problem, options.batch_size);
  return mc_sgd(space, problem, x0, options, control);
}

Result run(Config const& config, Space const& space, Problem const& problem, DeviceT3 const& x0,
           AdamOptions const& options, Control const& control) {
  check_batch_size(config, problem, options.batch_size);
  return adam(space, problem, x0, options, control);
}

/// Runs the configured optimizer with the driver's chunk size, progress callback and stop request.
Result run_optimizer(Config const& config, Space const& space, Setup const& setup,
                     std::function<void(IterationRecord const&)> const& callback,
                     std::function<bool(IterationRecord const&)> const& stop_when, Control const& control) {
  auto const& problem = setup.problem;
  auto const& x0 = setup.x0;
  return std::visit(
      [&](auto options) {
        options.common.chunk_size = config.chunk_size;
        options.common.callback = callback;
        options.common.stop_when = stop_when;
        options.common.validation_patience = config.validation.patience;
        options.common.continuation = setup.continuation;
        options.common.sharing = setup.sharing;
        return run(config, space, problem, x0, options, control);
      },
      config.optimizer.options);
}

/// Refuses a --log-json path that is one of the run's inputs (the configuration, data, validation and init files,
/// the checkpoint) under any name, a hard link included, or one of the files the run writes: the log would
/// overwrite it.
void check_log_json(Config const& config, RunOptions const& options, std::string const& dir) {
  if (options.log_json.empty()) return;
  std::vector<std::pair<std::string, std::string>> inputs{{"the configuration file", config.file}};
  if (config.source == ProblemSource::data) inputs.push_back({"problem.data.file", config.data.resolved_file});
  if (config.validation.source == ValidationSource::file) {
    inputs.push_back({"validation.file", config.validation.resolved_file});
  }
  if (config.model.init == InitKind::file) inputs.push_back({"model.init.file", config.model.resolved_file});
  for (auto const& [what, path] : inputs) {
    if (!path.empty() && io::same_file(options.log_json, path)) {
      throw FitUsageError("--log-json: '" + options.log_json + "' is " + what + " (" + path +
                          "); the log would overwrite it: choose another file");
    }
  }
  // The run's outputs need not exist yet: compare their normalized paths (symbolic links resolved as far as they
  // exist), and existing files by identity.
  std::error_code ec;
  fs::path const log = fs::weakly_canonical(options.log_json, ec);
  for (char const* name :
       {RunFiles::model, RunFiles::history, RunFiles::summary, RunFiles::plot, RunFiles::checkpoint}) {
    std::string const output = (fs::path(dir) / name).string();
    std::error_code ec_output;
    fs::path const canonical = fs::weakly_canonical(output, ec_output);
    if (io::same_file(options.log_json, output) || (!ec && !ec_output && log == canonical)) {
      throw FitUsageError("--log-json: '" + options.log_json + "' is the run's " + name + " (" + output +
                          "): choose another file");
    }
  }
}

/// The output files of a run in `dir`.
std::vector<std::string> run_file_paths(std::string const& dir) {
  std::vector<std::string> out;
  for (char const* name :
       {RunFiles::model, RunFiles::history, RunFiles::summary, RunFiles::plot, RunFiles::checkpoint}) {
    out.push_back((fs::path(dir) / name).string());
  }
  return out;
}

/// Checks, without creating anything, that the run directory can be made (its nearest existing ancestor is a
/// writable directory) or is a directory whose output names are regular files or absent: a FIFO, directory or
/// socket in their place is refused before the fit runs, not after.
void check_run_directory(Config const& config, std::string const& dir) {
  fs::path existing = fs::absolute(dir);
  std::error_code ec;
  while (!fs::exists(existing, ec) && existing.has_parent_path() && existing != existing.parent_path()) {
    existing = existing.parent_path();
  }
  if (!fs::is_directory(existing, ec)) {
    throw config.error_at("output.directory",
                          "cannot create the run directory " + dir + ": " + existing.string() + " is not a directory");
  }
  if (::access(existing.c_str(), W_OK | X_OK) != 0) {
    throw config.error_at("output.directory",
                          "cannot create the run directory " + dir + ": " + existing.string() + " is not writable");
  }
  for (auto const& output : run_file_paths(dir)) {
    try {
      (void)io::output_target(output, "output.directory");
    } catch (io::FileError const& e) {
      throw config.error_at("output.directory", e.what());
    }
  }
}

/// Creates the run directory. A new run (not --resume) moves a checkpoint left there by an earlier run to
/// checkpoint.h5.previous: it belongs to that run, and a later --resume must not continue it by mistake.
void prepare_run_directory(Config const& config, std::string const& dir, RunOptions const& options) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    throw config.error_at("output.directory",
                          "cannot create the run directory " + dir + (ec ? ": " + ec.message() : std::string()));
  }
  std::string const checkpoint = (fs::path(dir) / RunFiles::checkpoint).string();
  if (options.resume || !fs::is_regular_file(checkpoint)) return;
  std::string const previous = checkpoint + ".previous";
  fs::rename(checkpoint, previous, ec);
  if (ec) {
    throw config.error_at("output.directory",
                          "cannot move the earlier run's " + checkpoint + " to " + previous + ": " + ec.message());
  }
  if (!options.quiet) {
    fmt::print(stderr, "t3k fit: note: moved the earlier run's checkpoint to {} (a new run does not continue it)\n",
               previous);
  }
}

}  // namespace

// With several ranks every step that may fail on some ranks only (reading files, rank 0 writing) runs inside
// cli::collectively, so that every rank throws the same exception; the rest is replicated and fails alike.
int run_fit(Config const& config, RunOptions const& options, Communicator const& comm) {
  auto const t_start = Clock::now();
  bool const root = comm.rank_index() == 0;  // prints and writes the run directory
  std::string const dir = config.output.resolved_directory;
  std::string const checkpoint_path = (fs::path(dir) / RunFiles::checkpoint).string();
  cli::collectively(comm, cli::fit_exit_code, [&] {
    if (!root) return;
    check_log_json(config, options, dir);
    check_run_directory(config, dir);
  });
  LoadedCheckpoint resume;
  // Every rank reads the checkpoint (read-only, so the run directory must be visible to every rank): the same bits
  // on every rank, as replicated optimizer state must be.
  if (options.resume) {
    cli::collectively(comm, cli::fit_exit_code, [&] {
      if (!fs::exists(checkpoint_path)) {
        throw FitUsageError("--resume: there is no checkpoint " + checkpoint_path +
                            " (set output.checkpoint_every to write checkpoints)");
      }
      try {
        resume = read_checkpoint(checkpoint_path);
      } catch (io::FileError const& e) {
        throw FitUsageError(std::string("--resume: cannot read the checkpoint: ") + e.what());
      }
      if (resume.fingerprint != config.fingerprint()) {
        throw FitUsageError("--resume: " + checkpoint_path + " was written for a different configuration: " +
                            fingerprint_changes(resume.fingerprint, config.fingerprint()) +
                            " (only max_iterations, tolerances, output and kokkos may change)");
      }
    });
  }

  AllocationTracker tracker;
  Space space;
  Setup setup = build_setup(config, space, comm);
  if (options.resume && resume.checkpoint.x.mode_shapes() != setup.mode_shapes) {
    throw FitUsageError("--resume: the checkpoint's T3 has mode shapes " +
                        impl::shape_string(resume.checkpoint.x.mode_shapes()) + " but the problem has " +
                        impl::shape_string(setup.mode_shapes));
  }
  // The run directory is made only now that the configuration and the data have passed every check: a refused
  // run leaves nothing behind.
  cli::collectively(comm, cli::fit_exit_code, [&] {
    if (root) prepare_run_directory(config, dir, options);
  });
  double const t_setup = seconds_since(t_start);
  if (!options.quiet && root) {
    fmt::print("t3k fit: {}\n", setup.description);
    fmt::print("t3k fit: optimizer {}, max_iterations {}, chunk_size {}, {} with concurrency {}{}\n",
               config.optimizer.name(), config.optimizer.common().max_iterations, config.chunk_size.to_string(),
               Space::name(), space.concurrency(),
               comm.size() > 1 ? fmt::format(" on each of {} MPI ranks", comm.size()) : "");
    if (options.resume) {
      fmt::print("t3k fit: resuming from {} (iteration {})\n", checkpoint_path, resume.checkpoint.iteration);
    }
    std::fflush(stdout);
    std::string const blas_warning = host_blas_warning();
    if (!blas_warning.empty()) fmt::print(stderr, "t3k fit: warning: {}\n", blas_warning);
  }

  // Only rank 0 reports; the records are the same on every rank (all but the elapsed time, which is rank 0's).
  RunOptions reporting = options;
  if (!root) {
    reporting.quiet = true;
    reporting.log_json.clear();
  }
  std::unique_ptr<Progress> progress;
  cli::collectively(comm, cli::fit_exit_code, [&] { progress = std::make_unique<Progress>(reporting, tracker); });
  auto const callback = [&progress](IterationRecord const& r) { (*progress)(r); };

  Control control;
  std::size_t last_checkpoint = options.resume ? resume.checkpoint.iteration : 0;
  bool checkpointed = options.resume;
  std::string const fingerprint = config.fingerprint();
  if (config.output.checkpoint_every > 0) {
    control.every = config.output.checkpoint_every;
    control.write = [&](Checkpoint const& c) {
      // A non-finite point is not a good checkpoint: keep the last good one.
      if (!c.history.empty() &&
          !(std::isfinite(c.history.back().loss) && std::isfinite(c.history.back().gradient_norm))) {
        return;
      }
      // Every rank calls this at the same iteration; rank 0 writes, and a failure there ends every rank.
      cli::collectively(comm, cli::fit_exit_code, [&] {
        if (root) write_checkpoint(checkpoint_path, c, fingerprint);
      });
      last_checkpoint = c.iteration;
      checkpointed = true;
      if (options.stop_after > 0 && c.iteration >= options.stop_after) {
        throw FitStopped("stopped after writing the checkpoint of iteration " + std::to_string(c.iteration) +
                         " (--stop-after)");
      }
    };
  }
  if (options.resume) control.resume_from = &resume.checkpoint;

  // A signal on any rank stops every rank at the same iteration (the records are replicated, so every rank asks).
  int stop_signal = 0;
  auto const stop_when = [&](IterationRecord const&) {
    int const local = interrupting_signal.load();
    stop_signal = comm.size() > 1 ? comm.allreduce_max(local) : local;
    return stop_signal != 0;
  };
  auto const t_fit = Clock::now();
  Result result;
  {
    InterruptHandlers const handlers;
    result = run_optimizer(config, space, setup, callback, stop_when, control);
  }
  double const fit_seconds = seconds_since(t_fit);
  if (result.reason == stop_request_reason) {
    result.reason = std::string("interrupted by ") + signal_name(stop_signal) + " at iteration " +
                    std::to_string(result.history.back().iteration);
  }
  if (options.resume) result.history = merged_history(resume.checkpoint.history, result.history);
  if (result.history.empty()) throw FitRuntimeError("the optimizer recorded no iterations");

  IterationRecord const& last = result.history.back();
  if (result.reason == "non-finite loss" || !std::isfinite(last.loss)) {
    std::string where = checkpointed ? "the last good checkpoint is " + checkpoint_path + " (iteration " +
                                           std::to_string(last_checkpoint) + ")"
                                     : std::string("no checkpoint was written");
    throw FitRuntimeError("the loss became non-finite at iteration " + std::to_string(last.iteration) +
                          "; no outputs were written, " + where);
  }

  RunFacts facts;
  facts.timings.setup = t_setup;
  facts.timings.fit = fit_seconds;
  facts.start = t_start;
  facts.resumed_from = options.resume ? resume.checkpoint.iteration : 0;
  facts.peak_bytes = tracker.peak(Mem::name());
  facts.checkpointed = checkpointed;
  // Rank 0 writes the run directory; a failure there ends every rank with its exit code.
  cli::collectively(comm, cli::fit_exit_code, [&] {
    if (root) write_run_directory(dir, config, setup, result, facts);
  });
  double const total_seconds = seconds_since(t_start);

  if (!options.quiet && root) {
    for (auto const& n : result.notes) fmt::print("t3k fit: note: {}\n", n);
    fmt::print(
        "t3k fit: {} after {} iterations ({}): loss {:.6e}, relative residual {:.3e}, gradient norm {:.3e}, {:.2f} s\n",
        result.converged ? "converged" : "stopped", last.iteration, result.reason, last.loss, last.relative_residual,
        last.gradient_norm, total_seconds);
    if (setup.continuation.enabled() || setup.problem.validation) {
      fmt::print("t3k fit: ranks: Tucker {}, TT {}{}\n", impl::shape_string(result.x.tucker_ranks()),
                 impl::shape_string(result.x.tt_ranks()),
                 setup.problem.validation
                     ? fmt::format(", validation relative residual {:.3e}", result.validation_relative_residual)
                     : std::string());
    }
    fmt::print("t3k fit: outputs in {}: {}, {}, {}, {}{}\n", dir, RunFiles::model, RunFiles::history, RunFiles::summary,
               RunFiles::plot, checkpointed ? ", checkpoint.h5" : "");
    if (stop_signal != 0 && checkpointed) fmt::print("t3k fit: continue the run with --resume\n");
    std::fflush(stdout);
  }
  return stop_signal != 0 ? cli::exit_interrupted + stop_signal : cli::exit_success;
}

}  // namespace fit
}  // namespace t3k
