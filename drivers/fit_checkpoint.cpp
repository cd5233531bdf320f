/// \file fit_checkpoint.cpp
/// Writing and reading checkpoint.h5 (fit_checkpoint.hpp).

#include "drivers/fit_checkpoint.hpp"

#include "drivers/device_copies.hpp"
#include "t3k/io/hdf5_io.hpp"

#include <cstdint>
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
  if (r.exists("/checkpoint/history")) {
    std::vector<std::size_t> shape;
    auto const rows = r.read_raw("/checkpoint/history", shape);
    c.history = decode_history(rows, shape.size() == 2 ? shape[1] : 0);
  }
  c.best_x = read_cores(r, "/checkpoint/best_x");
  c.stage_best_x = read_cores(r, "/checkpoint/stage_best_x");
  return out;
}

}  // namespace fit
}  // namespace t3k
