// Strong scaling of the sharded J^T (docs/math.md) and the memory model's per-rank prediction at scale.
//
//   mpiexec -np P t3k_mpi_scaling [--probes W] [--repeats R]
//
// Part 1 times the summed J^T (chunk auto, one reduction per call) of one fixed problem of W probes on 1, 2, 4, ...
// up to P ranks (sub-communicators of the first ranks; the others wait), each rank generating only its own rows,
// and prints seconds per call (slowest rank, best of R), speedup, efficiency and the measured per-rank peak bytes
// of J^T next to the model's. Part 2 prints, from the memory model alone, the per-rank bytes of J^T for 8 to 1024
// ranks at |W| = 10^8 for two stated shapes. Set OMP_NUM_THREADS (1 for one core per rank).
#include "t3k/algorithms/orthogonal_frame.hpp"
#include "t3k/algorithms/random_t3.hpp"
#include "t3k/core/communicator.hpp"
#include "t3k/core/memory_tracking.hpp"
#include "t3k/optimizers/planted_problem.hpp"

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Space = Kokkos::DefaultExecutionSpace;
using Mem = Space::memory_space;

struct Shape {
  char const* name;
  std::vector<std::size_t> big_n, n, r;
  std::size_t order;
};

std::string shape_text(Shape const& s) {
  auto list = [](std::vector<std::size_t> const& v) {
    std::string out;
    for (std::size_t k = 0; k < v.size(); ++k) out += (k ? "," : "") + std::to_string(v[k]);
    return out;
  };
  return "d=" + std::to_string(s.big_n.size()) + " N=(" + list(s.big_n) + ") n=(" + list(s.n) + ") r=(" + list(s.r) +
         ") K=" + std::to_string(s.order);
}

std::string bytes_text(double b) {
  char buf[64];
  char const* unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  std::snprintf(buf, sizeof buf, "%.2f %s", b, unit[u]);
  return buf;
}

void strong_scaling(int world_rank, int world_size, Shape const& sh, std::size_t w, int repeats) {
  Space space;
  auto truth = t3k::random_t3<double>(space, sh.big_n, sh.n, sh.r, 1);
  auto frame = t3k::orthogonal_frame(space, t3k::random_t3<double>(space, sh.big_n, sh.n, sh.r, 2));
  auto const model = t3k::transpose_memory_model(sh.big_n, sh.n, sh.r, sh.order, 1, true, t3k::ScalarType::float64,
                                                 t3k::reduction_block_size_for<Space>());
  if (world_rank == 0) {
    std::printf("Strong scaling of summed J^T (chunk auto, one reduction per call), %s, W = %zu, OMP_NUM_THREADS=%s\n",
                shape_text(sh).c_str(), w, std::getenv("OMP_NUM_THREADS") ? std::getenv("OMP_NUM_THREADS") : "unset");
    std::printf("%6s %10s %8s %12s %9s %11s %14s %14s\n", "ranks", "W_local", "chunk", "s/call", "speedup",
                "efficiency", "peak measured", "peak model");
  }
  double t1 = 0;
  for (int p = 1; p <= world_size; p *= 2) {
    MPI_Comm sub_comm = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank < p ? 0 : MPI_UNDEFINED, world_rank, &sub_comm);
    if (sub_comm != MPI_COMM_NULL) {
      t3k::Communicator comm(sub_comm);
      auto problem = t3k::make_planted_problem(space, comm, truth, w, sh.order, 0.0, 3);
      std::size_t const w_local = problem.n_probes();
      std::size_t const chunk = t3k::automatic_chunk_size<Space>(sh.big_n, sh.n, sh.r, sh.order, w_local, 1, 1);
      t3k::TransposeOptions const o{true, t3k::ChunkSize::automatic()};
      std::int64_t peak = 0;
      {
        t3k::AllocationTracker tracker;  // the first call also warms up
        auto g = t3k::probe_derivatives_transpose(space, comm, frame, problem.ww, problem.pp, problem.targets, o);
        space.fence();
        peak = comm.allreduce_max(tracker.peak(Mem::name()));
      }
      double best = 1e300;
      for (int k = 0; k < repeats; ++k) {
        space.fence();
        comm.barrier();
        auto const start = std::chrono::steady_clock::now();
        auto g = t3k::probe_derivatives_transpose(space, comm, frame, problem.ww, problem.pp, problem.targets, o);
        space.fence();
        double const local = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        best = std::min(best, comm.allreduce_max(local));
      }
      std::size_t const w_max = comm.allreduce_max(w_local);
      std::size_t const chunk_max = comm.allreduce_max(chunk);
      if (p == 1) t1 = best;
      if (comm.rank_index() == 0) {
        std::printf("%6d %10zu %8zu %12.4f %9.2f %10.0f%% %14s %14s\n", p, w_max, chunk_max, best, t1 / best,
                    100.0 * t1 / best / p, bytes_text(double(peak)).c_str(),
                    bytes_text(double(model.allocated_bytes(w_max, chunk_max))).c_str());
        std::fflush(stdout);
      }
      MPI_Comm_free(&sub_comm);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

void predicted_memory(Shape const& sh, std::size_t w) {
  auto const model = t3k::transpose_memory_model(sh.big_n, sh.n, sh.r, sh.order, 1, true, t3k::ScalarType::float64,
                                                 t3k::reduction_block_size_for<Space>());
  std::printf(
      "\nPredicted per-rank memory of summed J^T (memory model, float64, balance chunk: chunk auto on device "
      "backends; on host backends auto also caps the workspace at 8 MiB and the Khatri-Rao jets at 1 MiB per "
      "thread), %s: %s, |W| = %zu\n",
      sh.name, shape_text(sh).c_str(), w);
  std::printf(
      "  per probe row: data (w, p, residual jets) %zu B, workspace %zu B (sweep %zu + assembly %zu); "
      "fixed %zu B\n",
      model.input_bytes_per_row, model.sweep_bytes_per_row + model.assembly_bytes_per_row, model.sweep_bytes_per_row,
      model.assembly_bytes_per_row, model.fixed_bytes);
  std::printf("%6s %12s %10s %14s %14s %14s\n", "ranks", "W_local", "chunk", "data", "J^T allocates", "peak");
  for (std::size_t p = 8; p <= 1024; p *= 2) {
    std::size_t const w_local = t3k::impl::local_rows(w, p);
    std::size_t const chunk = t3k::estimate_chunk_size(
        sh.big_n, sh.n, sh.r, sh.order, w, 1, p, t3k::ScalarType::float64, t3k::reduction_block_size_for<Space>());
    std::printf("%6zu %12zu %10zu %14s %14s %14s\n", p, w_local, chunk,
                bytes_text(double(model.input_bytes_per_row) * double(w_local)).c_str(),
                bytes_text(double(model.allocated_bytes(w_local, chunk))).c_str(),
                bytes_text(double(model.peak_bytes(w_local, chunk))).c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::size_t w = 20000;
  int repeats = 3;
  for (int k = 1; k + 1 < argc; ++k) {
    if (std::strcmp(argv[k], "--probes") == 0)
      w = std::strtoull(argv[++k], nullptr, 10);
    else if (std::strcmp(argv[k], "--repeats") == 0)
      repeats = std::atoi(argv[++k]);
  }
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    Shape const bench{"benchmark shape", {24, 24, 24, 24, 24}, {6, 6, 6, 6, 6}, {1, 6, 12, 12, 6, 1}, 2};
    strong_scaling(rank, size, bench, w, repeats < 1 ? 1 : repeats);
    if (rank == 0) {
      predicted_memory(bench, 100000000);
      Shape const large{"large shape of the cost model",
                        std::vector<std::size_t>(8, 1000),
                        std::vector<std::size_t>(8, 64),
                        {1, 64, 128, 128, 128, 128, 128, 64, 1},
                        2};
      predicted_memory(large, 100000000);
    }
  }
  MPI_Finalize();
  return 0;
}
