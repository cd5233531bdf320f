#pragma once
/// \file estimate_chunk_size.hpp
/// The memory model of J^T and every chunk-size policy built on it (docs/math.md): what `ChunkSize::automatic()`
/// resolves to on each backend, the host caps and the probe sweeps' chunks all live here.
///
/// T3K runs every stage of J^T on one chunk of probes at a time, so what J^T allocates is
///   allocated(c) = fixed + c * (sweep + assembly) [+ W * output for per-probe results],
/// where the per-row sizes are read off the very layout function that carves the workspace
/// (impl::transpose_layout), so the model is exact by construction. The caller's data -- probe vectors,
/// directions and residual jets, `input` bytes per probe row -- is the floor that any chunking keeps:
///   peak(c) = W_local * input + allocated(c).
/// Because the edge jets are chunk-local here (not resident for all W, as in a schedule that keeps them for all
/// probes), they sit on the chunk side of the balance: the balance policy picks the largest c with
///   c * (sweep + assembly) <= W_local * input,
/// so the workspace never exceeds the data and the total peak stays within twice the floor.

#include "t3k/algorithms/impl/frame_shapes.hpp"
#include "t3k/algorithms/impl/host/host_blocks.hpp"
#include "t3k/algorithms/impl/scalar_transpose_workspace.hpp"
#include "t3k/algorithms/impl/transpose_workspace.hpp"
#include "t3k/core/chunk_size.hpp"
#include "t3k/core/error.hpp"
#include "t3k/core/measurement_kind.hpp"
#include "t3k/core/tucker_tensor_train.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace t3k {

/// Chunk workspace bytes that automatic chunking stays within on host backends. J^T and the probe sweeps stream
/// their chunk workspace once per core contraction; on CPUs a workspace that stays in the last-level cache runs
/// markedly faster than one streamed from memory (docs/performance.md has the chunk sweep), so there `auto` is capped
/// at the chunk of this many workspace bytes (J^T: the smallest of the balance estimate, that chunk and the one of
/// host_chunk_khatri_rao_bytes; probes, probe jets and J: the chunk of host_sweep_chunk_workspace_bytes instead), per
/// thread when the space spreads block products over its threads (impl::host_chunk_rows). Device backends have no
/// cap: their kernels want rows.
constexpr std::size_t host_chunk_workspace_bytes = std::size_t(8) << 20;

/// The cap of host_chunk_workspace_bytes for the probe sweeps alone (probes, probe jets, J): their steps stream the
/// whole chunk workspace once each, between reading the probe vectors and writing the jets, so a workspace the size
/// of a core's L2 cache runs faster than one of the last level (BM_Probes, BM_J; figures in docs/performance.md).
constexpr std::size_t host_sweep_chunk_workspace_bytes = std::size_t(2) << 20;

/// A second host cap of automatic J^T chunks: the Khatri-Rao jets of one thread's blocks (the operands its sweep
/// steps write and its gradient assembly reads again right after) within this many bytes, so that they are still in
/// the core's own cache when read again. It binds only where a block's jets are large (BM_JT_Target in float: one
/// block per thread measured faster than two; figures in docs/performance.md).
constexpr std::size_t host_chunk_khatri_rao_bytes = std::size_t(1) << 20;

/// The chunk workspace that `auto` and the balance estimate always allow J^T of entries and applies, however small
/// their data: a sample holds a few numbers, so a workspace balanced against the data alone would make chunks of a
/// few reduction blocks, whose kernel launches would then dominate the time (BM_EntriesJT).
constexpr std::size_t scalar_kind_workspace_floor_bytes = std::size_t(8) << 20;

/// Element type of a computation, for the byte counts of the memory model.
enum class ScalarType { float32, float64 };

/// Bytes of one entry of `s` (4 or 8).
inline std::size_t scalar_bytes(ScalarType s) { return s == ScalarType::float32 ? 4 : 8; }

/// Byte counts of one J^T call (docs/math.md).
struct TransposeMemoryModel {
  std::size_t input_bytes_per_row = 0;     ///< w, p and the residual jets of one probe: the caller's data
  std::size_t sweep_bytes_per_row = 0;     ///< edge-variable jets and sweep transients of one chunk row
  std::size_t assembly_bytes_per_row = 0;  ///< Khatri-Rao jets of the gradient assembly of one chunk row
  std::size_t output_bytes_per_row = 0;    ///< per-probe gradients (sum_over_probes = false), else 0
  std::size_t fixed_bytes = 0;             ///< summed gradients, and the frame factors J^T permutes or transposes
  /// Bytes per reduction block of a chunk of several blocks on device backends: each block's partial of the summed
  /// gradient (summed_block_partials), 0 on host backends.
  std::size_t partial_bytes_per_block = 0;
  /// The reduction block of the backend the model is for (reduction_block_size_for): chunks are multiples of it.
  std::size_t block_rows = reduction_block_size;
  /// Chunk workspace the balance estimate allows whatever the data (scalar_kind_workspace_floor_bytes for entries
  /// and applies, 0 for probes).
  std::size_t workspace_floor_bytes = 0;

  /// Bytes J^T itself allocates for `rows` probes at a requested `chunk` rows per pass, rounded as J^T rounds it
  /// (down to a multiple of block_rows, at least one block, all rows when it covers them).
  /// **Throws:** InvalidArgument when the count exceeds size_t (checked arithmetic: never a wrapped figure).
  std::size_t allocated_bytes(std::size_t rows, std::size_t chunk) const {
    char const* where = "t3k::TransposeMemoryModel::allocated_bytes";
    std::size_t const c = impl::rows_per_chunk(chunk, rows, block_rows);
    std::size_t const per_row = impl::checked_add(sweep_bytes_per_row, assembly_bytes_per_row, where);
    std::size_t const partials =
        impl::checked_mul(summed_block_partials(c, block_rows), partial_bytes_per_block, where);
    return impl::checked_add(
        impl::checked_add(impl::checked_add(fixed_bytes, impl::checked_mul(rows, output_bytes_per_row, where), where),
                          impl::checked_mul(c, per_row, where), where),
        partials, where);
  }
  /// Peak of the call including its inputs. **Throws:** as allocated_bytes.
  std::size_t peak_bytes(std::size_t rows, std::size_t chunk) const {
    char const* where = "t3k::TransposeMemoryModel::peak_bytes";
    return impl::checked_add(impl::checked_mul(rows, input_bytes_per_row, where), allocated_bytes(rows, chunk), where);
  }
};

namespace impl {

/// Frame shapes of a T3 with the given shapes, by the rank rules of docs/math.md (tails squashed, QR keeps
/// generic ranks).
inline FrameShapes frame_shapes_of_t3(std::string const& where, std::vector<std::size_t> const& mode_shapes,
                                      std::vector<std::size_t> const& tucker_ranks,
                                      std::vector<std::size_t> const& tt_ranks) {
  check_t3_shape_lists(where, mode_shapes, tucker_ranks, tt_ranks);
  std::size_t const d = mode_shapes.size();
  FrameShapes sh;
  sh.big_n = mode_shapes;
  sh.nu.resize(d);
  sh.no.resize(d);
  sh.rl.assign(d + 1, 1);
  sh.rr.assign(d + 1, 1);
  for (std::size_t i = 0; i < d; ++i) sh.nu[i] = min_of(tucker_ranks[i], mode_shapes[i]);
  // Products saturate: a product past size_t is larger than the rank it is compared with.
  auto product = [](std::size_t a, std::size_t b) {
    std::size_t out = 0;
    return __builtin_mul_overflow(a, b, &out) ? ~std::size_t(0) : out;
  };
  for (std::size_t i = 0; i + 1 < d; ++i) sh.rl[i + 1] = min_of(product(sh.rl[i], sh.nu[i]), tt_ranks[i + 1]);
  for (std::size_t i = d - 1; i >= 1; --i) sh.rr[i] = min_of(sh.rl[i], product(sh.nu[i], sh.rr[i + 1]));
  for (std::size_t i = 0; i < d; ++i) sh.no[i] = min_of(product(sh.rl[i], sh.rr[i + 1]), sh.nu[i]);
  return sh;
}

/// Bytes of a J^T workspace layout: per chunk row of each category, and at zero rows.
struct TransposeLayoutBytes {
  std::size_t sweep_per_row = 0;
  std::size_t assembly_per_row = 0;
  std::size_t at_zero_rows = 0;
};

/// The bytes of the J^T workspace of `kind` for frame shapes `sh`, `n_tangent` residual stacks and jets of length
/// `k1` (`packs_omega`: whether the scalar kinds' sweep packs omega; unused for probes), counted without allocating.
/// The layout is affine in the chunk rows, so it is laid out at 0 and at 1 row.
template <class Scalar>
TransposeLayoutBytes transpose_layout_bytes(MeasurementKind kind, FrameShapes const& sh, std::size_t n_tangent, int k1,
                                            bool packs_omega, std::size_t block_rows) {
  WorkspaceArena<Scalar, Kokkos::HostSpace> at0, at1;
  if (kind == MeasurementKind::probes) {
    (void)transpose_layout(at0, sh, 0, n_tangent, k1, block_rows);
    (void)transpose_layout(at1, sh, 1, n_tangent, k1, block_rows);
  } else {
    (void)scalar_transpose_layout(at0, sh, 0, n_tangent, k1, packs_omega, block_rows);
    (void)scalar_transpose_layout(at1, sh, 1, n_tangent, k1, packs_omega, block_rows);
  }
  std::size_t const s = sizeof(Scalar);
  return {s * (at1.size(WorkspaceCategory::sweep) - at0.size(WorkspaceCategory::sweep)),
          s * (at1.size(WorkspaceCategory::assembly) - at0.size(WorkspaceCategory::assembly)), s * at0.size()};
}

template <class Scalar>
TransposeMemoryModel transpose_memory_model_elements(MeasurementKind kind, FrameShapes const& sh, std::size_t order,
                                                     std::size_t n_tangent, bool sum_over_probes,
                                                     std::size_t block_rows) {
  bool const probes = kind == MeasurementKind::probes;
  int const k1 = probes ? general_jet_length(order, sh.d()) : scalar_jet_length(order, sh.d());
  bool const packs_omega = kind == MeasurementKind::applies || order > 0;
  TransposeLayoutBytes const layout = transpose_layout_bytes<Scalar>(kind, sh, n_tangent, k1, packs_omega, block_rows);
  TransposeMemoryModel m;
  m.block_rows = block_rows;
  std::size_t const s = sizeof(Scalar);
  m.sweep_bytes_per_row = layout.sweep_per_row;
  m.assembly_bytes_per_row = layout.assembly_per_row;
  char const* where = "t3k::transpose_memory_model";
  using impl::checked_add;
  using impl::checked_mul;
  m.partial_bytes_per_block =
      summed_block_partials(2 * block_rows, block_rows) > 0 ? checked_mul(s, partial_entries(sh), where) : 0;
  std::size_t variation = 0, sum_n = 0;
  for (std::size_t i = 0; i < sh.d(); ++i) {
    std::size_t const tucker = checked_mul(sh.no[i], sh.big_n[i], where);
    std::size_t const tt = checked_mul(checked_mul(sh.rl[i], sh.nu[i], where), sh.rr[i + 1], where);
    variation = checked_add(variation, checked_add(tucker, tt, where), where);
    sum_n = checked_add(sum_n, sh.big_n[i], where);
  }
  m.fixed_bytes = layout.at_zero_rows;
  std::size_t const variation_bytes = checked_mul(checked_mul(s, n_tangent, where), variation, where);
  if (sum_over_probes) {
    m.fixed_bytes = checked_add(m.fixed_bytes, variation_bytes, where);
  } else {
    m.output_bytes_per_row = variation_bytes;
  }
  std::size_t const residuals = checked_mul(n_tangent, checked_add(order, 1, where), where);
  if (kind == MeasurementKind::probes) {  // w, p and n_t residual jets of every mode
    m.input_bytes_per_row = checked_mul(checked_mul(s, checked_add(2, residuals, where), where), sum_n, where);
  } else {  // applies: w (and p for jets); entries: d indices (and p for jets); n_t scalar residual jets
    m.workspace_floor_bytes = scalar_kind_workspace_floor_bytes;
    std::size_t const vectors = (kind == MeasurementKind::applies ? 1 : 0) + (order > 0 ? 1 : 0);
    std::size_t const index_bytes = kind == MeasurementKind::entries ? checked_mul(sizeof(int), sh.d(), where) : 0;
    m.input_bytes_per_row = checked_add(
        index_bytes, checked_mul(s, checked_add(checked_mul(vectors, sum_n, where), residuals, where), where), where);
  }
  return m;
}

template <class Scalar>
TransposeMemoryModel transpose_memory_model_elements(FrameShapes const& sh, std::size_t order, std::size_t n_tangent,
                                                     bool sum_over_probes, std::size_t block_rows) {
  return transpose_memory_model_elements<Scalar>(MeasurementKind::probes, sh, order, n_tangent, sum_over_probes,
                                                 block_rows);
}

/// Checks a reduction block argument of the public chunk policies. **Throws:** InvalidArgument naming `where`.
inline void check_block_rows(char const* where, std::size_t block_rows) {
  if (block_rows == 0) throw InvalidArgument(concat(where, ": block_rows must be >= 1 (got 0)"));
}

}  // namespace impl

/// The exact memory model of J^T for the given shapes (T3 shapes: frame ranks follow docs/math.md).
/// \param mode_shapes N_i; \param tucker_ranks n_i; \param tt_ranks r_0..r_d (r_0 = r_d = 1);
/// \param scalar entry type of the frame and the residuals;
/// \param order K; \param n_tangent residual stacks per call; \param sum_over_probes as in TransposeOptions;
/// \param block_rows the reduction block of the space J^T runs on, reduction_block_size_for<ExecutionSpace>() (the
///        default is the host backends' block): chunk sizes are rounded to it.
/// **Throws:** InvalidArgument / DimensionMismatch for bad shape lists or block_rows = 0.
/// The same for J^T of measurements of `kind` (docs/math.md). \param kind entries, applies or probes; the other
/// parameters as below.
inline TransposeMemoryModel transpose_memory_model(MeasurementKind kind, std::vector<std::size_t> const& mode_shapes,
                                                   std::vector<std::size_t> const& tucker_ranks,
                                                   std::vector<std::size_t> const& tt_ranks, std::size_t order,
                                                   std::size_t n_tangent = 1, bool sum_over_probes = true,
                                                   ScalarType scalar = ScalarType::float64,
                                                   std::size_t block_rows = reduction_block_size) {
  impl::check_block_rows("t3k::transpose_memory_model", block_rows);
  auto const sh = impl::frame_shapes_of_t3("t3k::transpose_memory_model", mode_shapes, tucker_ranks, tt_ranks);
  return scalar == ScalarType::float32
             ? impl::transpose_memory_model_elements<float>(kind, sh, order, n_tangent, sum_over_probes, block_rows)
             : impl::transpose_memory_model_elements<double>(kind, sh, order, n_tangent, sum_over_probes, block_rows);
}

/// transpose_memory_model of the probe kind. **Throws:** as above.
inline TransposeMemoryModel transpose_memory_model(std::vector<std::size_t> const& mode_shapes,
                                                   std::vector<std::size_t> const& tucker_ranks,
                                                   std::vector<std::size_t> const& tt_ranks, std::size_t order,
                                                   std::size_t n_tangent = 1, bool sum_over_probes = true,
                                                   ScalarType scalar = ScalarType::float64,
                                                   std::size_t block_rows = reduction_block_size) {
  return transpose_memory_model(MeasurementKind::probes, mode_shapes, tucker_ranks, tt_ranks, order, n_tangent,
                                sum_over_probes, scalar, block_rows);
}

namespace impl {

/// The automatic chunk on host backends for a workspace of `per_row` bytes per probe row, on a space whose block
/// products run on `threads` threads (t3k/algorithms/impl/host/host_blocks.hpp): each thread gets whole blocks whose
/// workspace fits `budget` bytes, and the chunk is a whole number of rounds of one block per thread (at least one
/// round), so that every thread's share is what one thread's chunk would be and the threads have equal shares; all rows
/// when that covers them.
inline std::size_t host_chunk_rows(std::size_t per_row, std::size_t n_probes, std::size_t threads,
                                   std::size_t budget = host_chunk_workspace_bytes) {
  std::size_t const round = (threads > 0 ? threads : 1) * reduction_block_size;  // one block per thread
  std::size_t const all = n_probes > 0 ? n_probes : 1;
  if (per_row == 0) return all;
  std::size_t const fits = round / reduction_block_size * (budget / per_row);
  std::size_t const rows = fits < round ? round : fits - fits % round;
  return rows < all ? rows : all;
}

inline std::size_t local_rows(std::size_t n_probes, std::size_t n_shards) {
  return (n_probes + n_shards - 1) / n_shards;
}

/// Balance policy on a model: the largest c with c * (sweep + assembly) <= max(rows * input, workspace floor),
/// rounded down to a multiple of the model's reduction block (at least one block), at most rows.
inline std::size_t balance_chunk(TransposeMemoryModel const& m, std::size_t rows) {
  if (rows == 0) return 1;
  std::size_t const per_row = m.sweep_bytes_per_row + m.assembly_bytes_per_row;
  if (per_row <= m.input_bytes_per_row) return rows;
  // rows * input / per_row without overflow for any realistic sizes (both factors < 2^40).
  std::size_t c = static_cast<std::size_t>((static_cast<long double>(rows) * m.input_bytes_per_row) / per_row);
  c = max_of(c, m.workspace_floor_bytes / per_row);
  return rows_per_chunk(c, rows, m.block_rows);
}

/// The host cap of a chunk of at most `rows` rows whose workspace takes `sweep_per_row` + `assembly_per_row` bytes per
/// row, on `threads` threads: per thread, the whole blocks whose workspace fits host_chunk_workspace_bytes and whose
/// Khatri-Rao jets (the assembly bytes) fit host_chunk_khatri_rao_bytes (host_chunk_rows; at least one block each).
inline std::size_t host_chunk_cap_on(std::size_t sweep_per_row, std::size_t assembly_per_row, std::size_t rows,
                                     std::size_t threads) {
  return min_of(host_chunk_rows(sweep_per_row + assembly_per_row, rows, threads),
                host_chunk_rows(assembly_per_row, rows, threads, host_chunk_khatri_rao_bytes));
}

/// The host cap of the automatic chunk on `ExecutionSpace` (its default instance): host_chunk_cap_on the threads the
/// space spreads block products over; at most rows.
template <class ExecutionSpace>
std::size_t host_chunk_cap(TransposeMemoryModel const& m, std::size_t rows) {
  return host_chunk_cap_on(m.sweep_bytes_per_row, m.assembly_bytes_per_row, rows, block_threads(ExecutionSpace()));
}

/// Rows of the next pass of a J^T chunk loop: `remaining` rows left, chunks of `chunk_rows` (whole blocks, or all
/// rows) of a workspace of `layout()`'s bytes per row (a callable, asked only where it matters). Where other
/// processes' runnable threads leave fewer cores than the space has threads (free_cores.hpp), at most the host cap
/// on the free threads (host_chunk_cap_on), else the chunk; at most `remaining`. A chunk at the cap holds one cache
/// share per thread, and J^T's assembly between the row ranges works on the whole pass: on fewer threads such a
/// chunk's jets outgrow the caches of the cores that run it (the `jtr` of perf/busy_machine.py beside two busy
/// processes: about 3% more CPU time than a one-thread process without passes), while a chunk within the free
/// threads' share runs whole (the fit of perf/busy_machine.yaml: its chunks of 128 probes, 0.6 MB of workspace, took
/// 1.5% more CPU time in passes of 64). Passes start on blocks and the workspace is the chunk's, so neither the bits
/// (J^T's chunk invariance) nor the memory model change.
template <class ExecutionSpace, class LayoutBytes>
std::size_t rows_of_next_pass(ExecutionSpace const& space, std::size_t chunk_rows, std::size_t remaining,
                              LayoutBytes const& layout) {
  std::size_t rows = chunk_rows;
  if (spreads_blocks_over_threads(space) && rows > reduction_block_size) {
    std::size_t const threads = std::size_t(space.concurrency());
    std::size_t const free = std::size_t(free_host_threads(int(threads)));
    if (free < threads) {
      TransposeLayoutBytes const bytes = layout();
      rows = host_chunk_cap_on(bytes.sweep_per_row, bytes.assembly_per_row, rows, free);
    }
  }
  return min_of(rows, remaining);
}

/// The automatic chunk on a model: the balance chunk, on host backends at most host_chunk_cap.
template <class ExecutionSpace>
std::size_t automatic_chunk(TransposeMemoryModel const& m, std::size_t rows) {
  std::size_t const balance = balance_chunk(m, rows);
  if (!runs_on_host<ExecutionSpace>()) return balance;
  return min_of(balance, host_chunk_cap<ExecutionSpace>(m, rows));
}

}  // namespace impl

/// Balance chunk size for J^T (docs/math.md): the largest chunk whose workspace stays within the bytes of the
/// probe data itself, so the assembly is never the tallest pole; W_local = ceil(n_probes / n_shards) when that
/// already fits. Entries and applies hold so few bytes per sample that their chunks may always use
/// scalar_kind_workspace_floor_bytes of workspace. A multiple of `block_rows` (reduction_block_size_for<ExecutionSpace>() of the space J^T runs on;
/// the default is the host backends' block), at least one block, or all W_local rows. Results are cached by shape;
/// no kernel runs and nothing is allocated.
/// **Throws:** InvalidArgument for n_shards = 0, block_rows = 0 or bad shape lists.
inline std::size_t estimate_chunk_size(MeasurementKind kind, std::vector<std::size_t> const& mode_shapes,
                                       std::vector<std::size_t> const& tucker_ranks,
                                       std::vector<std::size_t> const& tt_ranks, std::size_t order,
                                       std::size_t n_probes, std::size_t n_tangent = 1, std::size_t n_shards = 1,
                                       ScalarType scalar = ScalarType::float64,
                                       std::size_t block_rows = reduction_block_size) {
  if (n_shards == 0) throw InvalidArgument("t3k::estimate_chunk_size: n_shards must be >= 1 (got 0)");
  impl::check_block_rows("t3k::estimate_chunk_size", block_rows);
  using Key = std::tuple<int, std::vector<std::size_t>, std::vector<std::size_t>, std::vector<std::size_t>,
                         std::size_t, std::size_t, std::size_t, std::size_t, int, std::size_t>;
  static std::mutex mutex;
  static std::map<Key, std::size_t> cache;
  Key key{int(kind), mode_shapes, tucker_ranks, tt_ranks, order, n_probes, n_tangent, n_shards, int(scalar),
          block_rows};
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  auto const model =
      transpose_memory_model(kind, mode_shapes, tucker_ranks, tt_ranks, order, n_tangent, true, scalar, block_rows);
  std::size_t const c = impl::balance_chunk(model, impl::local_rows(n_probes, n_shards));
  std::lock_guard<std::mutex> lock(mutex);
  cache.emplace(key, c);
  return c;
}

/// estimate_chunk_size of the probe kind. **Throws:** as above.
inline std::size_t estimate_chunk_size(std::vector<std::size_t> const& mode_shapes,
                                       std::vector<std::size_t> const& tucker_ranks,
                                       std::vector<std::size_t> const& tt_ranks, std::size_t order,
                                       std::size_t n_probes, std::size_t n_tangent = 1, std::size_t n_shards = 1,
                                       ScalarType scalar = ScalarType::float64,
                                       std::size_t block_rows = reduction_block_size) {
  return estimate_chunk_size(MeasurementKind::probes, mode_shapes, tucker_ranks, tt_ranks, order, n_probes, n_tangent,
                             n_shards, scalar, block_rows);
}

/// The chunk size `ChunkSize::automatic()` resolves to in a J^T on `ExecutionSpace` (the optimizers and the fit
/// driver use it too): estimate_chunk_size, and on host backends at most the chunk whose workspace fits
/// host_chunk_workspace_bytes and whose Khatri-Rao jets fit host_chunk_khatri_rao_bytes per thread of the space's
/// default instance (impl::host_chunk_cap). Nothing runs on the space; it only selects the policy.
/// **Throws:** as estimate_chunk_size.
template <class ExecutionSpace>
std::size_t automatic_chunk_size(MeasurementKind kind, std::vector<std::size_t> const& mode_shapes,
                                 std::vector<std::size_t> const& tucker_ranks, std::vector<std::size_t> const& tt_ranks,
                                 std::size_t order, std::size_t n_probes, std::size_t n_tangent = 1,
                                 std::size_t n_shards = 1, ScalarType scalar = ScalarType::float64) {
  std::size_t const balance = estimate_chunk_size(kind, mode_shapes, tucker_ranks, tt_ranks, order, n_probes,
                                                  n_tangent, n_shards, scalar, reduction_block_size_for<ExecutionSpace>());
  if (!impl::runs_on_host<ExecutionSpace>()) return balance;
  auto const model = transpose_memory_model(kind, mode_shapes, tucker_ranks, tt_ranks, order, n_tangent, true, scalar);
  return min_of(balance, impl::host_chunk_cap<ExecutionSpace>(model, impl::local_rows(n_probes, n_shards)));
}

/// automatic_chunk_size of the probe kind. **Throws:** as above.
template <class ExecutionSpace>
std::size_t automatic_chunk_size(std::vector<std::size_t> const& mode_shapes,
                                 std::vector<std::size_t> const& tucker_ranks, std::vector<std::size_t> const& tt_ranks,
                                 std::size_t order, std::size_t n_probes, std::size_t n_tangent = 1,
                                 std::size_t n_shards = 1, ScalarType scalar = ScalarType::float64) {
  return automatic_chunk_size<ExecutionSpace>(MeasurementKind::probes, mode_shapes, tucker_ranks, tt_ranks, order,
                                              n_probes, n_tangent, n_shards, scalar);
}

/// The largest chunk whose total peak (inputs + workspace + gradients) stays within `target_bytes`: a multiple of
/// `block_rows` (as estimate_chunk_size), or all W_local rows. **Throws:** InvalidArgument stating the bytes needed
/// when even the smallest chunk (one block) does not fit; for n_shards = 0 or block_rows = 0.
inline std::size_t max_chunk_size_within(MeasurementKind kind, std::vector<std::size_t> const& mode_shapes,
                                         std::vector<std::size_t> const& tucker_ranks,
                                         std::vector<std::size_t> const& tt_ranks, std::size_t order,
                                         std::size_t n_probes, std::size_t target_bytes, std::size_t n_tangent = 1,
                                         std::size_t n_shards = 1, ScalarType scalar = ScalarType::float64,
                                         std::size_t block_rows = reduction_block_size) {
  if (n_shards == 0) throw InvalidArgument("t3k::max_chunk_size_within: n_shards must be >= 1 (got 0)");
  impl::check_block_rows("t3k::max_chunk_size_within", block_rows);
  auto const model =
      transpose_memory_model(kind, mode_shapes, tucker_ranks, tt_ranks, order, n_tangent, true, scalar, block_rows);
  std::size_t const rows = impl::local_rows(n_probes, n_shards);
  if (rows == 0) return 1;
  // J^T never runs fewer rows per pass than one block (or all rows when there are fewer).
  std::size_t const smallest = min_of(block_rows, rows);
  std::size_t const floor_bytes = model.peak_bytes(rows, smallest);
  if (floor_bytes > target_bytes) {
    throw InvalidArgument(impl::concat(
        "t3k::max_chunk_size_within: even the smallest chunk (", smallest, " probes, one reduction block) needs ",
        floor_bytes, " bytes (", rows, " probe rows of data at ", model.input_bytes_per_row, " bytes, ",
        model.fixed_bytes, " fixed bytes, ", model.sweep_bytes_per_row + model.assembly_bytes_per_row,
        " bytes per chunk row), more than the target of ", target_bytes, " bytes"));
  }
  std::size_t const per_row = model.sweep_bytes_per_row + model.assembly_bytes_per_row;
  if (per_row == 0) return rows;
  std::size_t const spare = target_bytes - (floor_bytes - smallest * per_row);
  std::size_t c = impl::rows_per_chunk(spare / per_row, rows, block_rows);
  // Block partials (device backends) grow with the chunk's blocks, which the per-row division leaves out.
  while (c > smallest && model.peak_bytes(rows, c) > target_bytes) c = impl::rows_per_chunk(c - 1, rows, block_rows);
  return c;
}

/// max_chunk_size_within of the probe kind. **Throws:** as above.
inline std::size_t max_chunk_size_within(std::vector<std::size_t> const& mode_shapes,
                                         std::vector<std::size_t> const& tucker_ranks,
                                         std::vector<std::size_t> const& tt_ranks, std::size_t order,
                                         std::size_t n_probes, std::size_t target_bytes, std::size_t n_tangent = 1,
                                         std::size_t n_shards = 1, ScalarType scalar = ScalarType::float64,
                                         std::size_t block_rows = reduction_block_size) {
  return max_chunk_size_within(MeasurementKind::probes, mode_shapes, tucker_ranks, tt_ranks, order, n_probes,
                               target_bytes, n_tangent, n_shards, scalar, block_rows);
}

namespace impl {

/// Probe rows per pass of a probe sweep (probes, probe jets, J) whose workspace is `layout(arena, rows)`: none and
/// fixed sizes as rows_per_chunk; `auto` on device backends is all rows (kernels want rows), on host backends the
/// rows whose workspace fits host_sweep_chunk_workspace_bytes per thread that block products are spread over (whole
/// blocks: host_chunk_rows), so the sweep stays in a core's cache (BM_Probes, BM_J; figures in docs/performance.md).
/// The sweeps' results do not depend on it.
template <class ExecutionSpace, class Scalar, class MemorySpace, class Layout>
std::size_t sweep_chunk_rows(ChunkSize const& chunk, std::size_t n_probes, Layout&& layout) {
  if (chunk.kind() != ChunkSize::Kind::automatic || !runs_on_host<ExecutionSpace>()) {
    return rows_per_chunk(chunk, n_probes, reduction_block_size_for<ExecutionSpace>());  // auto: all rows
  }
  // The layout is affine in the rows from one block per thread on (below it the probe pack buffer grows too, one
  // block per row range): count it there and at twice that.
  std::size_t const threads = block_threads(ExecutionSpace());
  std::size_t const b = reduction_block_size * threads;
  WorkspaceArena<Scalar, MemorySpace> at1, at2;
  (void)layout(at1, b);
  (void)layout(at2, 2 * b);
  std::size_t const per_row = sizeof(Scalar) * (at2.size() - at1.size()) / b;
  return host_chunk_rows(per_row, n_probes, threads, host_sweep_chunk_workspace_bytes);
}

/// Turns `auto` into a fixed chunk for a call with these frame shapes; none and fixed pass through.
template <class ExecutionSpace, class Scalar>
ChunkSize resolve_chunk_size(MeasurementKind kind, ChunkSize requested, FrameShapes const& sh, std::size_t order,
                             std::size_t n_probes, std::size_t n_tangent) {
  if (requested.kind() != ChunkSize::Kind::automatic) return requested;
  auto const model = transpose_memory_model_elements<Scalar>(kind, sh, order, n_tangent, true,
                                                             reduction_block_size_for<ExecutionSpace>());
  return ChunkSize::of(automatic_chunk<ExecutionSpace>(model, n_probes > 0 ? n_probes : 1));
}

template <class ExecutionSpace, class Scalar>
ChunkSize resolve_chunk_size(ChunkSize requested, FrameShapes const& sh, std::size_t order, std::size_t n_probes,
                             std::size_t n_tangent) {
  return resolve_chunk_size<ExecutionSpace, Scalar>(MeasurementKind::probes, requested, sh, order, n_probes,
                                                    n_tangent);
}

}  // namespace impl
}  // namespace t3k
