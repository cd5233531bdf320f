/// \file fit_run.cpp
/// The work of `t3k fit` once its configuration is loaded: problem, initial model, optimizer, progress,
/// checkpoints and the run directory.

#include "drivers/fit_run.hpp"

#include "drivers/collective.hpp"
#include "drivers/file_safety.hpp"
#include "drivers/hdf5_io.hpp"

#include "algorithms/random_t3.hpp"
#include "core/chunk_size.hpp"
#include "core/error.hpp"
#include "core/host_blas.hpp"
#include "core/memory_tracking.hpp"
#include "optimizers/adam.hpp"
#include "optimizers/gradient_descent.hpp"
#include "optimizers/mc_sgd.hpp"
#include "optimizers/newton_cg.hpp"
#include "optimizers/planted_problem.hpp"
#include "t3k_version.hpp"

#include <yaml-cpp/yaml.h>
#include <Kokkos_Core.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <variant>

namespace t3k {
namespace fit {

namespace {

namespace fs = std::filesystem;
using Space = Kokkos::DefaultExecutionSpace;
using Mem = Space::memory_space;
using DeviceT3 = TuckerTensorTrain<double, Mem>;
using Problem = FittingProblem<double, Mem>;
using Checkpoint = OptimizerCheckpoint<double, Mem>;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string format(char const* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(char const* fmt, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof buffer, fmt, args);
  va_end(args);
  return buffer;
}

std::string shape_text(std::vector<std::size_t> const& v) { return impl::shape_string(v); }

/// Writes `text` to `path` atomically (an exclusively created temporary in the same directory, then rename).
void write_text_atomically(std::string const& path, std::string const& text) {
  try {
    io::write_text_file(path, text);
  } catch (io::FileError const& e) {
    throw FitRuntimeError(e.what());
  }
}

// ------------------------------------------------------------------------------------------ host <-> device

template <class HostView>
auto to_device(HostView const& h) {
  Kokkos::View<typename HostView::non_const_data_type, Kokkos::LayoutRight, Mem> d(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, h.label()), h.layout());
  Kokkos::deep_copy(d, h);
  return d;
}

template <class View>
auto to_host(View const& v) {
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
}

// ------------------------------------------------------------------------------------------- checkpoint file

std::vector<double> encode_text(std::string const& s) {
  std::vector<double> out;
  for (unsigned char c : s) out.push_back(double(c));
  return out;
}

std::string decode_text(std::vector<double> const& v) {
  std::string s;
  for (double c : v) s += char(static_cast<unsigned char>(c));
  return s;
}

constexpr std::size_t history_columns = 8;

std::vector<double> encode_history(std::vector<IterationRecord> const& h) {
  std::vector<double> out;
  for (auto const& r : h) {
    double const row[history_columns] = {double(r.iteration),  r.loss,          r.relative_residual,
                                         r.gradient_norm,      r.step,          r.elapsed_seconds,
                                         double(r.chunk_size), r.minibatch_loss};
    out.insert(out.end(), row, row + history_columns);
  }
  return out;
}

std::vector<IterationRecord> decode_history(std::vector<double> const& v) {
  std::vector<IterationRecord> h;
  for (std::size_t k = 0; k + history_columns <= v.size(); k += history_columns) {
    IterationRecord r;
    r.iteration = std::size_t(v[k]);
    r.loss = v[k + 1];
    r.relative_residual = v[k + 2];
    r.gradient_norm = v[k + 3];
    r.step = v[k + 4];
    r.elapsed_seconds = v[k + 5];
    r.chunk_size = std::size_t(v[k + 6]);
    r.minibatch_loss = v[k + 7];
    h.push_back(r);
  }
  return h;
}

/// Checkpoint layout: /t3 (the point, docs/file-format.md) and /checkpoint/{optimizer, fingerprint (character
/// codes), iteration, scalar_names ('\n'-joined character codes), scalar_values, sampler_state (each 64-bit word
/// as two exact 32-bit halves), second_moments, moment/tucker/<i>, moment/tt/<i> (with the stack axis), history
/// (rows of iteration, loss, relative_residual, gradient_norm, step, elapsed_seconds, chunk_size, minibatch_loss)}.
void write_checkpoint(std::string const& path, Checkpoint const& c, std::string const& fingerprint) {
  io::Writer w(path);
  Space space;
  w.write_t3(copy_t3_to<Kokkos::HostSpace>(space, c.x));
  auto raw = [&w](std::string const& name, std::vector<double> const& v) {
    if (!v.empty()) w.write_raw("/checkpoint/" + name, {v.size()}, v.data());
  };
  raw("optimizer", encode_text(c.optimizer));
  raw("fingerprint", encode_text(fingerprint));
  raw("iteration", {double(c.iteration)});
  std::string names;
  std::vector<double> values;
  for (auto const& [k, v] : c.scalars) {
    names += (names.empty() ? "" : "\n") + k;
    values.push_back(v);
  }
  raw("scalar_names", encode_text(names));
  raw("scalar_values", values);
  std::vector<double> sampler;
  for (auto word : c.sampler_state) {
    sampler.push_back(double(word >> 32));
    sampler.push_back(double(word & 0xffffffffull));
  }
  raw("sampler_state", sampler);
  raw("second_moments", c.second_moments);
  for (std::size_t i = 0; i < c.moment.n_modes(); ++i) {
    w.write_view("/checkpoint/moment/tucker/" + std::to_string(i), to_host(c.moment.tucker[i]));
    w.write_view("/checkpoint/moment/tt/" + std::to_string(i), to_host(c.moment.tt[i]));
  }
  auto const h = encode_history(c.history);
  if (!h.empty()) w.write_raw("/checkpoint/history", {c.history.size(), history_columns}, h.data());
  io::RootAttributes a;
  a.d = std::int64_t(c.x.n_modes());
  w.write_root_attributes(a);
  w.commit();
}

struct LoadedCheckpoint {
  Checkpoint checkpoint;
  std::string fingerprint;
};

LoadedCheckpoint read_checkpoint(std::string const& path) {
  io::Reader r(path);
  LoadedCheckpoint out;
  auto& c = out.checkpoint;
  auto raw = [&r](std::string const& name) {
    std::vector<std::size_t> shape;
    std::string const object = "/checkpoint/" + name;
    return r.exists(object) ? r.read_raw(object, shape) : std::vector<double>();
  };
  c.optimizer = decode_text(raw("optimizer"));
  out.fingerprint = decode_text(raw("fingerprint"));
  auto const it = raw("iteration");
  if (it.size() != 1) throw io::FileError(path + ": /checkpoint/iteration is missing");
  c.iteration = std::size_t(it[0]);
  Space space;
  c.x = copy_t3_to<Mem>(space, r.read_t3());
  std::string const names = decode_text(raw("scalar_names"));
  auto const values = raw("scalar_values");
  std::size_t k = 0, start = 0;
  while (!names.empty() && start <= names.size()) {
    std::size_t end = names.find('\n', start);
    if (end == std::string::npos) end = names.size();
    if (k >= values.size()) throw io::FileError(path + ": /checkpoint/scalar_values is shorter than scalar_names");
    c.scalars[names.substr(start, end - start)] = values[k++];
    start = end + 1;
  }
  auto const sampler = raw("sampler_state");
  for (std::size_t q = 0; q + 1 < sampler.size(); q += 2) {
    c.sampler_state.push_back((std::uint64_t(sampler[q]) << 32) | std::uint64_t(sampler[q + 1]));
  }
  c.second_moments = raw("second_moments");
  for (std::size_t i = 0; r.exists("/checkpoint/moment/tt/" + std::to_string(i)); ++i) {
    auto u = r.read_array3("/checkpoint/moment/tucker/" + std::to_string(i),
                           {io::any_extent, io::any_extent, io::any_extent});
    auto g = r.read_array4("/checkpoint/moment/tt/" + std::to_string(i),
                           {io::any_extent, io::any_extent, io::any_extent, io::any_extent});
    c.moment.tucker.push_back(to_device(u));
    c.moment.tt.push_back(to_device(g));
  }
  c.history = decode_history(raw("history"));
  return out;
}

// ------------------------------------------------------------------------------------------------ problem

struct Setup {
  Problem problem;
  DeviceT3 x0;
  std::vector<std::size_t> mode_shapes;
  std::string description;
};

/// Rethrows an input-file error as a ConfigError at `key` (exit 2: bad input).
template <class F>
auto reading(Config const& config, std::string const& key, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (io::FileError const& e) {
    throw config.error_at(key, e.what());
  } catch (DimensionMismatch const& e) {
    throw config.error_at(key, e.what());
  } catch (InvalidArgument const& e) {
    throw config.error_at(key, e.what());
  }
}

/// This rank's rows of the data problem (all rows with one rank): every array's full shape is checked, only the
/// rows of this rank are read (hyperslabs), and its weights are checked by this rank.
Problem load_data_problem(Config const& config, Space const& space, Communicator const& comm) {
  auto const& data = config.data;
  std::string const key = "problem.data.file";
  return reading(config, key, [&] {
    io::Reader in(data.resolved_file);
    auto const probes = in.read_probes({}, [&comm](std::size_t n_rows) { return comm.shard_range(n_rows); });
    std::vector<std::size_t> shapes;
    for (auto const& w : probes.w) shapes.push_back(w.extent(1));
    std::size_t const w = probes.n_file_probes();
    ShardRange const rows{probes.first_row, probes.first_row + probes.n_probes()};
    if (!in.exists("/jets")) {
      throw io::FileError(data.resolved_file + ": /jets (the target jets) is missing");
    }
    auto const jets = in.read_jets("/jets", shapes, w, io::any_extent, rows);
    std::size_t const k = jets[0].extent(1) - 1;
    if (probes.order && *probes.order != k) {
      throw io::FileError(data.resolved_file + ": attribute order of /probes is " + std::to_string(*probes.order) +
                          " but /jets/0 has K+1 = " + std::to_string(k + 1) + " orders");
    }
    if (data.order && *data.order != k) {
      std::vector<std::size_t> jet_shape = impl::view_shape(jets[0]);
      jet_shape[0] = w;  // the file's shape, not this rank's rows
      throw config.error_at("problem.data.order", "is " + std::to_string(*data.order) + " but " + data.resolved_file +
                                                      " holds jets of order K = " + std::to_string(k) +
                                                      " (/jets/0 has shape " + shape_text(jet_shape) + ")");
    }
    Problem p;
    p.order = k;
    if (comm.size() > 1) {
      p.comm = comm;
      p.global_offset = rows.begin;
      p.global_probes = w;
    }
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      p.ww.push_back(to_device(probes.w[i]));
      p.pp.push_back(to_device(probes.p[i]));
      p.targets.push_back(to_device(jets[i]));
    }
    if (!data.weights.empty()) {
      std::vector<std::size_t> shape;
      std::vector<double> weights;
      try {
        shape = in.dataset_shape(data.weights);
        if (shape == std::vector<std::size_t>{w}) weights = in.read_rows(data.weights, rows, shape);
      } catch (io::FileError const& e) {
        throw config.error_at("problem.data.weights", e.what());
      }
      if (shape != std::vector<std::size_t>{w}) {
        throw config.error_at("problem.data.weights", data.resolved_file + ": " + data.weights + " has shape " +
                                                          shape_text(shape) + ", expected [" + std::to_string(w) +
                                                          "] (one weight per probe)");
      }
      std::size_t const local = rows.size();
      for (std::size_t s = 0; s < local; ++s) {
        if (!(weights[s] >= 0) || !std::isfinite(weights[s])) {
          throw config.error_at("problem.data.weights",
                                data.resolved_file + ": " + data.weights + "[" + std::to_string(rows.begin + s) +
                                    "] is " + std::to_string(weights[s]) + "; weights must be finite and >= 0");
        }
      }
      Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(weights.data(), local);
      Kokkos::View<double*, Mem> d("t3k::fit::weights", local);
      Kokkos::deep_copy(d, h);
      p.weights = d;
    }
    (void)space;
    return p;
  });
}

/// Checks a model's ranks (given or from a file) against the problem's mode count; messages at the model keys.
void check_model_ranks(Config const& config, std::vector<std::size_t> const& shapes) {
  auto const& m = config.model;
  std::size_t const d = shapes.size();
  if (m.tucker_ranks && m.tucker_ranks->size() != d) {
    throw config.error_at("model.tucker_ranks", "has " + std::to_string(m.tucker_ranks->size()) +
                                                    " entries but the data has d = " + std::to_string(d) +
                                                    " modes (mode shapes " + shape_text(shapes) + ")");
  }
  if (m.tt_ranks && m.tt_ranks->size() != d + 1) {
    throw config.error_at("model.tt_ranks", "has " + std::to_string(m.tt_ranks->size()) +
                                                " entries but the data has d = " + std::to_string(d) +
                                                " modes, so d + 1 = " + std::to_string(d + 1) + " are needed");
  }
}

std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (stream + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The problem (this rank's rows of it) and the initial model. Reading files runs inside `collectively`; the
/// synthetic problem is collective (its noise level is a sum over ranks) and needs no such guard: it depends only
/// on the validated configuration, which every rank holds alike.
/// Bytes of the cores of a T3 (sum of n_i N_i + r_i n_i r_{i+1} doubles); empty past 2^64.
std::optional<std::uint64_t> t3_bytes(std::vector<std::size_t> const& big_n, std::vector<std::size_t> const& n,
                                      std::vector<std::size_t> const& r) {
  std::optional<std::uint64_t> total = 0;
  for (std::size_t i = 0; i < big_n.size() && i < n.size() && i + 1 < r.size() && total; ++i) {
    auto const tucker = io::checked_product(n[i], big_n[i]);
    auto const rn = io::checked_product(r[i], n[i]);
    auto const tt = rn ? io::checked_product(*rn, r[i + 1]) : std::nullopt;
    auto const both = tucker && tt ? io::checked_sum(*tucker, *tt) : std::nullopt;
    total = both ? io::checked_sum(*total, *both) : std::nullopt;
  }
  return total ? io::checked_product(*total, sizeof(double)) : std::nullopt;
}

/// Refuses a fit whose model (`copies` T3s of these shapes: iterate, gradient, search directions) or whose probe
/// set (W probes and directions and K+1 jet orders per mode entry) does not fit in the memory available, before
/// anything is allocated. The message names the key to change.
void check_fit_memory(Config const& config, std::vector<std::size_t> const& big_n, std::vector<std::size_t> const& n,
                      std::vector<std::size_t> const& r, std::string const& rank_key, std::size_t n_probes,
                      std::size_t order, std::string const& probes_key) {
  constexpr std::uint64_t copies = 6;
  auto const one = t3_bytes(big_n, n, r);
  auto const model = one ? io::checked_product(*one, copies) : std::nullopt;
  if (auto const shortfall = io::memory_shortfall(model)) {
    throw config.error_at(rank_key, "the model (N = " + shape_text(big_n) + ", n = " + shape_text(n) +
                                        ", r = " + shape_text(r) + ") " + *shortfall + "; lower the ranks");
  }
  if (probes_key.empty()) return;
  std::optional<std::uint64_t> sum_n = 0;
  for (auto e : big_n) sum_n = sum_n ? io::checked_sum(*sum_n, e) : std::nullopt;
  auto const per_probe = sum_n ? io::checked_product(*sum_n, (order + 3) * sizeof(double)) : std::nullopt;
  auto const data = per_probe ? io::checked_product(*per_probe, n_probes) : std::nullopt;
  auto const total = data && model ? io::checked_sum(*data, *model) : std::nullopt;
  if (auto const shortfall = io::memory_shortfall(total)) {
    throw config.error_at(probes_key, std::to_string(n_probes) + " probes of mode shapes " + shape_text(big_n) +
                                          " at order " + std::to_string(order) + " with the model " + *shortfall +
                                          "; lower n_probes or the mode shapes");
  }
}

Setup build_setup(Config const& config, Space const& space, Communicator const& comm) {
  Setup s;
  DeviceT3 truth;
  if (config.source == ProblemSource::synthetic) {
    auto const& syn = config.synthetic;
    check_fit_memory(config, syn.mode_shapes, syn.tucker_ranks, syn.tt_ranks, "problem.synthetic.tt_ranks",
                     syn.n_probes, syn.order, "problem.synthetic.n_probes");
    truth = random_t3<double>(space, syn.mode_shapes, syn.tucker_ranks, syn.tt_ranks, syn.seed);
    // Sharded by seed: each rank draws only its rows of the very probe set one process would draw.
    s.problem = make_planted_problem(space, comm, truth, syn.n_probes, syn.order, syn.noise, mix_seed(syn.seed, 1));
    s.mode_shapes = syn.mode_shapes;
    s.description = "synthetic: planted random T3, N = " + shape_text(syn.mode_shapes) +
                    ", n = " + shape_text(syn.tucker_ranks) + ", r = " + shape_text(syn.tt_ranks) +
                    ", W = " + std::to_string(syn.n_probes) + ", K = " + std::to_string(syn.order) +
                    format(", noise %g, seed %" PRIu64, syn.noise, syn.seed);
  } else {
    cli::collectively(comm, exit_code_of, [&] {
      s.problem = load_data_problem(config, space, comm);
      for (auto const& w : s.problem.ww) s.mode_shapes.push_back(w.extent(1));
      check_model_ranks(config, s.mode_shapes);
    });
    s.description = "data: " + config.data.resolved_file + ", N = " + shape_text(s.mode_shapes) +
                    ", W = " + std::to_string(s.problem.n_global_probes()) + ", K = " + std::to_string(s.problem.order);
  }
  auto const& m = config.model;
  switch (m.init) {
    case InitKind::random: {
      auto const n = m.tucker_ranks ? *m.tucker_ranks : config.synthetic.tucker_ranks;
      auto const r = m.tt_ranks ? *m.tt_ranks : config.synthetic.tt_ranks;
      check_fit_memory(config, s.mode_shapes, n, r, m.tt_ranks ? "model.tt_ranks" : "problem.synthetic.tt_ranks", 0, 0,
                       "");
      // A stream of its own: a random start never equals the planted T3, even with equal seeds and ranks.
      s.x0 = random_t3<double>(space, s.mode_shapes, n, r, mix_seed(m.seed, 2));
      break;
    }
    case InitKind::file: {
      // Every rank reads the initial T3 (read-only): the same bits everywhere.
      cli::collectively(comm, exit_code_of, [&] {
        auto const host = reading(config, "model.init.file", [&] { return io::Reader(m.resolved_file).read_t3(); });
        if (host.mode_shapes() != s.mode_shapes) {
          throw config.error_at("model.init.file", m.resolved_file + ": the T3 has mode shapes " +
                                                       shape_text(host.mode_shapes()) + " but the problem has " +
                                                       shape_text(s.mode_shapes));
        }
        if (m.tucker_ranks && (*m.tucker_ranks != host.tucker_ranks() || *m.tt_ranks != host.tt_ranks())) {
          throw config.error_at("model.tucker_ranks",
                                "the ranks " + shape_text(*m.tucker_ranks) + " / " + shape_text(*m.tt_ranks) +
                                    " disagree with " + m.resolved_file + " (" + shape_text(host.tucker_ranks()) +
                                    " / " + shape_text(host.tt_ranks()) + "); leave them out to take the file's");
        }
        s.x0 = copy_t3_to<Mem>(space, host);
      });
      break;
    }
    case InitKind::truth_perturbation:
      s.x0 = perturb_t3(space, truth, m.perturbation, mix_seed(m.seed, 3));
      break;
  }
  space.fence();
  return s;
}

// ------------------------------------------------------------------------------------------------ progress

std::string bytes_text(double bytes) {
  char const* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return format(u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  return format("%.17g", v);
}

long max_rss_bytes() {
  struct rusage usage;
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return long(usage.ru_maxrss) * 1024;  // KiB on Linux
}

class Progress {
 public:
  Progress(RunOptions const& options, AllocationTracker const& tracker)
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
  ~Progress() {
    if (json_) std::fclose(json_);
  }
  Progress(Progress const&) = delete;
  Progress& operator=(Progress const&) = delete;

  void operator()(IterationRecord const& r) {
    std::int64_t const peak = tracker_.peak(Mem::name());
    if (json_) {
      std::fprintf(json_,
                   "{\"iteration\": %zu, \"loss\": %s, \"relative_residual\": %s, \"gradient_norm\": %s, "
                   "\"step\": %s, \"elapsed_seconds\": %s, \"chunk_size\": %zu, \"peak_memory_bytes\": %" PRId64
                   ", \"minibatch_loss\": %s}\n",
                   r.iteration, json_number(r.loss).c_str(), json_number(r.relative_residual).c_str(),
                   json_number(r.gradient_norm).c_str(), json_number(r.step).c_str(),
                   json_number(r.elapsed_seconds).c_str(), r.chunk_size, peak, json_number(r.minibatch_loss).c_str());
      std::fflush(json_);
    }
    if (quiet_) return;
    if (tty_) {
      if (lines_ % 25 == 0) {
        std::printf("%6s  %12s  %10s  %10s  %10s  %9s  %7s  %10s\n", "iter", "loss", "rel.res", "|grad|", "step",
                    "elapsed", "chunk", "peak mem");
      }
      std::printf("%6zu  %12.5e  %10.3e  %10.3e  %10.3e  %8.2fs  %7zu  %10s\n", r.iteration, r.loss,
                  r.relative_residual, r.gradient_norm, r.step, r.elapsed_seconds, r.chunk_size,
                  bytes_text(double(peak)).c_str());
    } else {
      std::printf(
          "iteration %zu loss %.6e relative_residual %.6e gradient_norm %.6e step %.6e elapsed %.3f s "
          "chunk %zu peak_memory %s\n",
          r.iteration, r.loss, r.relative_residual, r.gradient_norm, r.step, r.elapsed_seconds, r.chunk_size,
          bytes_text(double(peak)).c_str());
    }
    std::fflush(stdout);
    ++lines_;
  }

 private:
  bool quiet_, tty_;
  AllocationTracker const& tracker_;
  std::FILE* json_ = nullptr;
  std::size_t lines_ = 0;
};

// ------------------------------------------------------------------------------------------------ optimizer

using Control = CheckpointControl<double, Mem>;
using Result = FitResult<double, Mem>;

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

/// Runs the configured optimizer with the driver's chunk size and progress callback.
Result run_optimizer(Config const& config, Space const& space, Problem const& problem, DeviceT3 const& x0,
                     std::function<void(IterationRecord const&)> const& callback, Control const& control) {
  return std::visit(
      [&](auto options) {
        options.common.chunk_size = ChunkSize::parse(config.chunk_size);
        options.common.callback = callback;
        return run(config, space, problem, x0, options, control);
      },
      config.optimizer.options);
}

// ------------------------------------------------------------------------------------------------ outputs

std::string history_csv(std::vector<IterationRecord> const& h) {
  std::string out = "iteration,loss,relative_residual,gradient_norm,step,elapsed_seconds,chunk_size,minibatch_loss\n";
  for (auto const& r : h) {
    out += format("%zu,%.17g,%.17g,%.17g,%.17g,%.17g,%zu,%.17g\n", r.iteration, r.loss, r.relative_residual,
                  r.gradient_norm, r.step, r.elapsed_seconds, r.chunk_size, r.minibatch_loss);
  }
  return out;
}

std::string kokkos_version_text() {
  int const v = KOKKOS_VERSION;
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
}

struct Timings {
  double setup = 0, fit = 0, output = 0, total = 0;
};

void emit_list(YAML::Emitter& out, std::vector<std::size_t> const& v) {
  out << YAML::Flow << YAML::BeginSeq;
  for (auto e : v) out << e;
  out << YAML::EndSeq;
}

void emit_figures(YAML::Emitter& out, IterationRecord const& r, bool final_figures) {
  out << YAML::BeginMap;
  out << YAML::Key << "loss" << YAML::Value << r.loss;
  out << YAML::Key << "relative_residual" << YAML::Value << r.relative_residual;
  if (final_figures) {
    out << YAML::Key << "gradient_norm" << YAML::Value << r.gradient_norm;
    out << YAML::Key << "iterations" << YAML::Value << r.iteration;
  }
  out << YAML::EndMap;
}

std::string summary_yaml(Config const& config, Setup const& setup, Result const& result, Timings const& t,
                         std::size_t resumed_from, std::int64_t peak_bytes, bool checkpointed) {
  YAML::Emitter out;
  out.SetDoublePrecision(17);
  out << YAML::BeginMap;
  out << YAML::Key << "t3k_version" << YAML::Value << T3K_VERSION_STRING;
  out << YAML::Key << "kokkos_version" << YAML::Value << kokkos_version_text();
  out << YAML::Key << "backend" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "execution_space" << YAML::Value << Space::name();
  out << YAML::Key << "memory_space" << YAML::Value << Mem::name();
  out << YAML::Key << "concurrency" << YAML::Value << Space().concurrency();
  out << YAML::Key << "mpi_ranks" << YAML::Value << setup.problem.comm.size();
  out << YAML::EndMap;
  out << YAML::Key << "config_file" << YAML::Value << fs::absolute(config.file).lexically_normal().string();
  out << YAML::Key << "config" << YAML::Value << YAML::Load(config.to_yaml());
  out << YAML::Key << "problem" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "source" << YAML::Value << (config.source == ProblemSource::synthetic ? "synthetic" : "data");
  out << YAML::Key << "description" << YAML::Value << setup.description;
  out << YAML::Key << "mode_shapes" << YAML::Value;
  emit_list(out, setup.mode_shapes);
  out << YAML::Key << "n_probes" << YAML::Value << setup.problem.n_global_probes();
  out << YAML::Key << "order" << YAML::Value << setup.problem.order;
  out << YAML::EndMap;
  out << YAML::Key << "model" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "tucker_ranks" << YAML::Value;
  emit_list(out, result.x.tucker_ranks());
  out << YAML::Key << "tt_ranks" << YAML::Value;
  emit_list(out, result.x.tt_ranks());
  out << YAML::EndMap;
  out << YAML::Key << "initial" << YAML::Value;
  emit_figures(out, result.history.front(), false);
  out << YAML::Key << "final" << YAML::Value;
  emit_figures(out, result.history.back(), true);
  out << YAML::Key << "converged" << YAML::Value << result.converged;
  out << YAML::Key << "reason" << YAML::Value << result.reason;
  out << YAML::Key << "notes" << YAML::Value << YAML::BeginSeq;
  for (auto const& n : result.notes) out << n;
  out << YAML::EndSeq;
  if (resumed_from > 0) out << YAML::Key << "resumed_from_iteration" << YAML::Value << resumed_from;
  out << YAML::Key << "chunk_size" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "requested" << YAML::Value << config.chunk_size;
  out << YAML::Key << "used" << YAML::Value << result.chunk_size;
  out << YAML::EndMap;
  out << YAML::Key << "timings_seconds" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "setup" << YAML::Value << t.setup;
  out << YAML::Key << "fit" << YAML::Value << t.fit;
  out << YAML::Key << "output" << YAML::Value << t.output;
  out << YAML::Key << "total" << YAML::Value << t.total;
  out << YAML::EndMap;
  out << YAML::Key << "memory" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "peak_kokkos_bytes" << YAML::Value << peak_bytes;
  out << YAML::Key << "peak_kokkos_bytes_source" << YAML::Value
      << std::string("t3k::AllocationTracker (Kokkos allocations in ") + Mem::name() + ")";
  out << YAML::Key << "max_rss_bytes" << YAML::Value << max_rss_bytes();
  out << YAML::EndMap;
  out << YAML::Key << "outputs" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "model" << YAML::Value << RunFiles::model;
  out << YAML::Key << "history" << YAML::Value << RunFiles::history;
  out << YAML::Key << "plot" << YAML::Value << RunFiles::plot;
  if (checkpointed) out << YAML::Key << "checkpoint" << YAML::Value << RunFiles::checkpoint;
  out << YAML::EndMap;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

/// Merges a resumed run's history: the checkpoint's records before the first new one, then the new ones.
std::vector<IterationRecord> merged_history(std::vector<IterationRecord> const& before,
                                            std::vector<IterationRecord> const& now) {
  if (!now.empty() && now.front().iteration == 0) return now;
  std::vector<IterationRecord> out;
  std::size_t const first_new = now.empty() ? std::size_t(-1) : now.front().iteration;
  for (auto const& r : before) {
    if (r.iteration < first_new) out.push_back(r);
  }
  out.insert(out.end(), now.begin(), now.end());
  return out;
}

}  // namespace

// ------------------------------------------------------------------------------------------------------ SVG

std::string convergence_svg(std::string const& title, std::string const& x_label,
                            std::vector<PlotSeries> const& series) {
  double const width = 760, panel_height = 250, left = 90, right = 30, top = 50, gap = 70;
  double const plot_w = width - left - right;
  double const plot_h = panel_height - 40;
  double const height = top + double(series.size()) * (plot_h + gap) + 10;
  double x_max = 1;
  for (auto const& s : series)
    for (double x : s.x) x_max = std::max(x_max, x);
  std::ostringstream svg;
  svg << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << " " << height << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg << "<rect x=\"0\" y=\"0\" width=\"" << width << "\" height=\"" << height << "\" fill=\"white\"/>\n";
  svg << "<text x=\"" << width / 2 << "\" y=\"24\" text-anchor=\"middle\" font-size=\"16\">" << title << "</text>\n";
  // x ticks: about 8 at a 1-2-5 step.
  double step = 1;
  for (double decade = 1; x_max / step > 8; decade *= 10) {
    for (double m : {1.0, 2.0, 5.0}) {
      step = m * decade;
      if (x_max / step <= 8) break;
    }
  }
  char const* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd"};
  for (std::size_t p = 0; p < series.size(); ++p) {
    auto const& s = series[p];
    double const y0 = top + double(p) * (plot_h + gap);
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (double v : s.y) {
      if (std::isfinite(v) && v > 0) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
    }
    int d_lo = 0, d_hi = 1;
    if (hi > 0) {
      d_lo = int(std::floor(std::log10(lo)));
      d_hi = int(std::ceil(std::log10(hi)));
      if (d_hi <= d_lo) d_hi = d_lo + 1;
    }
    auto px = [&](double x) { return left + plot_w * x / x_max; };
    auto py = [&](double v) { return y0 + plot_h * (1 - (std::log10(v) - d_lo) / double(d_hi - d_lo)); };
    // Frame, grid and ticks.
    svg << "<rect x=\"" << left << "\" y=\"" << y0 << "\" width=\"" << plot_w << "\" height=\"" << plot_h
        << "\" fill=\"none\" stroke=\"black\"/>\n";
    int const decade_step = std::max(1, (d_hi - d_lo + 7) / 8);
    for (int e = d_lo; e <= d_hi; e += decade_step) {
      double const y = py(std::pow(10.0, e));
      svg << "<line x1=\"" << left << "\" y1=\"" << y << "\" x2=\"" << left + plot_w << "\" y2=\"" << y
          << "\" stroke=\"#dddddd\"/>\n";
      svg << "<line x1=\"" << left - 5 << "\" y1=\"" << y << "\" x2=\"" << left << "\" y2=\"" << y
          << "\" stroke=\"black\"/>\n";
      svg << "<text x=\"" << left - 8 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\">1e" << e << "</text>\n";
    }
    for (double x = 0; x <= x_max + 1e-9; x += step) {
      double const xx = px(x);
      svg << "<line x1=\"" << xx << "\" y1=\"" << y0 + plot_h << "\" x2=\"" << xx << "\" y2=\"" << y0 + plot_h + 5
          << "\" stroke=\"black\"/>\n";
      svg << "<text x=\"" << xx << "\" y=\"" << y0 + plot_h + 18 << "\" text-anchor=\"middle\">" << x << "</text>\n";
    }
    svg << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << y0 + plot_h + 36 << "\" text-anchor=\"middle\">" << x_label
        << "</text>\n";
    svg << "<text x=\"20\" y=\"" << y0 + plot_h / 2 << "\" text-anchor=\"middle\" transform=\"rotate(-90 20 "
        << y0 + plot_h / 2 << ")\">" << s.label << " (log scale)</text>\n";
    // The curve, broken at values a log scale cannot show.
    std::string const color = colors[p % 4];
    std::string points;
    auto flush = [&]() {
      if (!points.empty()) {
        svg << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"1.5\" points=\"" << points
            << "\"/>\n";
      }
      points.clear();
    };
    for (std::size_t k = 0; k < s.x.size() && k < s.y.size(); ++k) {
      double const v = s.y[k];
      if (!(std::isfinite(v) && v > 0)) {
        flush();
        continue;
      }
      std::ostringstream pt;
      pt << px(s.x[k]) << "," << py(v) << " ";
      points += pt.str();
      if (s.x.size() <= 60) {
        svg << "<circle cx=\"" << px(s.x[k]) << "\" cy=\"" << py(v) << "\" r=\"2.5\" fill=\"" << color << "\"/>\n";
      }
    }
    flush();
  }
  svg << "</svg>\n";
  return svg.str();
}

// ----------------------------------------------------------------------------------------------------- run

int exit_code_of(std::exception const& e) {
  if (auto const* collective = dynamic_cast<cli::CollectiveError const*>(&e)) return collective->exit_code();
  if (dynamic_cast<ConfigError const*>(&e) != nullptr || dynamic_cast<FitUsageError const*>(&e) != nullptr) return 2;
  if (dynamic_cast<FitStopped const*>(&e) != nullptr) return 3;
  return 1;
}

// With several ranks every step that may fail on some ranks only (reading files, rank 0 writing) runs inside
// cli::collectively, so that every rank throws the same exception; the rest is replicated and fails alike.
int run_fit(Config const& config, RunOptions const& options, Communicator const& comm) {
  auto const t_start = Clock::now();
  bool const root = comm.rank_index() == 0;  // prints and writes the run directory
  std::string const dir = config.output.resolved_directory;
  std::string const checkpoint_path = (fs::path(dir) / RunFiles::checkpoint).string();
  cli::collectively(comm, exit_code_of, [&] {
    if (!root) return;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir)) {
      throw config.error_at("output.directory",
                            "cannot create the run directory " + dir + (ec ? ": " + ec.message() : std::string()));
    }
    // Outputs are regular files (or character devices, written through): a FIFO, directory or socket in their
    // place is refused before the fit runs, not after.
    for (char const* name :
         {RunFiles::model, RunFiles::history, RunFiles::summary, RunFiles::plot, RunFiles::checkpoint}) {
      try {
        (void)io::output_target((fs::path(dir) / name).string(), "output.directory");
      } catch (io::FileError const& e) {
        throw config.error_at("output.directory", e.what());
      }
    }
  });
  LoadedCheckpoint resume;
  // Every rank reads the checkpoint (read-only, so the run directory must be visible to every rank): the same bits
  // on every rank, as replicated optimizer state must be.
  if (options.resume) {
    cli::collectively(comm, exit_code_of, [&] {
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
        throw FitUsageError("--resume: " + checkpoint_path +
                            " was written for a different configuration (problem, model, optimizer keys other than "
                            "max_iterations and tolerances, or chunk_size differ)");
      }
    });
  }

  AllocationTracker tracker;
  Space space;
  Setup setup = build_setup(config, space, comm);
  if (options.resume && resume.checkpoint.x.mode_shapes() != setup.mode_shapes) {
    throw FitUsageError("--resume: the checkpoint's T3 has mode shapes " +
                        shape_text(resume.checkpoint.x.mode_shapes()) + " but the problem has " +
                        shape_text(setup.mode_shapes));
  }
  double const t_setup = seconds_since(t_start);
  if (!options.quiet && root) {
    std::printf("t3k fit: %s\n", setup.description.c_str());
    std::printf("t3k fit: optimizer %s, max_iterations %zu, chunk_size %s, %s with concurrency %d%s\n",
                config.optimizer.name().c_str(), config.optimizer.common().max_iterations, config.chunk_size.c_str(),
                Space::name(), int(space.concurrency()),
                comm.size() > 1 ? format(" on each of %d MPI ranks", comm.size()).c_str() : "");
    if (options.resume) {
      std::printf("t3k fit: resuming from %s (iteration %zu)\n", checkpoint_path.c_str(), resume.checkpoint.iteration);
    }
    std::fflush(stdout);
    std::string const blas_warning = host_blas_warning();
    if (!blas_warning.empty()) std::fprintf(stderr, "t3k fit: warning: %s\n", blas_warning.c_str());
  }

  // Only rank 0 reports; the records are the same on every rank (all but the elapsed time, which is rank 0's).
  RunOptions reporting = options;
  if (!root) {
    reporting.quiet = true;
    reporting.log_json.clear();
  }
  std::unique_ptr<Progress> progress;
  cli::collectively(comm, exit_code_of, [&] { progress = std::make_unique<Progress>(reporting, tracker); });
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
      cli::collectively(comm, exit_code_of, [&] {
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

  auto const t_fit = Clock::now();
  Result result = run_optimizer(config, space, setup.problem, setup.x0, callback, control);
  double const fit_seconds = seconds_since(t_fit);
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

  auto const t_out = Clock::now();
  Timings t;
  // Rank 0 writes the run directory; a failure there ends every rank with its exit code.
  cli::collectively(comm, exit_code_of, [&] {
    if (!root) return;
    {
      io::Writer w((fs::path(dir) / RunFiles::model).string());
      w.write_t3(copy_t3_to<Kokkos::HostSpace>(space, result.x));
      io::RootAttributes a;
      a.d = std::int64_t(result.x.n_modes());
      a.w = std::int64_t(setup.problem.n_global_probes());
      a.k = std::int64_t(setup.problem.order);
      w.write_root_attributes(a);
      w.commit();
    }
    write_text_atomically((fs::path(dir) / RunFiles::history).string(), history_csv(result.history));
    PlotSeries loss{"loss", {}, {}}, grad{"gradient norm", {}, {}};
    for (auto const& r : result.history) {
      loss.x.push_back(double(r.iteration));
      loss.y.push_back(r.loss);
      grad.x.push_back(double(r.iteration));
      grad.y.push_back(r.gradient_norm);
    }
    write_text_atomically((fs::path(dir) / RunFiles::plot).string(),
                          convergence_svg("t3k fit: " + config.optimizer.name(), "iteration", {loss, grad}));
    t.setup = t_setup;
    t.fit = fit_seconds;
    t.output = seconds_since(t_out);
    t.total = seconds_since(t_start);
    write_text_atomically((fs::path(dir) / RunFiles::summary).string(),
                          summary_yaml(config, setup, result, t, options.resume ? resume.checkpoint.iteration : 0,
                                       tracker.peak(Mem::name()), checkpointed));
  });

  if (!options.quiet && root) {
    for (auto const& n : result.notes) std::printf("t3k fit: note: %s\n", n.c_str());
    std::printf(
        "t3k fit: %s after %zu iterations (%s): loss %.6e, relative residual %.3e, gradient norm %.3e, "
        "%.2f s\n",
        result.converged ? "converged" : "stopped", last.iteration, result.reason.c_str(), last.loss,
        last.relative_residual, last.gradient_norm, t.total);
    std::printf("t3k fit: outputs in %s: %s, %s, %s, %s%s\n", dir.c_str(), RunFiles::model, RunFiles::history,
                RunFiles::summary, RunFiles::plot, checkpointed ? ", checkpoint.h5" : "");
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace fit
}  // namespace t3k
