/// \file main.cpp
/// The command-line tool `t3k` (docs/file-format.md lists what each command reads and writes): probe jets, frames, J v
/// and J^T r on HDF5 files, a model's predictions and scores on data files (measurement_commands.hpp), and a
/// self-checking demo.
///
/// Exit codes (exit_codes.hpp): 0 success; 2 bad input (a flag, a missing or misshapen dataset, an unreadable file),
/// with one line naming the flag or the dataset; 1 any other failure. Outputs are written atomically (hdf5_io.hpp).
///
/// Under `mpirun -np P` (built with T3K_ENABLE_MPI; docs/math.md, sharding) jets, jv, jtr, predict, score and fit
/// shard the samples: each rank reads only its rows (Communicator::shard_range) and rank 0 alone writes the one
/// output file, equal to the single-process one. frame, demo and estimate-chunk have no probe set to share and run on
/// rank 0. A failure on any rank ends every rank with the single-process exit code, printed once (collective.hpp).

#include "drivers/collective.hpp"
#include "drivers/device_copies.hpp"
#include "drivers/exit_codes.hpp"
#include "drivers/finite_results.hpp"
#include "drivers/fit_command.hpp"
#include "drivers/measurement_commands.hpp"
#include "drivers/wait_policy.hpp"
#include "t3k/io/file_safety.hpp"
#include "t3k/io/hdf5_io.hpp"

#include "t3k/algorithms/impl/host/host_blas.hpp"
#include "t3k/algorithms/probe_derivatives.hpp"
#include "t3k/algorithms/random_t3.hpp"
#include "t3k/algorithms/to_dense.hpp"
#include "t3k/core/build_info.hpp"
#include "t3k/core/chunk_size.hpp"
#include "t3k/core/communicator.hpp"
#include "t3k/core/error.hpp"
#include "t3k/core/impl/host_random.hpp"
#include "t3k/version.hpp"

#include "t3k/algorithms/estimate_chunk_size.hpp"
#include "t3k/algorithms/orthogonal_frame.hpp"
#include "t3k/algorithms/probe_derivatives_transpose.hpp"
#include "t3k/algorithms/tangent_probe_derivatives.hpp"

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <Kokkos_Core.hpp>
#include <Kokkos_Timer.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace io = t3k::io;
namespace cli = t3k::cli;
using t3k::Communicator;
using Space = Kokkos::DefaultExecutionSpace;
using Mem = Space::memory_space;
using DeviceMatrix = Kokkos::View<double**, Kokkos::LayoutRight, Mem>;
using DeviceArray3 = Kokkos::View<double***, Kokkos::LayoutRight, Mem>;

using cli::UsageError;

/// This rank's rows of a probe set (all rows with one rank).
io::RowSelector shard_rows(Communicator const& comm) {
  return [comm](std::size_t n_rows) { return comm.shard_range(n_rows); };
}

struct Options {
  std::string in, out;
  int order = -1;  // -1: take the order attribute of /probes
  std::string chunk_size = "auto";
  bool per_probe = false;
  std::size_t demo_probes = 1000;
  std::uint64_t seed = 1;
  // estimate-chunk
  std::vector<std::size_t> mode_shapes, tucker_ranks, tt_ranks;
  std::size_t n_probes = 0, n_tangent = 1, n_shards = 1;
  std::string scalar = "double";
  std::string max_bytes;  // empty: not given
};

/// Refuses an --out that cannot be written safely: a directory, FIFO, socket or block device, or the input file
/// itself (the same device and inode, whatever the spelling). A character device such as /dev/null is written
/// through.
void check_in_out(Options const& opt) {
  try {
    (void)io::output_target(opt.out, "--out");
  } catch (io::FileError const& e) {
    throw UsageError(e.what());
  }
  if (io::same_file(opt.in, opt.out)) {
    throw UsageError("--out: '" + opt.out + "' is the input file --in '" + opt.in +
                     "'; writing it would destroy the input, name another file");
  }
}

using cli::to_device;
using cli::to_host;

template <class Dst, class Src>
t3k::OrthogonalFrame<double, Dst> copy_frame(t3k::OrthogonalFrame<double, Src> const& f) {
  using Frame = t3k::OrthogonalFrame<double, Dst>;
  std::vector<typename Frame::matrix_type> up;
  std::vector<typename Frame::core_type> left, right, outer;
  for (std::size_t i = 0; i < f.n_modes(); ++i) {
    up.push_back(Kokkos::create_mirror_view_and_copy(Dst{}, f.up_tucker(i)));
    left.push_back(Kokkos::create_mirror_view_and_copy(Dst{}, f.left_tt(i)));
    right.push_back(Kokkos::create_mirror_view_and_copy(Dst{}, f.right_tt(i)));
    outer.push_back(Kokkos::create_mirror_view_and_copy(Dst{}, f.outer_tt(i)));
  }
  return Frame(std::move(up), std::move(left), std::move(right), std::move(outer));
}

template <class Dst, class Src>
t3k::T3Variation<double, Dst> copy_variation(t3k::T3Variation<double, Src> const& v) {
  t3k::T3Variation<double, Dst> out;
  for (std::size_t i = 0; i < v.n_modes(); ++i) {
    out.tucker.push_back(Kokkos::create_mirror_view_and_copy(Dst{}, v.tucker[i]));
    out.tt.push_back(Kokkos::create_mirror_view_and_copy(Dst{}, v.tt[i]));
  }
  return out;
}

/// The jet order: --order when given, else the order attribute of /probes.
std::size_t resolve_order(Options const& opt, io::ProbeSet const& probes, std::string const& file) {
  if (opt.order >= 0) return std::size_t(opt.order);
  if (!probes.order) throw UsageError(file + ": attribute 'order' of /probes is missing; pass --order K");
  return *probes.order;
}

io::RootAttributes root_attributes(std::size_t d, std::size_t w, std::size_t k) {
  io::RootAttributes a;
  a.d = std::int64_t(d);
  a.w = std::int64_t(w);
  a.k = std::int64_t(k);
  return a;
}

// ------------------------------------------------------------------------------------------------------ commands

// jets, jv and jtr read this rank's rows inside `collectively` (a bad file fails every rank alike), compute on them,
// and write through a ShardedWriter. With one rank every step is the single-process step.

int run_jets(Options const& opt, Communicator const& comm) {
  io::HostT3 x_host;
  io::ProbeSet probes;
  std::size_t order = 0;
  cli::collectively(comm, cli::command_exit_code, [&] {
    check_in_out(opt);
    io::Reader in(opt.in);
    x_host = in.read_t3();
    probes = in.read_probes(x_host.mode_shapes(), shard_rows(comm));
    order = resolve_order(opt, probes, in.path());
  });
  Space space;
  io::JetStack jets;
  cli::collectively(comm, cli::command_exit_code, [&] {
    auto const x = t3k::copy_t3_to<Mem>(space, x_host);
    auto const ww = to_device(probes.w);
    auto const pp = to_device(probes.p);
    auto const z = t3k::probe_derivatives(space, x, ww, pp, order);
    for (auto const& zi : z) jets.push_back(to_host(zi));
    cli::require_finite_results("/jets", jets);
  });
  cli::ShardedWriter out(comm, cli::command_exit_code, opt.out);
  for (std::size_t i = 0; i < jets.size(); ++i) out.write_view_rows("/jets/" + std::to_string(i), jets[i]);
  out.on_root([&](io::Writer& w) {
    w.write_root_attributes(root_attributes(x_host.n_modes(), probes.n_file_probes(), order));
  });
  out.commit();
  return cli::exit_success;
}

int run_frame(Options const& opt) {
  check_in_out(opt);
  io::Reader in(opt.in);
  auto const x_host = in.read_t3();
  Space space;
  auto const x = t3k::copy_t3_to<Mem>(space, x_host);
  auto const frame = copy_frame<Kokkos::HostSpace>(t3k::orthogonal_frame(space, x));
  for (std::size_t i = 0; i < frame.n_modes(); ++i) {
    cli::require_finite_result("/frame/up_tucker/" + std::to_string(i), frame.up_tucker(i));
    cli::require_finite_result("/frame/left_tt/" + std::to_string(i), frame.left_tt(i));
    cli::require_finite_result("/frame/right_tt/" + std::to_string(i), frame.right_tt(i));
    cli::require_finite_result("/frame/outer_tt/" + std::to_string(i), frame.outer_tt(i));
  }
  io::Writer out(opt.out);
  out.write_frame(frame);
  io::RootAttributes a;
  a.d = std::int64_t(frame.n_modes());
  out.write_root_attributes(a);
  out.commit();
  return cli::exit_success;
}

int run_jv(Options const& opt, Communicator const& comm) {
  io::HostFrame frame_host;
  io::HostVariation v_host;
  io::ProbeSet probes;
  std::size_t order = 0;
  cli::collectively(comm, cli::command_exit_code, [&] {
    check_in_out(opt);
    io::Reader in(opt.in);
    frame_host = in.read_frame();
    v_host = in.read_variation(frame_host);
    probes = in.read_probes(frame_host.mode_shapes(), shard_rows(comm));
    order = resolve_order(opt, probes, in.path());
  });
  Space space;
  io::JetStack jets;
  cli::collectively(comm, cli::command_exit_code, [&] {
    auto const frame = copy_frame<Mem>(frame_host);
    auto const v = copy_variation<Mem>(v_host);
    auto const ww = to_device(probes.w);
    auto const pp = to_device(probes.p);
    auto const z = t3k::tangent_probe_derivatives(space, frame, v, ww, pp, order);
    for (auto const& zi : z) {
      auto const all = to_host(zi);  // (1, W, K+1, N_i)
      io::Array3 first(Kokkos::view_alloc(Kokkos::WithoutInitializing, "t3k::cli::tangent_jets"), all.extent(1),
                       all.extent(2), all.extent(3));
      Kokkos::deep_copy(first, Kokkos::subview(all, 0, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL));
      jets.push_back(first);
    }
    cli::require_finite_results("/tangent_jets", jets);
  });
  cli::ShardedWriter out(comm, cli::command_exit_code, opt.out);
  for (std::size_t i = 0; i < jets.size(); ++i) out.write_view_rows("/tangent_jets/" + std::to_string(i), jets[i]);
  out.on_root([&](io::Writer& w) {
    w.write_root_attributes(root_attributes(frame_host.n_modes(), probes.n_file_probes(), order));
  });
  out.commit();
  return cli::exit_success;
}

int run_jtr(Options const& opt, Communicator const& comm) {
  t3k::ChunkSize chunk;
  io::HostFrame frame_host;
  io::ProbeSet probes;
  io::JetStack residual_host;
  cli::collectively(comm, cli::command_exit_code, [&] {
    try {
      chunk = t3k::ChunkSize::parse(opt.chunk_size);
      check_in_out(opt);
    } catch (t3k::InvalidArgument const& e) {
      throw UsageError(std::string("--chunk-size: ") + e.what());
    }
    io::Reader in(opt.in);
    frame_host = in.read_frame();
    probes = in.read_probes(frame_host.mode_shapes(), shard_rows(comm));
    std::size_t const n_orders = probes.order ? *probes.order + 1 : io::any_extent;
    residual_host = in.read_jets("/residual", frame_host.mode_shapes(), probes.n_file_probes(), n_orders,
                                 t3k::ShardRange{probes.first_row, probes.first_row + probes.n_probes()});
  });
  std::size_t const order = residual_host[0].extent(1) - 1;
  Space space;
  t3k::OrthogonalFrame<double, Mem> frame;
  std::vector<DeviceMatrix> ww, pp;
  std::vector<DeviceArray3> residual;
  cli::collectively(comm, cli::command_exit_code, [&] {
    frame = copy_frame<Mem>(frame_host);
    ww = to_device(probes.w);
    pp = to_device(probes.p);
    residual = to_device(residual_host);
  });
  t3k::TransposeOptions options;
  options.sum_over_probes = !opt.per_probe;
  options.chunk_size = chunk;
  // Collective: this rank's chunked sum (chunk auto: the estimate for this rank's rows, n_shards = P), then one
  // reduction; per probe, this rank's rows. Its shape checks are collective, so it fails on every rank or none.
  auto const grad_device = t3k::probe_derivatives_transpose(space, comm, frame, ww, pp, residual, options);
  io::HostVariation grad;
  cli::collectively(comm, cli::command_exit_code, [&] {
    grad = copy_variation<Kokkos::HostSpace>(grad_device);
    std::string const group = opt.per_probe ? "/grad_per_probe" : "/grad";
    for (std::size_t i = 0; i < grad.n_modes(); ++i) {
      cli::require_finite_result(group + "/tucker/" + std::to_string(i), grad.tucker[i]);
      cli::require_finite_result(group + "/tt/" + std::to_string(i), grad.tt[i]);
    }
  });
  cli::ShardedWriter out(comm, cli::command_exit_code, opt.out);
  if (opt.per_probe) {
    for (std::size_t i = 0; i < grad.n_modes(); ++i) {
      out.write_view_rows("/grad_per_probe/tucker/" + std::to_string(i), grad.tucker[i]);
      out.write_view_rows("/grad_per_probe/tt/" + std::to_string(i), grad.tt[i]);
    }
  } else {
    out.on_root([&](io::Writer& w) { w.write_gradient(grad, false); });
  }
  out.on_root([&](io::Writer& w) {
    w.write_root_attributes(root_attributes(frame_host.n_modes(), probes.n_file_probes(), order));
  });
  out.commit();
  return cli::exit_success;
}

/// Order-0 probes of the first `n_check` probes by brute force on the dense tensor (host, row-major).
double dense_probe_error(std::vector<double> const& dense, std::vector<std::size_t> const& shapes,
                         std::vector<io::Matrix> const& w, std::vector<io::Matrix> const& z0, std::size_t n_check) {
  std::size_t const d = shapes.size();
  double max_err = 0, scale = 0;
  std::vector<std::size_t> idx(d);
  for (std::size_t s = 0; s < n_check; ++s) {
    for (std::size_t i = 0; i < d; ++i) {
      std::vector<double> ref(shapes[i], 0.0);
      for (std::size_t e = 0; e < dense.size(); ++e) {
        std::size_t rem = e;
        for (std::size_t m = d; m-- > 0;) {
          idx[m] = rem % shapes[m];
          rem /= shapes[m];
        }
        double weight = dense[e];
        for (std::size_t m = 0; m < d; ++m) {
          if (m != i) weight *= w[m](s, idx[m]);
        }
        ref[idx[i]] += weight;
      }
      for (std::size_t j = 0; j < shapes[i]; ++j) {
        max_err = std::max(max_err, std::abs(ref[j] - z0[i](s, j)));
        scale = std::max(scale, std::abs(ref[j]));
      }
    }
  }
  return scale > 0 ? max_err / scale : max_err;
}

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

int estimate_chunk(Options const& opt);

/// t3k estimate-chunk: the memory model of J^T for the given shapes (docs/math.md, chunking), no data needed; sizes
/// whose byte counts pass 2^64 are refused, never wrapped.
int run_estimate_chunk(Options const& opt) {
  try {
    return estimate_chunk(opt);
  } catch (t3k::InvalidArgument const& e) {
    throw UsageError(std::string("--mode-shapes, --tucker-ranks, --tt-ranks, --order, --n-probes: ") + e.what());
  } catch (t3k::DimensionMismatch const& e) {
    throw UsageError(std::string("--mode-shapes, --tucker-ranks, --tt-ranks: ") + e.what());
  }
}

int estimate_chunk(Options const& opt) {
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
  return cli::exit_success;
}

int run_demo(Options const& opt) {
  std::vector<std::size_t> const big_n(5, 8), n(5, 4), r{1, 5, 5, 5, 5, 1};
  std::size_t const d = big_n.size(), w = opt.demo_probes, order = 2;
  if (w == 0) throw UsageError("--probes: must be >= 1");
  // Probes, directions, jets (3 orders), order-0 probes and their host copies: 16 doubles per probe and mode entry.
  auto const bytes = io::checked_product(w, 16 * sizeof(double) * d * big_n[0]);
  if (auto const shortfall = io::memory_shortfall(bytes)) {
    throw UsageError("--probes: " + std::to_string(w) + " probes " + *shortfall + "; lower --probes");
  }
  Space space;
  auto const x = t3k::random_t3<double>(space, big_n, n, r, opt.seed);

  // Probe pairs: i.i.d. normal, scaled by 1/sqrt(N) so that probes stay of order one.
  t3k::impl::HostNormalGenerator gen(opt.seed + 1);
  std::vector<io::Matrix> w_host, p_host;
  for (std::size_t i = 0; i < d; ++i) {
    io::Matrix wi("t3k::demo::w", w, big_n[i]), pi("t3k::demo::p", w, big_n[i]);
    double const scale = 1.0 / std::sqrt(double(big_n[i]));
    for (std::size_t s = 0; s < w; ++s)
      for (std::size_t j = 0; j < big_n[i]; ++j) {
        wi(s, j) = scale * gen.normal();
        pi(s, j) = scale * gen.normal();
      }
    w_host.push_back(wi);
    p_host.push_back(pi);
  }
  auto const ww = to_device(w_host);
  auto const pp = to_device(p_host);
  space.fence();

  Kokkos::Timer timer;
  auto const jets = t3k::probe_derivatives(space, x, ww, pp, order);
  space.fence();
  double const t_jets = timer.seconds();
  timer.reset();
  auto const z0_dev = t3k::probes(space, x, ww);
  space.fence();
  double const t_probes = timer.seconds();

  std::vector<io::Array3> jets_host;
  std::vector<io::Matrix> z0;
  for (std::size_t i = 0; i < d; ++i) {
    jets_host.push_back(to_host(jets[i]));
    z0.push_back(to_host(z0_dev[i]));
  }
  std::vector<double> norms(order + 1, 0.0);
  double jet_vs_probe = 0, probe_scale = 0;
  for (std::size_t i = 0; i < d; ++i)
    for (std::size_t s = 0; s < w; ++s)
      for (std::size_t j = 0; j < big_n[i]; ++j) {
        for (std::size_t k = 0; k <= order; ++k) norms[k] += jets_host[i](s, k, j) * jets_host[i](s, k, j);
        jet_vs_probe = std::max(jet_vs_probe, std::abs(jets_host[i](s, 0, j) - z0[i](s, j)));
        probe_scale = std::max(probe_scale, std::abs(z0[i](s, j)));
      }
  if (probe_scale > 0) jet_vs_probe /= probe_scale;

  auto const dense_view = to_host(t3k::to_dense(space, x));
  std::vector<double> dense(dense_view.data(), dense_view.data() + dense_view.extent(0));
  std::size_t const n_check = std::min<std::size_t>(w, 4);
  double const dense_err = dense_probe_error(dense, big_n, w_host, z0, n_check);

  fmt::print("t3k demo: random T3, d = {}, N = {}, n = {}, r = {}, seed {}\n", d, t3k::impl::shape_string(big_n),
             t3k::impl::shape_string(n), t3k::impl::shape_string(r), opt.seed);
  fmt::print("execution space: {} (concurrency {})\n", Space::name(), Space().concurrency());
  fmt::print("probe_derivatives: W = {}, order {}: {} arrays of shape [{} x {} x {}] in {:.3e} s\n", w, order, d, w,
             order + 1, big_n[0], t_jets);
  fmt::print("probes (order 0): {} arrays of shape [{} x {}] in {:.3e} s\n", d, w, big_n[0], t_probes);
  for (std::size_t k = 0; k <= order; ++k) fmt::print("  ||z^({})||_F = {:.6e}\n", k, std::sqrt(norms[k]));
  fmt::print("check: order-0 jets vs probes, max relative difference {:.2e}\n", jet_vs_probe);
  fmt::print("check: probes vs dense contraction ({} probes), max relative error {:.2e}\n", n_check, dense_err);
  double const tolerance = 1e-12;  // ~4500 eps: sums of a few thousand terms of order one
  bool const ok = jet_vs_probe <= tolerance && dense_err <= tolerance;
  fmt::print("{}\n", ok ? "demo OK" : "demo FAILED: a check exceeded 1e-12");
  return ok ? cli::exit_success : cli::exit_failure;
}

// ------------------------------------------------------------------------------------------------------- version

void print_version() {
  fmt::print("t3k {}\n", T3K_VERSION_STRING);
  fmt::print("Kokkos {} (backends: {}; default execution space: {})\n", t3k::kokkos_version_string(),
             t3k::kokkos_backends(), Space::name());
  fmt::print("host BLAS: {}\n", t3k::host_blas_description());
  fmt::print("OpenMP waiting: {}\n", cli::wait_policy_description());
  std::string const blas_warning = t3k::host_blas_warning();
  if (!blas_warning.empty()) fmt::print("warning: {}\n", blas_warning);
}

/// An integer flag value in [minimum, maximum], with a message that reads well.
CLI::Validator integer_in(long long minimum, long long maximum) {
  return CLI::Validator(
      [minimum, maximum](std::string& text) -> std::string {
        std::size_t pos = 0;
        long long value = 0;
        try {
          value = std::stoll(text, &pos);
        } catch (...) {
          pos = 0;
        }
        if (pos == 0 || pos != text.size() || value < minimum || value > maximum) {
          return "must be an integer from " + std::to_string(minimum) + " to " + std::to_string(maximum) + ", got '" +
                 text + "'";
        }
        return std::string();
      },
      "INT in [" + std::to_string(minimum) + ", " + std::to_string(maximum) + "]");
}

/// An integer flag value >= `minimum`, with a message that reads well ("must be an integer >= 0, got '-1'").
CLI::Validator integer_at_least(long long minimum) {
  return CLI::Validator(
      [minimum](std::string& text) -> std::string {
        std::size_t pos = 0;
        long long value = 0;
        try {
          value = std::stoll(text, &pos);
        } catch (...) {
          pos = 0;
        }
        if (pos == 0 || pos != text.size() || value < minimum) {
          return "must be an integer >= " + std::to_string(minimum) + ", got '" + text + "'";
        }
        return std::string();
      },
      "INT>=" + std::to_string(minimum));
}

/// A whole number written in plain digits: CLI11 reads "-1" into an unsigned option as 2^64 - 1.
CLI::Validator whole_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) return std::string();
        return "must be a whole number (digits only), got '" + text + "'";
      },
      "UINT");
}

/// Checks every --kokkos-* argument before Kokkos parses it: Kokkos 3 throws from Kokkos::initialize on a value
/// that is not plain digits ("+4", "-5", "abc"), or overflows a thread table on a huge one, and ignores a misspelt
/// flag. Returns the message for the first bad one.
std::optional<std::string> check_kokkos_args(std::vector<char*> const& kokkos_args) {
  struct Limit {
    char const* flag;
    long long minimum, maximum;
  };
  static Limit const integers[] = {{"--kokkos-threads", 1, t3k::fit::max_kokkos_threads},
                                   {"--kokkos-num-threads", 1, t3k::fit::max_kokkos_threads},
                                   {"--kokkos-numa", 1, 64},
                                   {"--kokkos-device", 0, 4096},
                                   {"--kokkos-device-id", 0, 4096},
                                   {"--kokkos-skip-device", 0, 4096}};
  // Flags without a value, and flags whose value is Kokkos' own business (a tool library, its arguments, a word).
  static char const* const switches[] = {"--kokkos-help", "--kokkos-disable-warnings", "--kokkos-tune-internals",
                                         "--kokkos-tools-help", "--kokkos-print-configuration"};
  static char const* const texts[] = {"--kokkos-tools-library", "--kokkos-tools-libs", "--kokkos-tools-args",
                                      "--kokkos-map-device-id-by"};
  // Digits only (no sign, blank or base prefix), as Kokkos 3 requires, within [minimum, maximum].
  auto integer_problem = [](std::string const& text, long long minimum, long long maximum) -> std::string {
    bool const digits = !text.empty() && text.size() <= 9 &&
                        std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (digits && std::stoll(text) >= minimum && std::stoll(text) <= maximum) return std::string();
    return "must be an integer from " + std::to_string(minimum) + " to " + std::to_string(maximum) + ", got '" + text +
           "'";
  };
  for (std::size_t a = 1; a < kokkos_args.size(); ++a) {
    std::string const arg = kokkos_args[a];
    std::size_t const eq = arg.find('=');
    std::string const flag = arg.substr(0, eq);
    std::string const value = eq == std::string::npos ? std::string() : arg.substr(eq + 1);
    bool known = false;
    for (auto const& limit : integers) {
      if (flag != limit.flag) continue;
      known = true;
      if (eq == std::string::npos) return flag + ": needs a value, as in " + flag + "=N";
      std::string const problem = integer_problem(value, limit.minimum, limit.maximum);
      if (!problem.empty()) return flag + ": " + problem;
    }
    if (flag == "--kokkos-ndevices" || flag == "--kokkos-num-devices") {
      // N or N,SKIP: N devices per node, and the device to skip.
      known = true;
      if (eq == std::string::npos) return flag + ": needs a value, as in " + flag + "=N or " + flag + "=N,SKIP";
      std::size_t const comma = value.find(',');
      std::string problem = integer_problem(value.substr(0, comma), 1, 4096);
      if (problem.empty() && comma != std::string::npos) problem = integer_problem(value.substr(comma + 1), 0, 4096);
      if (!problem.empty()) return flag + ": " + problem;
    }
    for (char const* name : switches) {
      if (flag != name) continue;
      known = true;
      if (eq != std::string::npos) return flag + ": takes no value, got '" + value + "'";
    }
    for (char const* name : texts) {
      if (flag != name) continue;
      known = true;
      if (value.empty()) return flag + ": needs a value, as in " + flag + "=VALUE";
    }
    if (!known) return flag + ": not a Kokkos flag this program knows (see --kokkos-help)";
  }
  return std::nullopt;
}

void add_in_out(CLI::App* sub, Options& opt) {
  sub->add_option("--in", opt.in, "input HDF5 file")->required();
  sub->add_option("--out", opt.out, "output HDF5 file (written atomically)")->required();
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything starts threads or connects to mpirun: this may execute the program again (wait_policy.hpp).
  cli::apply_default_wait_policy(argv);

  // MPI (with T3K_ENABLE_MPI) outlives Kokkos and everything else: it is finalized when `mpi` goes out of scope.
  cli::MpiSession mpi(argc, argv);
  Communicator const comm = mpi.world();
  bool const root = comm.rank_index() == 0;  // prints help, versions and errors once

  // Kokkos' OpenMP backend prints four lines of advice to stdout when OMP_PROC_BIND is unset, into every command's
  // output (`fit --quiet` too). false is what the OpenMP runtime does when neither variable is set, so this default
  // changes no thread binding; values the user sets are kept.
  if (!std::getenv("OMP_PROC_BIND") && !std::getenv("OMP_PLACES")) ::setenv("OMP_PROC_BIND", "false", 0);

  // --kokkos-* arguments go to Kokkos, everything else to the command line parser.
  std::vector<char*> kokkos_args{argv[0]}, cli_args{argv[0]};
  for (int a = 1; a < argc; ++a) {
    (std::string(argv[a]).rfind("--kokkos-", 0) == 0 ? kokkos_args : cli_args).push_back(argv[a]);
  }

  if (auto const bad = check_kokkos_args(kokkos_args)) {
    if (root) fmt::print(stderr, "t3k: error: {}\n", *bad);
    return cli::exit_bad_input;
  }

  Options opt;
  CLI::App app{"t3k: probe jets, orthogonal frames, J v and J^T r of Tucker tensor trains on HDF5 files"};
  app.name("t3k");
  bool version = false;
  app.add_flag("--version", version, "print the T3K and Kokkos versions and the enabled backends");
  app.require_subcommand(0, 1);

  auto* demo = app.add_subcommand("demo", "probe jets of a built-in random T3, checked against a dense contraction");
  demo->add_option("--probes", opt.demo_probes, "number of probe pairs W")->check(integer_at_least(1));
  demo->add_option("--seed", opt.seed, "random seed")->check(whole_number());

  auto* jets = app.add_subcommand("jets", "read /t3 and /probes, write the probe jets /jets");
  add_in_out(jets, opt);
  jets->add_option("--order", opt.order, "jet order K (default: the order attribute of /probes)")
      ->check(integer_in(0, static_cast<long long>(io::max_jet_order)));

  CLI::App* const frame = app.add_subcommand("frame", "read /t3, write its orthogonal frame /frame");
  add_in_out(frame, opt);
  CLI::App* const jv = app.add_subcommand("jv", "read /frame, /variation and /probes, write J v as /tangent_jets");
  add_in_out(jv, opt);
  jv->add_option("--order", opt.order, "jet order K (default: the order attribute of /probes)")
      ->check(integer_in(0, static_cast<long long>(io::max_jet_order)));
  CLI::App* const jtr =
      app.add_subcommand("jtr", "read /frame, /probes and /residual, write J^T r as /grad or /grad_per_probe");
  add_in_out(jtr, opt);
  jtr->add_option("--chunk-size", opt.chunk_size, "probes per pass: auto, none or a positive integer")
      ->capture_default_str();
  jtr->add_flag("--per-probe", opt.per_probe, "one gradient per probe (/grad_per_probe) instead of the sum");
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

  cli::MeasurementCommandOptions measurement_options;
  CLI::App* const predict = cli::add_predict_command(app, measurement_options);
  CLI::App* const score = cli::add_score_command(app, measurement_options);

  t3k::fit::FitCommandOptions fit_options;
  CLI::App* const fit = t3k::fit::add_fit_command(app, fit_options);

  // Every rank parses the same arguments, so every rank reaches the same outcome; rank 0 alone says so.
  try {
    app.parse(int(cli_args.size()), cli_args.data());
  } catch (CLI::CallForHelp const& e) {
    return root ? app.exit(e) : e.get_exit_code();
  } catch (CLI::CallForAllHelp const& e) {
    return root ? app.exit(e) : e.get_exit_code();
  } catch (CLI::ParseError const& e) {
    if (root) fmt::print(stderr, "t3k: error: {}\n", e.what());
    return cli::exit_bad_input;
  }
  if (version) {
    if (root) print_version();
    return cli::exit_success;
  }
  auto const selected = app.get_subcommands();
  if (selected.empty()) {
    if (root) {
      fmt::print(stderr, "{}", app.help());
      fmt::print(stderr, "t3k: error: a command is required\n");
    }
    return cli::exit_bad_input;
  }
  CLI::App* const command = selected.front();
  std::string const name = command->get_name();
  // fit reads its configuration before initializing Kokkos (the configuration sets the thread count).
  if (command == fit) return t3k::fit::run_fit_command(fit_options, kokkos_args, comm);

  try {
    int kokkos_argc = int(kokkos_args.size());
    Kokkos::ScopeGuard kokkos(kokkos_argc, kokkos_args.data());
    if (root && (command == jets || command == jv || command == jtr || command == predict || command == score)) {
      std::string const blas_warning = t3k::host_blas_warning();
      if (!blas_warning.empty()) fmt::print(stderr, "t3k {}: warning: {}\n", name, blas_warning);
    }
    if (command == jets) return run_jets(opt, comm);
    if (command == jv) return run_jv(opt, comm);
    if (command == jtr) return run_jtr(opt, comm);
    if (command == predict) return cli::run_predict(measurement_options, comm);
    if (command == score) return cli::run_score(measurement_options, comm);
    // Commands without a probe set to share run on rank 0; the other ranks wait for its exit code.
    int code = cli::exit_failure;
    if (root) {
      try {
        if (command == demo) {
          code = run_demo(opt);
        } else if (command == frame) {
          code = run_frame(opt);
        } else if (command == estimate) {
          code = run_estimate_chunk(opt);
        } else {
          fmt::print(stderr, "t3k {}: error: not implemented\n", name);
        }
      } catch (std::exception const& e) {
        fmt::print(stderr, "t3k {}: error: {}\n", name, e.what());
        code = cli::command_exit_code(e);
      }
    }
    comm.broadcast(&code, 1);
    return code;
  } catch (cli::CollectiveError const& e) {
    // Every rank holds this error; rank 0 prints it.
    if (root) fmt::print(stderr, "t3k {}: error: {}\n", name, e.what());
    return e.exit_code();
  } catch (std::exception const& e) {
    // The library's collective checks throw on every rank alike; anything else failed on this rank alone, and the
    // other ranks may wait for it in a collective call: then MPI_Abort is the only way to end them.
    bool const on_every_rank = cli::thrown_on_every_rank(e);
    if (root || !on_every_rank) {
      fmt::print(stderr, "t3k {}: error: {}{}\n", name,
                 comm.size() > 1 && !on_every_rank ? fmt::format("rank {}: ", comm.rank_index()) : std::string(),
                 e.what());
    }
    if (!on_every_rank) cli::abort_if_distributed(comm, cli::command_exit_code(e));
    return cli::command_exit_code(e);
  }
}
