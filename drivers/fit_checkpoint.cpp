/// \file fit_checkpoint.cpp
/// Writing and reading checkpoint.h5 (fit_checkpoint.hpp).

#include "drivers/fit_checkpoint.hpp"

#include "drivers/device_copies.hpp"
#include "t3k/io/hdf5_io.hpp"

#include <fmt/core.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace t3k {
namespace fit {

namespace {

using cli::to_device;
using cli::to_host;

/// Text as earlier versions stored it: one float64 character code per byte.
std::string decode_text(std::vector<double> const& v) {
  std::string s;
  for (double c : v) s += char(static_cast<unsigned char>(c));
  return s;
}

/// History rows: iteration, loss, relative_residual, gradient_norm, step, elapsed_seconds, chunk_size,
/// minibatch_loss, validation_relative_residual, rank_stage. Earlier checkpoints have the first 8 columns.
constexpr std::size_t history_columns = 10;
constexpr std::size_t old_history_columns = 8;

std::vector<double> encode_history(std::vector<IterationRecord> const& h) {
  std::vector<double> out;
  for (auto const& r : h) {
    double const row[history_columns] = {double(r.iteration),  r.loss,           r.relative_residual,
                                         r.gradient_norm,      r.step,           r.elapsed_seconds,
                                         double(r.chunk_size), r.minibatch_loss, r.validation_relative_residual,
                                         double(r.rank_stage)};
    out.insert(out.end(), row, row + history_columns);
  }
  return out;
}

std::vector<IterationRecord> decode_history(std::vector<double> const& v, std::size_t columns) {
  std::vector<IterationRecord> h;
  if (columns < old_history_columns) return h;
  for (std::size_t k = 0; k + columns <= v.size(); k += columns) {
    IterationRecord r;
    r.iteration = std::size_t(v[k]);
    r.loss = v[k + 1];
    r.relative_residual = v[k + 2];
    r.gradient_norm = v[k + 3];
    r.step = v[k + 4];
    r.elapsed_seconds = v[k + 5];
    r.chunk_size = std::size_t(v[k + 6]);
    r.minibatch_loss = v[k + 7];
    if (columns >= history_columns) {
      r.validation_relative_residual = v[k + 8];
      r.rank_stage = std::size_t(v[k + 9]);
    }
    h.push_back(r);
  }
  return h;
}

/// The largest magnitude of a real in a checkpoint's state (losses, norms, scalars, moments): the optimizers square
/// such values, and the square of anything larger is within a few decades of float64's range (1.8e308). A finite
/// run never gets there; a checkpoint that does was not written by one.
constexpr double max_state_magnitude = 1e150;
/// The largest whole number a checkpoint stores (iterations, counts): float64 holds integers exactly up to 2^53.
constexpr double max_whole_number = 9007199254740992.0;

/// What a checkpoint value may be.
enum class Allowed {
  whole,          ///< an integer from 0 to 2^53
  flag,           ///< 0 or 1
  real,           ///< finite, magnitude at most max_state_magnitude
  nonnegative,    ///< real and >= 0
  nan_or_real,    ///< NaN (not recorded) or real
  nan_or_nonneg,  ///< NaN (not recorded) or nonnegative
  inf_or_nonneg,  ///< +Inf (nothing seen yet) or nonnegative
  half_word       ///< an integer from 0 to 2^32 - 1 (half of a 64-bit word)
};

std::string value_text(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

/// Empty when `v` is allowed; else what was expected.
std::string disallowed(double v, Allowed allowed) {
  bool const real = std::isfinite(v) && std::fabs(v) <= max_state_magnitude;
  switch (allowed) {
    case Allowed::whole:
      return std::isfinite(v) && v >= 0 && v <= max_whole_number && v == std::floor(v)
                 ? std::string()
                 : "expected a whole number from 0 to 2^53";
    case Allowed::flag:
      return v == 0 || v == 1 ? std::string() : "expected 0 or 1";
    case Allowed::half_word:
      return std::isfinite(v) && v >= 0 && v <= 4294967295.0 && v == std::floor(v)
                 ? std::string()
                 : "expected a whole number from 0 to 2^32 - 1";
    case Allowed::real:
      return real ? std::string() : "expected a finite number of magnitude at most 1e150";
    case Allowed::nonnegative:
      return real && v >= 0 ? std::string() : "expected a finite number from 0 to 1e150";
    case Allowed::nan_or_real:
      return std::isnan(v) || real ? std::string() : "expected NaN or a finite number of magnitude at most 1e150";
    case Allowed::nan_or_nonneg:
      return std::isnan(v) || (real && v >= 0) ? std::string() : "expected NaN or a finite number from 0 to 1e150";
    case Allowed::inf_or_nonneg:
      return (std::isinf(v) && v > 0) || (real && v >= 0) ? std::string()
                                                          : "expected +Inf or a finite number from 0 to 1e150";
  }
  return std::string();
}

/// Refuses a value of a checkpoint dataset that is not `allowed`, naming the dataset, the index and what it holds.
void require(std::string const& path, std::string const& where, double v, Allowed allowed) {
  std::string const problem = disallowed(v, allowed);
  if (!problem.empty()) throw io::FileError(path + ": " + where + " is " + value_text(v) + "; " + problem);
}

/// What each history column may hold (decode_history's order); NaN marks what an iteration did not evaluate.
constexpr Allowed history_allowed[] = {
    Allowed::whole,       Allowed::nan_or_nonneg, Allowed::nan_or_nonneg, Allowed::nan_or_nonneg, Allowed::nan_or_real,
    Allowed::nonnegative, Allowed::whole,         Allowed::nan_or_nonneg, Allowed::nan_or_nonneg, Allowed::whole};
constexpr char const* history_names[] = {"iteration",     "loss",           "relative_residual",
                                         "gradient_norm", "step",           "elapsed_seconds",
                                         "chunk_size",    "minibatch_loss", "validation_relative_residual",
                                         "rank_stage"};

/// What a named optimizer scalar may hold (optimizer_common.hpp, rank_continuation.hpp; the rest are reals).
Allowed scalar_allowed(std::string const& name) {
  if (name == "validation_last") return Allowed::nan_or_nonneg;
  if (name == "validation_best" || name == "continuation_best_validation") return Allowed::inf_or_nonneg;
  if (name == "continuation_stage_done" || name == "continuation_polish") return Allowed::flag;
  if (name == "validation_without_best" || name == "continuation_stage" || name == "continuation_stage_start" ||
      name == "continuation_stages_without_best" || name == "continuation_stage_outcome") {
    return Allowed::whole;
  }
  return Allowed::real;
}

/// Refuses an entry of a moment array beyond max_state_magnitude (the reader has refused non-finite ones).
template <class View>
void require_moderate(std::string const& path, std::string const& name, View const& v) {
  for (std::size_t e = 0; e < v.span(); ++e)
    require(path, name + " (entry " + std::to_string(e) + ")", v.data()[e], Allowed::real);
}

void write_cores(io::Writer& w, std::string const& group, DeviceT3 const& x) {
  for (std::size_t i = 0; i < x.n_modes(); ++i) {
    w.write_view(group + "/tucker/" + std::to_string(i), to_host(x.tucker_core(i)));
    w.write_view(group + "/tt/" + std::to_string(i), to_host(x.tt_core(i)));
  }
}

DeviceT3 read_cores(io::Reader const& r, std::string const& group) {
  std::vector<DeviceT3::tucker_core_type> us;
  std::vector<DeviceT3::tt_core_type> gs;
  for (std::size_t i = 0; r.exists(group + "/tt/" + std::to_string(i)); ++i) {
    us.push_back(to_device(r.read_matrix(group + "/tucker/" + std::to_string(i), {io::any_extent, io::any_extent})));
    gs.push_back(
        to_device(r.read_array3(group + "/tt/" + std::to_string(i), {io::any_extent, io::any_extent, io::any_extent})));
  }
  if (us.empty()) return DeviceT3();
  try {
    return DeviceT3(std::move(us), std::move(gs));
  } catch (std::exception const& e) {
    throw io::FileError(r.path() + ": " + group + ": " + e.what());
  }
}

}  // namespace

/// Layout: /t3 (the point) and /checkpoint/{optimizer, fingerprint, iteration, scalar_names ('\n'-joined),
/// scalar_values, sampler_state (each 64-bit word as two exact 32-bit halves), second_moments, moment/tucker/<i>,
/// moment/tt/<i> (with the stack axis), history (rows of iteration, loss, relative_residual, gradient_norm, step,
/// elapsed_seconds, chunk_size, minibatch_loss, validation_relative_residual, rank_stage), best_x and stage_best_x
/// (tucker/<i>, tt/<i>: the best point on validation, and rank continuation's best finished stage)}.
void write_checkpoint(std::string const& path, Checkpoint const& c, std::string const& fingerprint) {
  io::Writer w(path);
  Space space;
  w.write_t3(copy_t3_to<Kokkos::HostSpace>(space, c.x));
  auto raw = [&w](std::string const& name, std::vector<double> const& v) {
    if (!v.empty()) w.write_raw("/checkpoint/" + name, {v.size()}, v.data());
  };
  w.write_text("/checkpoint/optimizer", c.optimizer);
  w.write_text("/checkpoint/fingerprint", fingerprint);
  raw("iteration", {double(c.iteration)});
  std::string names;
  std::vector<double> values;
  for (auto const& [k, v] : c.scalars) {
    names += (names.empty() ? "" : "\n") + k;
    values.push_back(v);
  }
  if (!names.empty()) w.write_text("/checkpoint/scalar_names", names);
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
  write_cores(w, "/checkpoint/best_x", c.best_x);
  write_cores(w, "/checkpoint/stage_best_x", c.stage_best_x);
  auto const h = encode_history(c.history);
  if (!h.empty()) w.write_raw("/checkpoint/history", {c.history.size(), history_columns}, h.data());
  io::RootAttributes a;
  a.d = std::int64_t(c.x.n_modes());
  w.write_root_attributes(a);
  w.commit();
}

LoadedCheckpoint read_checkpoint(std::string const& path) {
  io::Reader r(path);
  LoadedCheckpoint out;
  auto& c = out.checkpoint;
  auto raw = [&r](std::string const& name) {
    std::vector<std::size_t> shape;
    std::string const object = "/checkpoint/" + name;
    return r.exists(object) ? r.read_raw(object, shape) : std::vector<double>();
  };
  // Text datasets are strings; earlier versions stored one float64 character code per byte.
  auto text = [&r, &raw](std::string const& name) {
    std::string const object = "/checkpoint/" + name;
    if (r.exists(object) && r.is_text(object)) return r.read_text(object);
    return decode_text(raw(name));
  };
  c.optimizer = text("optimizer");
  out.fingerprint = text("fingerprint");
  auto const it = raw("iteration");
  if (it.size() != 1) throw io::FileError(path + ": /checkpoint/iteration is missing");
  require(path, "/checkpoint/iteration", it[0], Allowed::whole);
  c.iteration = std::size_t(it[0]);
  Space space;
  c.x = copy_t3_to<Mem>(space, r.read_t3());
  std::string const names = text("scalar_names");
  auto const values = raw("scalar_values");
  std::size_t k = 0, start = 0;
  while (!names.empty() && start <= names.size()) {
    std::size_t end = names.find('\n', start);
    if (end == std::string::npos) end = names.size();
    if (k >= values.size()) throw io::FileError(path + ": /checkpoint/scalar_values is shorter than scalar_names");
    std::string const name = names.substr(start, end - start);
    require(path, "/checkpoint/scalar_values[" + std::to_string(k) + "] (" + name + ")", values[k],
            scalar_allowed(name));
    c.scalars[name] = values[k++];
    start = end + 1;
  }
  auto const sampler = raw("sampler_state");
  if (sampler.size() % 2 != 0) throw io::FileError(path + ": /checkpoint/sampler_state has an odd length");
  for (std::size_t q = 0; q < sampler.size(); ++q) {
    require(path, "/checkpoint/sampler_state[" + std::to_string(q) + "]", sampler[q], Allowed::half_word);
  }
  for (std::size_t q = 0; q + 1 < sampler.size(); q += 2) {
    c.sampler_state.push_back((std::uint64_t(sampler[q]) << 32) | std::uint64_t(sampler[q + 1]));
  }
  c.second_moments = raw("second_moments");
  for (std::size_t q = 0; q < c.second_moments.size(); ++q) {
    require(path, "/checkpoint/second_moments[" + std::to_string(q) + "]", c.second_moments[q], Allowed::nonnegative);
  }
  for (std::size_t i = 0; r.exists("/checkpoint/moment/tt/" + std::to_string(i)); ++i) {
    auto u = r.read_array3("/checkpoint/moment/tucker/" + std::to_string(i),
                           {io::any_extent, io::any_extent, io::any_extent});
    auto g = r.read_array4("/checkpoint/moment/tt/" + std::to_string(i),
                           {io::any_extent, io::any_extent, io::any_extent, io::any_extent});
    require_moderate(path, "/checkpoint/moment/tucker/" + std::to_string(i), u);
    require_moderate(path, "/checkpoint/moment/tt/" + std::to_string(i), g);
    c.moment.tucker.push_back(to_device(u));
    c.moment.tt.push_back(to_device(g));
  }
  if (r.exists("/checkpoint/history")) {
    std::vector<std::size_t> shape;
    auto const rows = r.read_raw("/checkpoint/history", shape);
    if (shape.size() != 2 || (shape[1] != history_columns && shape[1] != old_history_columns)) {
      throw io::FileError(path + ": /checkpoint/history has shape " + impl::shape_string(shape) + ", expected [* x " +
                          std::to_string(history_columns) + "] (or [* x " + std::to_string(old_history_columns) +
                          "] from earlier versions)");
    }
    for (std::size_t e = 0; e < rows.size(); ++e) {
      std::size_t const column = e % shape[1];
      require(path,
              "/checkpoint/history[" + std::to_string(e / shape[1]) + ", " + std::to_string(column) + "] (" +
                  history_names[column] + ")",
              rows[e], history_allowed[column]);
    }
    c.history = decode_history(rows, shape[1]);
  }
  c.best_x = read_cores(r, "/checkpoint/best_x");
  c.stage_best_x = read_cores(r, "/checkpoint/stage_best_x");
  return out;
}

}  // namespace fit
}  // namespace t3k
