#pragma once
/// \file collective.hpp
/// What the command-line tool needs to run under `mpirun -np P` (docs/math.md, sharding): MPI set-up and tear-down,
/// failures that end every rank the same way, and outputs of a sharded probe set written by rank 0 alone.
///
/// The rule that keeps the ranks from hanging: work that can fail on some ranks only (reading this rank's rows,
/// rank 0 writing a file) runs inside `collectively`, which holds no collective call of its own until the work is
/// done; afterwards one agreement tells every rank whether any rank failed, and every rank throws the same
/// CollectiveError. Collective library calls run outside such blocks: their own checks are collective already
/// (t3k::impl::collective_check). With one rank `collectively` is the plain call, so the single-process tool keeps
/// its exceptions, messages and exit codes unchanged.

#include "drivers/errors.hpp"
#include "t3k/io/hdf5_io.hpp"

#include "t3k/core/communicator.hpp"

#include <cstddef>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace t3k {
namespace cli {

/// Whether an MPI launcher (mpirun, mpiexec, srun) started this process: one of the variables launchers set in
/// each rank's environment is there.
bool launched_by_mpi();

/// MPI for the lifetime of the tool: MPI_Init_thread (MPI_THREAD_FUNNELED: only the main thread calls MPI; Kokkos'
/// host threads never do) on construction, MPI_Finalize on destruction, where a launcher started the process
/// (launched_by_mpi). Otherwise, and without T3K_ENABLE_MPI, it does nothing and the tool is the single process.
/// Construct it first in main, before Kokkos, so that it is destroyed last.
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(MpiSession const&) = delete;
  MpiSession& operator=(MpiSession const&) = delete;
  /// Every rank of the run (Communicator::world() where MPI was initialized, otherwise this process alone).
  Communicator world() const;

 private:
  bool initialized_ = false;
};

/// The exit code a command gives an exception (2 for bad input, 1 otherwise; each command has its own mapping).
using ExitCodeOf = int (*)(std::exception const&);

namespace impl {
/// Agrees across ranks on whether any rank failed (`message` empty on a rank that did not) and throws the same
/// CollectiveError on every rank when one did. Collective.
void agree_on_failure(Communicator const& comm, int exit_code, std::string const& message);
}  // namespace impl

/// Runs `work` on every rank; when it throws on any rank, every rank throws the same CollectiveError (exit code
/// from `exit_code_of` on the failing rank). `work` must not make collective calls (it may fail half-way on one
/// rank). With one rank, `work` is called and its exceptions pass unchanged. Collective.
template <class Work>
void collectively(Communicator const& comm, ExitCodeOf exit_code_of, Work&& work) {
  if (comm.size() == 1) {
    work();
    return;
  }
  std::string message;
  int code = 0;
  try {
    work();
  } catch (std::exception const& e) {
    message = e.what();
    code = exit_code_of(e);
    if (message.empty()) message = "unknown error";
  } catch (...) {
    message = "unknown error";
    code = 1;
  }
  impl::agree_on_failure(comm, code, message);
}

/// Ends every rank of `comm` with `exit_code` when this rank failed in a way the others cannot know of (the last
/// resort: MPI_Abort). Without MPI, or with one rank, it returns and the caller returns the exit code.
void abort_if_distributed(Communicator const& comm, int exit_code);

/// One output file of a sharded run, written by rank 0 alone with the atomic io::Writer; the other ranks send it
/// their rows. Datasets of per-probe results are streamed: rank 0 writes its rows, then receives and writes the
/// rows of rank 1, 2, ... one rank at a time, so no rank ever holds more than two shards (a shard
/// is what fits on one rank, so W is never gathered onto one). The file equals the single-process output.
///
/// Errors on rank 0 (the file cannot be created or written) do not break the exchange: rank 0 keeps receiving
/// and writes nothing more, and `commit` turns the first error into a CollectiveError on every rank. With one
/// rank every call is the io::Writer call, exceptions included.
class ShardedWriter {
 public:
  /// Rank 0 creates the temporary file (io::Writer). Collective only in `commit`.
  ShardedWriter(Communicator const& comm, ExitCodeOf exit_code_of, std::string const& path);
  ~ShardedWriter();
  ShardedWriter(ShardedWriter const&) = delete;
  ShardedWriter& operator=(ShardedWriter const&) = delete;

  /// `dataset` of shape (sum of the ranks' rows, local_shape[1:]): every rank passes its rows, in rank order of the
  /// probe set (shard_range). Collective (a gather of row counts, then one message per rank).
  void write_rows(std::string const& dataset, std::vector<std::size_t> const& local_shape, double const* local_data);
  /// A host View of this rank's rows (packed first when it is not contiguous LayoutRight). Collective.
  template <class View>
  void write_view_rows(std::string const& dataset, View const& view);
  /// Runs `write(writer)` on rank 0 (replicated data: /grad, root attributes) unless a write failed already.
  template <class Write>
  void on_root(Write&& write);
  /// Rank 0 renames the file onto its path; then every rank learns whether rank 0 failed (CollectiveError).
  /// Collective.
  void commit();

 private:
  void record(std::exception const& e);
  Communicator comm_;
  ExitCodeOf exit_code_of_;
  std::unique_ptr<io::Writer> writer_;  // rank 0 only
  std::string error_;
  int error_code_ = 0;
};

template <class View>
void ShardedWriter::write_view_rows(std::string const& dataset, View const& view) {
  static_assert(Kokkos::SpaceAccessibility<Kokkos::DefaultHostExecutionSpace, typename View::memory_space>::accessible,
                "t3k::cli::ShardedWriter: the View must be host-accessible");
  Kokkos::LayoutRight layout;
  std::vector<std::size_t> shape(View::rank);
  for (std::size_t k = 0; k < shape.size(); ++k) layout.dimension[k] = shape[k] = view.extent(k);
  Kokkos::View<typename View::non_const_data_type, Kokkos::LayoutRight, Kokkos::HostSpace> packed(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "t3k::cli::sharded_rows"), layout);
  Kokkos::deep_copy(packed, view);
  write_rows(dataset, shape, packed.data());
}

template <class Write>
void ShardedWriter::on_root(Write&& write) {
  if (comm_.size() == 1) {
    write(*writer_);
    return;
  }
  if (comm_.rank_index() != 0 || !error_.empty()) return;
  try {
    write(*writer_);
  } catch (std::exception const& e) {
    record(e);
  }
}

}  // namespace cli
}  // namespace t3k
