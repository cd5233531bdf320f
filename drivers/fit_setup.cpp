/// \file fit_setup.cpp
/// The problem (synthetic or from an HDF5 probe set) and the initial model of a `t3k fit` run (fit_setup.hpp).

#include "drivers/fit_setup.hpp"

#include "drivers/collective.hpp"
#include "drivers/device_copies.hpp"
#include "drivers/exit_codes.hpp"
#include "t3k/io/file_safety.hpp"
#include "t3k/io/fitting_data.hpp"
#include "t3k/io/hdf5_io.hpp"

#include "t3k/algorithms/random_t3.hpp"
#include "t3k/core/error.hpp"
#include "t3k/core/mode_sharing.hpp"
#include "t3k/optimizers/planted_problem.hpp"

#include <fmt/core.h>

#include <cmath>
#include <cstdint>
#include <optional>

namespace t3k {
namespace fit {

namespace {

using cli::to_device;

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

/// A data problem as read: this rank's rows and the tensor's mode shapes (entries do not carry them in any array).
struct LoadedData {
  Problem problem;
  std::vector<std::size_t> mode_shapes;
};

/// A host vector as a View in the default memory space.
Kokkos::View<double*, Mem> vector_to_device(std::vector<double> const& v, char const* label) {
  Kokkos::View<double const*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(v.data(), v.size());
  Kokkos::View<double*, Mem> d(std::string(label), v.size());
  Kokkos::deep_copy(d, h);
  return d;
}

/// This rank's rows of the data problem (all rows with one rank): every array's full shape is checked, only the
/// rows of this rank are read (hyperslabs), and its weights are checked by this rank. The kind is the file's.
LoadedData load_data_problem(Config const& config, Space const& space, Communicator const& comm,
                             DataProblem const& data, std::string const& key) {
  return reading(config, key, [&] {
    io::Reader in(data.resolved_file);
    io::FittingData f;
    try {
      f = io::read_fitting_data(in, data.weights, [&comm](std::size_t n_rows) { return comm.shard_range(n_rows); });
    } catch (io::WeightsError const& e) {
      throw config.error_at("problem.data.weights", e.what());
    }
    std::size_t const w = f.n_file_rows();
    std::size_t const k = f.order;
    if (data.order && *data.order != k) {
      std::vector<std::size_t> jet_shape = impl::view_shape(f.targets[0]);
      jet_shape[0] = w;  // the file's shape, not this rank's rows
      std::string const targets =
          f.kind == MeasurementKind::probes ? "/jets/0" : std::string("/") + to_string(f.kind) + "/values";
      if (f.kind != MeasurementKind::probes) jet_shape.pop_back();  // stored (W, K+1)
      throw config.error_at("problem.data.order", "is " + std::to_string(*data.order) + " but " + data.resolved_file +
                                                      " holds jets of order K = " + std::to_string(k) + " (" + targets +
                                                      " has shape " + impl::shape_string(jet_shape) + ")");
    }
    LoadedData loaded;
    loaded.mode_shapes = f.mode_shapes;
    loaded.problem = problem_of(f, comm);
    (void)space;
    return loaded;
  });
}

/// Sets problem.order_weights on a problem (and its validation set) of order K; the key is refused when its
/// length is not K + 1.
void set_order_weights(Config const& config, Problem& p) {
  auto const& omega = config.order_weights;
  if (omega.empty()) return;
  if (omega.size() != p.order + 1) {
    throw config.error_at("problem.order_weights",
                          "has " + std::to_string(omega.size()) + " entries but the problem has jets of order K = " +
                              std::to_string(p.order) + ", so K + 1 = " + std::to_string(p.order + 1) + " are needed");
  }
  p.order_weights = vector_to_device(omega, "t3k::fit::order_weights");
}

/// Checks a model's ranks (given or from a file) against the problem's mode count; messages at the model keys.
void check_model_ranks(Config const& config, std::vector<std::size_t> const& shapes) {
  auto const& m = config.model;
  std::size_t const d = shapes.size();
  if (m.tucker_ranks && m.tucker_ranks->size() != d) {
    throw config.error_at("model.tucker_ranks", "has " + std::to_string(m.tucker_ranks->size()) +
                                                    " entries but the data has d = " + std::to_string(d) +
                                                    " modes (mode shapes " + impl::shape_string(shapes) + ")");
  }
  if (m.tt_ranks && m.tt_ranks->size() != d + 1) {
    throw config.error_at("model.tt_ranks", "has " + std::to_string(m.tt_ranks->size()) +
                                                " entries but the data has d = " + std::to_string(d) +
                                                " modes, so d + 1 = " + std::to_string(d + 1) + " are needed");
  }
}

/// A seed of its own for each use of one configured seed (a splitmix64 step), so that streams never coincide.
std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (stream + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

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
    throw config.error_at(rank_key, "the model (N = " + impl::shape_string(big_n) + ", n = " + impl::shape_string(n) +
                                        ", r = " + impl::shape_string(r) + ") " + *shortfall + "; lower the ranks");
  }
  if (probes_key.empty()) return;
  std::optional<std::uint64_t> sum_n = 0;
  for (auto e : big_n) sum_n = sum_n ? io::checked_sum(*sum_n, e) : std::nullopt;
  auto const per_probe = sum_n ? io::checked_product(*sum_n, (order + 3) * sizeof(double)) : std::nullopt;
  auto const data = per_probe ? io::checked_product(*per_probe, n_probes) : std::nullopt;
  auto const total = data && model ? io::checked_sum(*data, *model) : std::nullopt;
  if (auto const shortfall = io::memory_shortfall(total)) {
    throw config.error_at(probes_key, std::to_string(n_probes) + " probes of mode shapes " + impl::shape_string(big_n) +
                                          " at order " + std::to_string(order) + " with the model " + *shortfall +
                                          "; lower n_probes or the mode shapes");
  }
}

/// The validation set of the configuration (none, held-out probes of the problem, or a data file): the problem
/// becomes the training probes and holds the validation set.
void add_validation(Config const& config, Space const& space, Communicator const& comm, Setup& s) {
  auto const& v = config.validation;
  if (v.source == ValidationSource::none) return;
  std::size_t const w = s.problem.n_global_probes();
  if (v.source == ValidationSource::file) {
    Problem held;
    DataProblem file;
    file.file = v.file;
    file.resolved_file = v.resolved_file;
    cli::collectively(comm, cli::fit_exit_code, [&] {
      auto loaded = load_data_problem(config, space, comm, file, "validation.file");
      held = std::move(loaded.problem);
      auto const& shapes = loaded.mode_shapes;
      if (shapes != s.mode_shapes || held.order != s.problem.order || held.kind != s.problem.kind) {
        throw config.error_at("validation.file",
                              v.resolved_file + " holds " + to_string(held.kind) + " of mode shapes " +
                                  impl::shape_string(shapes) + " at order " + std::to_string(held.order) +
                                  " but the problem has " + to_string(s.problem.kind) + " of " +
                                  impl::shape_string(s.mode_shapes) + " at order " + std::to_string(s.problem.order));
      }
      held.order_weights = s.problem.order_weights;
    });
    s.problem.validation = std::make_shared<Problem const>(std::move(held));
    s.description +=
        ", validation: " + std::to_string(s.problem.validation->n_global_probes()) + " probes of " + v.resolved_file;
    return;
  }
  std::size_t count = v.count;
  if (v.source == ValidationSource::fraction) {
    count = std::size_t(std::llround(v.fraction * double(w)));
    count = std::max<std::size_t>(1, count);
  }
  if (count >= w) {
    throw config.error_at(
        v.source == ValidationSource::count ? "validation.count" : "validation.fraction",
        "holds out " + std::to_string(count) + " of the W = " + std::to_string(w) + " probes, leaving none to fit");
  }
  s.problem = hold_out(space, s.problem, count, mix_seed(v.seed, 4));
  s.description += ", validation: " + std::to_string(count) + " held-out probes";
}

}  // namespace

Problem problem_of(io::FittingData const& f, Communicator const& comm) {
  Problem p;
  p.kind = f.kind;
  p.order = f.order;
  if (comm.size() > 1) {
    p.comm = comm;
    p.global_offset = f.probes.first_row;
    p.global_probes = f.n_file_rows();
  }
  for (auto const& wi : f.probes.w) p.ww.push_back(to_device(wi));
  // Directions of entries and applies matter only for K >= 1 (a file may carry them for order 0).
  if (f.kind == MeasurementKind::probes || f.order >= 1) {
    for (auto const& pi : f.probes.p) p.pp.push_back(to_device(pi));
  }
  if (f.kind == MeasurementKind::entries) p.indices = to_device(f.indices);
  for (auto const& t : f.targets) p.targets.push_back(to_device(t));
  if (!f.weights.empty()) p.weights = vector_to_device(f.weights, "t3k::fit::weights");
  return p;
}

/// The problem (this rank's rows of it) and the initial model. Reading files runs inside `collectively`; the
/// synthetic problem is collective (its noise level is a sum over ranks) and needs no such guard: it depends only
/// on the validated configuration, which every rank holds alike.
Setup build_setup(Config const& config, Space const& space, Communicator const& comm) {
  Setup s;
  DeviceT3 truth;
  if (config.source == ProblemSource::synthetic) {
    auto const& syn = config.synthetic;
    check_fit_memory(config, syn.mode_shapes, syn.tucker_ranks, syn.tt_ranks, "problem.synthetic.tt_ranks",
                     syn.n_probes, syn.order, "problem.synthetic.n_probes");
    truth = random_t3<double>(space, syn.mode_shapes, syn.tucker_ranks, syn.tt_ranks, syn.seed);
    // Sharded by seed: each rank draws only its rows of the very probe set one process would draw.
    s.problem =
        make_planted_problem(space, comm, truth, syn.kind, syn.n_probes, syn.order, syn.noise, mix_seed(syn.seed, 1));
    s.mode_shapes = syn.mode_shapes;
    s.description =
        "synthetic: planted random T3" +
        (syn.kind == MeasurementKind::probes ? std::string() : std::string(" measured by ") + to_string(syn.kind)) +
        ", N = " + impl::shape_string(syn.mode_shapes) + ", n = " + impl::shape_string(syn.tucker_ranks) +
        ", r = " + impl::shape_string(syn.tt_ranks) + ", W = " + std::to_string(syn.n_probes) +
        ", K = " + std::to_string(syn.order) + fmt::format(", noise {:g}, seed {}", syn.noise, syn.seed);
    set_order_weights(config, s.problem);
  } else {
    cli::collectively(comm, cli::fit_exit_code, [&] {
      auto loaded = load_data_problem(config, space, comm, config.data, "problem.data.file");
      s.problem = std::move(loaded.problem);
      s.mode_shapes = std::move(loaded.mode_shapes);
      check_model_ranks(config, s.mode_shapes);
      set_order_weights(config, s.problem);
    });
    s.description = "data: " + config.data.resolved_file +
                    (s.problem.kind == MeasurementKind::probes ? std::string()
                                                               : std::string(" (") + to_string(s.problem.kind) + ")") +
                    ", N = " + impl::shape_string(s.mode_shapes) +
                    ", W = " + std::to_string(s.problem.n_global_probes()) + ", K = " + std::to_string(s.problem.order);
  }
  add_validation(config, space, comm, s);
  auto const& m = config.model;
  std::optional<ResolvedRanks> range;
  if (m.tucker_range) {
    range = resolve_ranks(config, s.mode_shapes);
    s.continuation = m.continuation;
    s.continuation.max_tucker_ranks = range->max_tucker;
    s.continuation.max_tt_ranks = range->max_tt;
    check_fit_memory(config, s.mode_shapes, range->max_tucker, range->max_tt, "model.tt_ranks.max", 0, 0, "");
  }
  switch (m.init) {
    case InitKind::random: {
      auto const n = range ? range->tucker : m.tucker_ranks ? *m.tucker_ranks : config.synthetic.tucker_ranks;
      auto const r = range ? range->tt : m.tt_ranks ? *m.tt_ranks : config.synthetic.tt_ranks;
      check_fit_memory(config, s.mode_shapes, n, r, m.tt_ranks ? "model.tt_ranks" : "problem.synthetic.tt_ranks", 0, 0,
                       "");
      // A stream of its own: a random start never equals the planted T3, even with equal seeds and ranks.
      s.x0 = random_t3<double>(space, s.mode_shapes, n, r, mix_seed(m.seed, 2));
      if (m.sharing) {
        s.sharing = range ? continuation_sharing(config, s.mode_shapes, *range)
                          : model_sharing(config, s.mode_shapes, n,
                                          m.tucker_ranks ? "model.tucker_ranks" : "problem.synthetic.tucker_ranks");
        s.x0 = tie_tucker_factors(s.x0, s.sharing);
      }
      break;
    }
    case InitKind::file: {
      // Every rank reads the initial T3 (read-only): the same bits everywhere.
      cli::collectively(comm, cli::fit_exit_code, [&] {
        auto const host = reading(config, "model.init.file", [&] { return io::Reader(m.resolved_file).read_t3(); });
        if (host.mode_shapes() != s.mode_shapes) {
          throw config.error_at("model.init.file", m.resolved_file + ": the T3 has mode shapes " +
                                                       impl::shape_string(host.mode_shapes()) +
                                                       " but the problem has " + impl::shape_string(s.mode_shapes));
        }
        if (m.tucker_ranks && (*m.tucker_ranks != host.tucker_ranks() || *m.tt_ranks != host.tt_ranks())) {
          throw config.error_at("model.tucker_ranks",
                                "the ranks " + impl::shape_string(*m.tucker_ranks) + " / " +
                                    impl::shape_string(*m.tt_ranks) + " disagree with " + m.resolved_file + " (" +
                                    impl::shape_string(host.tucker_ranks()) + " / " +
                                    impl::shape_string(host.tt_ranks()) + "); leave them out to take the file's");
        }
        s.x0 = copy_t3_to<Mem>(space, host);
        // A model file of a shared fit stores its sharing: the fit goes on with it unless the file is told otherwise.
        auto const stored = reading(config, "model.init.file", [&] {
          return io::Reader(m.resolved_file).read_integer_list_attribute("/t3", "sharing");
        });
        if (m.sharing) {
          s.sharing = model_sharing(config, s.mode_shapes, host.tucker_ranks(), m.resolved_file);
        } else if (stored) {
          Config adopted = config;
          adopted.model.sharing = std::vector<long long>(stored->begin(), stored->end());
          s.sharing = model_sharing(adopted, s.mode_shapes, host.tucker_ranks(), m.resolved_file);
        }
      });
      break;
    }
    case InitKind::truth_perturbation:
      s.x0 = perturb_t3(space, truth, m.perturbation, mix_seed(m.seed, 3));
      if (m.sharing)
        s.sharing = model_sharing(config, s.mode_shapes, s.x0.tucker_ranks(), "problem.synthetic.tucker_ranks");
      break;
  }
  space.fence();
  return s;
}

}  // namespace fit
}  // namespace t3k
