// Sharding the probe set across MPI ranks (docs/math.md). ctest runs this executable under mpiexec on 1, 2 and
// 3 ranks (3: uneven shards). Every rank also computes the single-process result on the whole (small) problem
// itself and checks the sharded result against it; results that must be replicated are compared bitwise across
// ranks through a min/max reduction of a hash. A failure on any rank fails the run on every rank.
#include "../reference.hpp"

#include "t3k/algorithms/orthogonal_frame.hpp"
#include "t3k/algorithms/random_t3.hpp"
#include "t3k/algorithms/tangent_probe_derivatives.hpp"
#include "t3k/algorithms/variation_operations.hpp"
#include "t3k/core/communicator.hpp"
#include "t3k/core/memory_tracking.hpp"
#include "t3k/optimizers/adam.hpp"
#include "t3k/optimizers/gradient_descent.hpp"
#include "t3k/optimizers/mc_sgd.hpp"
#include "t3k/optimizers/newton_cg.hpp"
#include "t3k/optimizers/planted_problem.hpp"

#include <gtest/gtest.h>
#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Space = Kokkos::DefaultExecutionSpace;
using Mem = Space::memory_space;
using S = double;
using Problem = t3k::FittingProblem<S, Mem>;
using Variation = t3k::T3Variation<S, Mem>;
using Jets = Kokkos::View<S***, Kokkos::LayoutRight, Mem>;
using StackedJets = Kokkos::View<S****, Kokkos::LayoutRight, Mem>;

t3k::Communicator world() { return t3k::Communicator::world(); }

struct Shape {
  std::vector<std::size_t> big_n, n, r;
  std::size_t order;
};

// Ragged ranks, odd sizes, rank-1 boundary bonds.
Shape small_shape() { return {{4, 5, 3, 4}, {2, 3, 2, 2}, {1, 2, 3, 2, 1}, 2}; }

// Every entry of a variation stack, in core order (host copy).
std::vector<double> values(Variation const& v) {
  std::vector<double> out;
  for (std::size_t i = 0; i < v.n_modes(); ++i) {
    auto u = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v.tucker[i]);
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v.tt[i]);
    out.insert(out.end(), u.data(), u.data() + u.span());
    out.insert(out.end(), h.data(), h.data() + h.span());
  }
  return out;
}

// max |a - b| / max |b|.
double relative_difference(std::vector<double> const& a, std::vector<double> const& b) {
  if (a.size() != b.size()) return HUGE_VAL;
  double num = 0, den = 0;
  for (std::size_t e = 0; e < a.size(); ++e) {
    num = std::max(num, std::abs(a[e] - b[e]));
    den = std::max(den, std::abs(b[e]));
  }
  return den > 0 ? num / den : num;
}

// FNV-1a over the bytes: equal hashes on every rank mean (up to collisions) bitwise equal values.
std::uint64_t hash_of(std::vector<double> const& v) {
  std::uint64_t h = 1469598103934665603ull;
  for (double x : v) {
    unsigned char bytes[sizeof(double)];
    std::memcpy(bytes, &x, sizeof(double));
    for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  }
  return h;
}

bool same_bits_on_every_rank(std::vector<double> const& v) {
  auto const comm = world();
  std::uint64_t const h = hash_of(v);
  return comm.allreduce_min(h) == comm.allreduce_max(h);
}

std::vector<double> t3_values(t3k::TuckerTensorTrain<S, Mem> const& x) {
  auto h = t3k_test::host_t3(x);
  std::vector<double> out;
  for (std::size_t i = 0; i < h.u.size(); ++i) {
    out.insert(out.end(), h.u[i].begin(), h.u[i].end());
    out.insert(out.end(), h.g[i].begin(), h.g[i].end());
  }
  return out;
}

// Rows [range.begin, range.end) of a (W, ...) View as a new contiguous host vector.
template <class View>
std::vector<double> host_rows(View const& v, t3k::ShardRange range) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
  std::size_t const per_row = v.extent(0) == 0 ? 0 : h.span() / v.extent(0);
  return std::vector<double>(h.data() + range.begin * per_row, h.data() + range.end * per_row);
}
template <class View>
std::vector<double> host_all(View const& v) {
  return host_rows(v, t3k::ShardRange{0, v.extent(0)});
}

// Two residual stacks per mode, (2, W, K+1, N_i): the targets and their squares (any jets will do).
std::vector<StackedJets> stacked(std::vector<Jets> const& y) {
  std::vector<StackedJets> out;
  for (auto const& yi : y) {
    StackedJets s("stacked", 2, yi.extent(0), yi.extent(1), yi.extent(2));
    auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, yi);
    auto hs = Kokkos::create_mirror_view(s);
    for (std::size_t e = 0; e < hy.span(); ++e) {
      hs.data()[e] = hy.data()[e];
      hs.data()[hy.span() + e] = hy.data()[e] * hy.data()[e];
    }
    Kokkos::deep_copy(s, hs);
    out.push_back(s);
  }
  return out;
}

// Every rank sees the same shard table; the shards tile [0, W) in rank order and the first W % P are longer.
void shard_ranges_tile_the_probe_set() {
  auto const comm = world();
  std::size_t const p = std::size_t(comm.size());
  for (std::size_t w : {std::size_t(1), std::size_t(2), std::size_t(7), std::size_t(61), std::size_t(600)}) {
    std::size_t next = 0;
    for (std::size_t k = 0; k < p; ++k) {
      auto const r = t3k::shard_range(w, k, p);
      EXPECT_EQ(r.begin, next) << "W=" << w << " rank " << k;
      EXPECT_EQ(r.size(), w / p + (k < w % p ? 1 : 0)) << "W=" << w << " rank " << k;
      next = r.end;
    }
    EXPECT_EQ(next, w);
    auto const mine = comm.shard_range(w);
    EXPECT_EQ(comm.allreduce_sum(mine.size()), w);
    EXPECT_EQ(mine.begin, t3k::shard_range(w, std::size_t(comm.rank_index()), p).begin);
  }
  EXPECT_THROW(t3k::shard_range(5, 3, 3), t3k::InvalidArgument);
}

// make_planted_problem(space, comm, ...) holds exactly this rank's rows of the single-process problem.
void sharded_planted_problem_holds_the_global_rows() {
  Space space;
  auto const comm = world();
  auto const sh = small_shape();
  auto truth = t3k::random_t3<S>(space, sh.big_n, sh.n, sh.r, 1);
  std::size_t const w = 37;
  auto full = t3k::make_planted_problem(space, truth, w, sh.order, 0.01, 5);
  auto part = t3k::make_planted_problem(space, comm, truth, w, sh.order, 0.01, 5);
  auto const rows = comm.shard_range(w);
  EXPECT_EQ(part.n_probes(), rows.size());
  EXPECT_EQ(part.n_global_probes(), w);
  EXPECT_EQ(part.global_offset, comm.size() > 1 ? rows.begin : 0u);
  for (std::size_t i = 0; i < sh.big_n.size(); ++i) {
    EXPECT_EQ(host_all(part.ww[i]), host_rows(full.ww[i], rows)) << "ww mode " << i;  // bitwise
    EXPECT_EQ(host_all(part.pp[i]), host_rows(full.pp[i], rows)) << "pp mode " << i;
    // The noise scale is a sum over ranks: equal to rounding.
    EXPECT_LE(relative_difference(host_all(part.targets[i]), host_rows(full.targets[i], rows)), 1e-13) << i;
  }
  double const z_full = t3k::zero_model_loss(space, full), z_part = t3k::zero_model_loss(space, part);
  EXPECT_LE(std::abs(z_part - z_full), 1e-13 * z_full);
  EXPECT_TRUE(same_bits_on_every_rank({z_part}));
}

// Summed J^T of the shards with one reduction equals the single-process J^T to 1e-12 relative, is the same bits on
// every rank, for chunk sizes auto, none and one block (every shard spans two blocks and a part of one, so that one
// makes several passes on every rank), one residual and a stack of two; and it satisfies the adjoint identity
// <J v, r> = <v, J^T r> with J of the whole probe set.
void summed_transpose_equals_single_process_transpose() {
  Space space;
  auto const comm = world();
  auto const sh = small_shape();
  std::size_t const block = t3k::reduction_block_size_for<Space>();
  std::size_t const w = 3 * (2 * block + 5);
  auto x = t3k::random_t3<S>(space, sh.big_n, sh.n, sh.r, 11);
  auto frame = t3k::orthogonal_frame(space, x);
  auto full =
      t3k::make_planted_problem(space, t3k::random_t3<S>(space, sh.big_n, sh.n, sh.r, 12), w, sh.order, 0.1, 13);
  auto part =
      t3k::make_planted_problem(space, comm, t3k::random_t3<S>(space, sh.big_n, sh.n, sh.r, 12), w, sh.order, 0.1, 13);
  ASSERT_LT(t3k::impl::rows_per_chunk(t3k::ChunkSize::of(block), part.n_probes(), block), part.n_probes());
  auto const reference = values(t3k::probe_derivatives_transpose(space, frame, full.ww, full.pp, full.targets));
  auto const reference_stack =
      values(t3k::probe_derivatives_transpose(space, frame, full.ww, full.pp, stacked(full.targets)));
  auto const part_stack = stacked(part.targets);
  // <J v, r> over the whole probe set, J single-process.
  auto v = t3k::random_variation(space, frame, 1, 14);
  auto jv = t3k::tangent_probe_derivatives(space, frame, v, full.ww, full.pp, sh.order);
  double jv_r = 0, jv_r_abs = 0;
  for (std::size_t i = 0; i < jv.size(); ++i) {
    auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, jv[i]);
    auto b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, full.targets[i]);
    ASSERT_EQ(a.span(), b.span());
    for (std::size_t e = 0; e < a.span(); ++e) {
      jv_r += a.data()[e] * b.data()[e];
      jv_r_abs += std::abs(a.data()[e] * b.data()[e]);
    }
  }
  auto const v_values = values(v);
  for (auto chunk : {t3k::ChunkSize::automatic(), t3k::ChunkSize::none(), t3k::ChunkSize::of(block)}) {
    t3k::TransposeOptions const o{true, chunk};
    auto const g = values(t3k::probe_derivatives_transpose(space, comm, frame, part.ww, part.pp, part.targets, o));
    EXPECT_LE(relative_difference(g, reference), 1e-12) << "chunk " << chunk.to_string();
    EXPECT_TRUE(same_bits_on_every_rank(g)) << "chunk " << chunk.to_string();
    ASSERT_EQ(g.size(), v_values.size());
    double v_g = 0;
    for (std::size_t e = 0; e < g.size(); ++e) v_g += v_values[e] * g[e];
    EXPECT_NEAR(v_g, jv_r, 1e-12 * (1 + jv_r_abs)) << "adjoint identity, chunk " << chunk.to_string();
    auto const gs = values(t3k::probe_derivatives_transpose(space, comm, frame, part.ww, part.pp, part_stack, o));
    EXPECT_LE(relative_difference(gs, reference_stack), 1e-12) << "stacked, chunk " << chunk.to_string();
    EXPECT_TRUE(same_bits_on_every_rank(gs)) << "stacked, chunk " << chunk.to_string();
  }
}

// Per-probe J^T stays sharded: this rank's result holds the rows of its shard of the single-process result
// (stack index t * W_local + s <-> t * W + begin + s).
void per_probe_transpose_stays_sharded() {
  Space space;
  auto const comm = world();
  auto const sh = small_shape();
  std::size_t const block = t3k::reduction_block_size_for<Space>();
  std::size_t const w = 3 * (2 * block + 3);  // every shard spans two blocks and a part of one
  auto x = t3k::random_t3<S>(space, sh.big_n, sh.n, sh.r, 21);
  auto frame = t3k::orthogonal_frame(space, x);
  auto truth = t3k::random_t3<S>(space, sh.big_n, sh.n, sh.r, 22);
  auto full = t3k::make_planted_problem(space, truth, w, sh.order, 0.0, 23);
  auto part = t3k::make_planted_problem(space, comm, truth, w, sh.order, 0.0, 23);
  auto const rows = comm.shard_range(w);
  t3k::TransposeOptions const o{false, t3k::ChunkSize::of(block)};
  ASSERT_LT(t3k::impl::rows_per_chunk(o.chunk_size, rows.size(), block), rows.size());
  auto ref = t3k::probe_derivatives_transpose(space, frame, full.ww, full.pp, stacked(full.targets), o);
  auto got = t3k::probe_derivatives_transpose(space, comm, frame, part.ww, part.pp, stacked(part.targets), o);
  EXPECT_EQ(got.n_stack(), 2 * rows.size());
  for (std::size_t i = 0; i < sh.big_n.size() && got.n_stack() == 2 * rows.size(); ++i) {
    for (int kind = 0; kind < 2; ++kind) {
      auto const all = kind == 0 ? host_all(ref.tucker[i]) : host_all(ref.tt[i]);
      auto const mine = kind == 0 ? host_all(got.tucker[i]) : host_all(got.tt[i]);
      std::size_t const per = all.size() / (2 * w);
      std::vector<double> expected;
      for (std::size_t t = 0; t < 2; ++t) {
        expected.insert(expected.end(), all.begin() + long((t * w + rows.begin) * per),
                        all.begin() + long((t * w + rows.end) * per));
      }
      // Per-probe results do not depend on the chunking or on the other rows.
      EXPECT_LE(relative_difference(mine, expected), 1e-14) << (kind == 0 ? "Tucker" : "TT") << " core " << i;
    }
  }
}

// Loss, zero-model loss, Riemannian gradient and Gauss-Newton products of the sharded problem equal the
// single-process ones and are replicated bitwise; a minibatch whose rows all lie on rank 0 works with empty shards.
void losses_and_products_reduce_across_ranks(t3k::MeasurementKind kind = t3k::MeasurementKind::probes,
                                             std::size_t order = small_shape().order) {
  Space space;
  auto const comm = world();
  auto const sh = small_shape();
  std::size_t const w = 31;
  auto truth = t3k::random_t3<S>(space, sh.big_n, sh.n, sh.r, 31);
  auto full = t3k::make_planted_problem(space, truth, kind, w, order, 0.05, 32);
  auto part = t3k::make_planted_problem(space, comm, truth, kind, w, order, 0.05, 32);
  auto x = t3k::perturb_t3(space, truth, 0.1, 33);
  auto frame = t3k::orthogonal_frame(space, x);
  auto chunk = t3k::ChunkSize::of(5);
  auto ef = t3k::evaluate_loss(space, full, x);
  auto ep = t3k::evaluate_loss(space, part, x);
  EXPECT_LE(std::abs(ep.loss - ef.loss), 1e-12 * ef.loss);
  EXPECT_TRUE(same_bits_on_every_rank({ep.loss}));
  auto gf = values(t3k::riemannian_gradient(space, full, frame, ef, chunk));
  auto gp = values(t3k::riemannian_gradient(space, part, frame, ep, chunk));
  EXPECT_LE(relative_difference(gp, gf), 1e-12);
  EXPECT_TRUE(same_bits_on_every_rank(gp));
  auto v = t3k::random_variation(space, frame, 2, 34);
  t3k::gauge_project_in_place(space, frame, v);
  auto hf = values(t3k::gauss_newton_product(space, full, frame, v, chunk));
  auto hp = values(t3k::gauss_newton_product(space, part, frame, v, chunk));
  EXPECT_LE(relative_difference(hp, hf), 1e-12);
  EXPECT_TRUE(same_bits_on_every_rank(hp));
  // Rows 0..2 are all on rank 0: the other ranks hold empty shards of the minibatch.
  std::vector<std::size_t> const batch{0, 1, 2};
  auto sub_full = t3k::impl::minibatch_problem(space, full, batch);
  auto sub_part = t3k::impl::minibatch_problem(space, part, batch);
  EXPECT_EQ(sub_part.n_global_probes(), 3u);
  EXPECT_EQ(comm.allreduce_sum(sub_part.n_probes()), 3u);
  auto sf = t3k::evaluate_loss(space, sub_full, x);
  auto sp = t3k::evaluate_loss(space, sub_part, x);
  EXPECT_LE(std::abs(sp.loss - sf.loss), 1e-12 * sf.loss);
  auto bf = values(t3k::riemannian_gradient(space, sub_full, frame, sf, chunk));
  auto bp = values(t3k::riemannian_gradient(space, sub_part, frame, sp, chunk));
  EXPECT_LE(relative_difference(bp, bf), 1e-12);
  EXPECT_TRUE(same_bits_on_every_rank(bp));
}

// The fitted T3 of the sharded problem equals the single-process fit to `tolerance` relative (cores and dense tensor),
// and the iterates (every history entry and the final cores) are the same bits on every rank.
template <class Fit>
void sharded_fit_equals_single_process_fit(char const* name, std::size_t w, double noise, Fit&& fit,
                                           t3k::MeasurementKind kind = t3k::MeasurementKind::probes,
                                           std::size_t order = small_shape().order, double tolerance = 1e-10) {
  Space space;
  auto const comm = world();
  auto const sh = small_shape();
  auto truth = t3k::random_t3<S>(space, sh.big_n, sh.n, sh.r, 41);
  auto full = t3k::make_planted_problem(space, truth, kind, w, order, noise, 42);
  auto part = t3k::make_planted_problem(space, comm, truth, kind, w, order, noise, 42);
  auto x0 = t3k::perturb_t3(space, truth, 0.05, 44);
  auto a = fit(space, full, x0);
  auto b = fit(space, part, x0);
  EXPECT_EQ(a.history.size(), b.history.size()) << name;
  EXPECT_EQ(a.reason, b.reason) << name;
  // The same tensor; the cores agree up to the sign freedom of the retraction's SVDs (a bond or Tucker index
  // flipped in two adjacent cores leaves the tensor unchanged, and rounding-level differences can pick the other
  // sign), so they are compared in absolute value.
  auto da = t3k_test::dense_tensor(t3k_test::host_t3(a.x)), db = t3k_test::dense_tensor(t3k_test::host_t3(b.x));
  EXPECT_LE(relative_difference(db, da), tolerance) << name << ": dense tensor";
  auto magnitudes = [](std::vector<double> v) {
    for (auto& e : v) e = std::abs(e);
    return v;
  };
  EXPECT_LE(relative_difference(magnitudes(t3_values(b.x)), magnitudes(t3_values(a.x))), tolerance) << name << ": cores";
  std::vector<double> trace{double(b.chunk_size)};
  double const scale = a.history.empty() ? 1.0 : a.history.front().loss;
  for (std::size_t k = 0; k < std::min(a.history.size(), b.history.size()); ++k) {
    EXPECT_LE(std::abs(b.history[k].loss - a.history[k].loss), tolerance * scale) << name << " iteration " << k;
    if (std::isfinite(a.history[k].validation_relative_residual)) {
      EXPECT_NEAR(b.history[k].validation_relative_residual, a.history[k].validation_relative_residual,
                  tolerance * a.history[k].validation_relative_residual)
          << name << " validation, record " << k;
    }
    trace.push_back(b.history[k].loss);
    trace.push_back(b.history[k].gradient_norm);
    trace.push_back(b.history[k].step);
  }
  auto const cores = t3_values(b.x);
  trace.insert(trace.end(), cores.begin(), cores.end());
  EXPECT_TRUE(same_bits_on_every_rank(trace)) << name << ": iterates differ between ranks";
  if (comm.rank_index() == 0) {
    std::printf("[ INFO     ] %s on %d rank(s): %zu iterations, loss %.3e -> %.3e (%s), chunk %zu\n", name, comm.size(),
                b.history.size() - 1, b.history.front().loss, b.history.back().loss, b.reason.c_str(), b.chunk_size);
  }
}

void newton_cg_fit_is_the_single_process_fit() {
  sharded_fit_equals_single_process_fit("newton_cg", 61, 0.0, [](auto const& space, auto const& p, auto const& x0) {
    t3k::NewtonCgOptions o;
    o.common.max_iterations = 12;
    o.common.tol_relative_residual = 1e-12;
    o.cg_max_iterations = 100;
    return t3k::newton_cg(space, p, x0, o);
  });
  sharded_fit_equals_single_process_fit("newton_cg (Levenberg-Marquardt, noisy)", 61, 0.01,
                                        [](auto const& space, auto const& p, auto const& x0) {
                                          t3k::NewtonCgOptions o;
                                          o.common.max_iterations = 6;
                                          o.levenberg_marquardt = true;
                                          return t3k::newton_cg(space, p, x0, o);
                                        });
}

// Held-out validation (chosen by global probe index, so the same probes on every layout) and rank continuation
// from ranks 1: the sharded fit is the single-process fit, validation residuals included.
void continuation_with_validation_is_the_single_process_fit() {
  sharded_fit_equals_single_process_fit("newton_cg (rank continuation, held-out validation)", 90, 0.01,
                                        [](auto const& space, auto const& p, auto const& x0) {
                                          auto const train = t3k::hold_out(space, p, 20, 7);
                                          auto const big_n = x0.mode_shapes();
                                          auto x1 = t3k::random_t3<S>(space, big_n, {1, 1, 1, 1}, {1, 1, 1, 1, 1}, 45);
                                          t3k::NewtonCgOptions o;
                                          o.common.max_iterations = 12;
                                          o.common.continuation.max_tucker_ranks = {3, 3, 3, 3};
                                          o.common.continuation.max_tt_ranks = {1, 3, 3, 3, 1};
                                          o.common.continuation.stage_iterations = 4;
                                          auto fit = t3k::newton_cg(space, train, x1, o);
                                          for (auto const& r : fit.history)
                                            EXPECT_TRUE(std::isfinite(r.validation_relative_residual));
                                          return fit;
                                        });
}

void gradient_descent_fit_is_the_single_process_fit() {
  sharded_fit_equals_single_process_fit("gradient_descent", 61, 0.0,
                                        [](auto const& space, auto const& p, auto const& x0) {
                                          t3k::GradientDescentOptions o;
                                          o.common.max_iterations = 15;
                                          return t3k::gradient_descent(space, p, x0, o);
                                        });
}

void mc_sgd_fit_is_the_single_process_fit() {
  // Batches of 8 out of 61: the last batch of an epoch is partial, and shards of a batch are often empty.
  sharded_fit_equals_single_process_fit("mc_sgd", 61, 0.0, [](auto const& space, auto const& p, auto const& x0) {
    t3k::McSgdOptions o;
    o.common.max_iterations = 30;
    o.common.seed = 5;
    o.batch_size = 8;
    o.eval_every = 4;
    return t3k::mc_sgd(space, p, x0, o);
  });
}

void adam_fit_is_the_single_process_fit() {
  sharded_fit_equals_single_process_fit("adam (minibatches)", 61, 0.0,
                                        [](auto const& space, auto const& p, auto const& x0) {
                                          t3k::AdamOptions o;
                                          o.common.max_iterations = 25;
                                          o.common.seed = 6;
                                          o.batch_size = 10;
                                          o.eval_every = 5;
                                          return t3k::adam(space, p, x0, o);
                                        });
}

// Entries (without and with jets) and applies: losses, gradients and Gauss-Newton products reduce across ranks to
// the single-process ones, and newton_cg (noisy data, held-out validation) and mc_sgd fits equal the single-process
// fits.
void entries_and_applies_shard_as_probes_do() {
  using K = t3k::MeasurementKind;
  for (auto const& [kind, order] : {std::pair<K, std::size_t>{K::entries, 0}, {K::entries, 1}, {K::applies, 2}}) {
    losses_and_products_reduce_across_ranks(kind, order);
    std::string const what = std::string(t3k::to_string(kind)) + " order " + std::to_string(order);
    sharded_fit_equals_single_process_fit(
        ("newton_cg, " + what).c_str(), 200, 0.01,
        [](auto const& space, auto const& p, auto const& x0) {
          auto const train = t3k::hold_out(space, p, 30, 8);
          t3k::NewtonCgOptions o;
          o.common.max_iterations = 8;  // with noise: the validation residual stays well above rounding
          // By then ||g|| / ||g_0|| is near 1e-12, the default tol_gradient: rounding would pick the stop reason.
          o.common.tol_gradient = 0;
          o.cg_max_iterations = 100;
          return t3k::newton_cg(space, train, x0, o);
        },
        kind, order, 1e-8);  // fewer samples per unknown than the probe fits: CG amplifies rounding more
    sharded_fit_equals_single_process_fit(
        ("mc_sgd, " + what).c_str(), 200, 0.0,
        [](auto const& space, auto const& p, auto const& x0) {
          t3k::McSgdOptions o;
          o.common.max_iterations = 12;
          o.common.seed = 5;
          o.batch_size = 24;
          o.eval_every = 4;
          return t3k::mc_sgd(space, p, x0, o);
        },
        kind, order);
  }
}

// The per-rank peak bytes that J^T allocates (measured by the Kokkos allocation hooks) with chunk auto are the
// memory model's prediction at this rank's rows, and so shrink with the number of ranks: the largest rank's peak is
// the model at W_local = ceil(W / P) with automatic_chunk_size(..., n_shards = P).
void transpose_peak_memory_per_rank_is_the_model_at_local_rows() {
  Space space;
  auto const comm = world();
  std::vector<std::size_t> const big_n{6, 7, 5, 6}, n{3, 4, 3, 3}, r{1, 3, 6, 3, 1};
  std::size_t const order = 2, w = 2400;
  auto truth = t3k::random_t3<S>(space, big_n, n, r, 61);
  auto part = t3k::make_planted_problem(space, comm, truth, w, order, 0.0, 62);
  auto frame = t3k::orthogonal_frame(space, t3k::random_t3<S>(space, big_n, n, r, 63));
  std::size_t const w_local = part.n_probes();
  auto const model = t3k::transpose_memory_model(big_n, n, r, order, 1, true, t3k::ScalarType::float64,
                                                 t3k::reduction_block_size_for<Space>());
  std::size_t const chunk_local = t3k::automatic_chunk_size<Space>(big_n, n, r, order, w_local, 1, 1);
  std::size_t const chunk_p = t3k::automatic_chunk_size<Space>(big_n, n, r, order, w, 1, std::size_t(comm.size()));
  std::size_t const chunk_1 = t3k::automatic_chunk_size<Space>(big_n, n, r, order, w, 1, 1);
  if (comm.rank_index() == 0) {
    EXPECT_EQ(chunk_local, chunk_p);  // rank 0 holds ceil(W / P) rows
  }
  std::int64_t measured = 0;
  {
    t3k::AllocationTracker tracker;
    space.fence();
    auto g = t3k::probe_derivatives_transpose(space, comm, frame, part.ww, part.pp, part.targets,
                                              t3k::TransposeOptions{true, t3k::ChunkSize::automatic()});
    space.fence();
    measured = tracker.peak(Mem::name());
  }
  std::int64_t const predicted = std::int64_t(model.allocated_bytes(w_local, chunk_local));
  EXPECT_EQ(measured, predicted) << "rank " << comm.rank_index() << ": W_local " << w_local << ", chunk "
                                 << chunk_local;
  std::int64_t const largest = comm.allreduce_max(measured);
  EXPECT_EQ(largest, std::int64_t(model.allocated_bytes(t3k::impl::local_rows(w, std::size_t(comm.size())), chunk_p)));
  std::int64_t const single = std::int64_t(model.allocated_bytes(w, chunk_1));
  if (comm.size() > 1) {
    EXPECT_LT(largest, single);
  }
  std::int64_t const data = std::int64_t(model.input_bytes_per_row * w_local);
  if (comm.rank_index() == 0) {
    std::printf(
        "[ INFO     ] J^T per-rank peak on %d rank(s), W = %zu: measured %lld B (model %lld B, chunk %zu; "
        "data %lld B); one rank: %lld B (chunk %zu)\n",
        comm.size(), w, (long long)largest, (long long)predicted, chunk_p, (long long)data, (long long)single, chunk_1);
  }
}

// A bad input on one rank stops every rank with that rank's message; inconsistent shards are refused everywhere.
void a_failure_on_one_rank_fails_every_rank() {
  Space space;
  auto const comm = world();
  auto const sh = small_shape();
  auto truth = t3k::random_t3<S>(space, sh.big_n, sh.n, sh.r, 71);
  auto part = t3k::make_planted_problem(space, comm, truth, 20, sh.order, 0.0, 72);
  auto frame = t3k::orthogonal_frame(space, truth);
  int const last = comm.size() - 1;
  auto residuals = part.targets;
  if (comm.rank_index() == last) residuals.pop_back();  // one mode short on the last rank only
  std::string message;
  try {
    (void)t3k::probe_derivatives_transpose(space, comm, frame, part.ww, part.pp, residuals);
  } catch (t3k::DimensionMismatch const& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("residual arrays"), std::string::npos) << "got '" << message << "'";
  if (comm.size() > 1) {
    EXPECT_NE(message.find("rank " + std::to_string(last)), std::string::npos) << message;
  }

  auto bad = part;
  if (comm.size() > 1) {
    bad.global_probes = 21;  // the shards hold 20
  } else {
    bad.global_offset = 1;
  }
  t3k::NewtonCgOptions o;
  o.common.max_iterations = 1;
  EXPECT_THROW(t3k::newton_cg(space, bad, truth, o), t3k::InvalidArgument);
  // The communicator helpers: first_error names the lowest failing rank.
  std::string const err = comm.first_error(comm.rank_index() == last ? "bad file" : "");
  EXPECT_EQ(err, comm.size() > 1 ? "rank " + std::to_string(last) + ": bad file" : "bad file");
  EXPECT_EQ(comm.first_error(""), "");
  EXPECT_FALSE(comm.all_of(comm.rank_index() != last));
  EXPECT_TRUE(comm.all_of(true));
}

TEST(MpiSharding, ShardRangesTileTheProbeSet) { shard_ranges_tile_the_probe_set(); }
TEST(MpiSharding, ShardedPlantedProblemHoldsTheGlobalRows) { sharded_planted_problem_holds_the_global_rows(); }
TEST(MpiSharding, SummedTransposeEqualsSingleProcessTranspose) { summed_transpose_equals_single_process_transpose(); }
TEST(MpiSharding, PerProbeTransposeStaysSharded) { per_probe_transpose_stays_sharded(); }
TEST(MpiSharding, LossesAndProductsReduceAcrossRanks) { losses_and_products_reduce_across_ranks(); }
TEST(MpiSharding, NewtonCgFitIsTheSingleProcessFit) { newton_cg_fit_is_the_single_process_fit(); }
TEST(MpiSharding, EntriesAndAppliesShardAsProbesDo) { entries_and_applies_shard_as_probes_do(); }
TEST(MpiSharding, ContinuationWithValidationIsTheSingleProcessFit) {
  continuation_with_validation_is_the_single_process_fit();
}
TEST(MpiSharding, GradientDescentFitIsTheSingleProcessFit) { gradient_descent_fit_is_the_single_process_fit(); }
TEST(MpiSharding, McSgdFitIsTheSingleProcessFit) { mc_sgd_fit_is_the_single_process_fit(); }
TEST(MpiSharding, AdamFitIsTheSingleProcessFit) { adam_fit_is_the_single_process_fit(); }
TEST(MpiSharding, TransposePeakMemoryPerRankIsTheModelAtLocalRows) {
  transpose_peak_memory_per_rank_is_the_model_at_local_rows();
}
TEST(MpiSharding, AFailureOnOneRankFailsEveryRank) { a_failure_on_one_rank_fails_every_rank(); }

// Ranks other than 0 print only their failures, prefixed with the rank.
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(::testing::TestPartResult const& result) override {
    if (result.failed()) {
      std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_, result.file_name() ? result.file_name() : "?",
                   result.line_number(), result.message());
    }
  }

 private:
  int rank_;
};

}  // namespace

// Tests must not ASSERT_ (return early) before a collective: every rank has to make the same collective calls.
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ::testing::InitGoogleTest(&argc, argv);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(rank));
  }
  int local = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    local = RUN_ALL_TESTS();
  }
  int any = 0;
  MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf(any ? "[ MPI      ] FAILED on at least one of %d rank(s)\n" : "[ MPI      ] passed on all %d rank(s)\n",
                size);
  }
  MPI_Finalize();
  return any != 0 ? 1 : 0;
}
