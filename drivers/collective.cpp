/// \file collective.cpp
/// MPI behind collective.hpp. Every MPI call of the tool is here or in t3k/core/communicator.hpp.

#include "drivers/collective.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#ifdef T3K_ENABLE_MPI
#include <mpi.h>
#endif

namespace t3k {
namespace cli {

namespace {
/// Variables that MPI launchers set in each rank's environment: Open MPI's mpirun (OMPI_COMM_WORLD_SIZE), PMIx
/// (Open MPI 5, srun --mpi=pmix), PMI-1/2 (MPICH's and Intel MPI's Hydra, srun --mpi=pmi2), MVAPICH, and Slurm's
/// srun itself.
char const* const launcher_variables[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK",           "PMI_RANK", "PMI_SIZE",
                                          "MPI_LOCALNRANKS",      "MV2_COMM_WORLD_SIZE", "SLURM_PROCID"};
}  // namespace

bool launched_by_mpi() {
  for (char const* name : launcher_variables) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

MpiSession::MpiSession(int& argc, char**& argv) {
#ifdef T3K_ENABLE_MPI
  // Started without a launcher, MPI_Init would make this process a singleton of one rank, and Open MPI starts its
  // runtime daemon for it: about 0.3 s of every run, for nothing a single process needs.
  if (!launched_by_mpi()) return;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  initialized_ = true;
#else
  (void)argc;
  (void)argv;
#endif
}

MpiSession::~MpiSession() {
#ifdef T3K_ENABLE_MPI
  if (initialized_) MPI_Finalize();
#endif
}

Communicator MpiSession::world() const { return initialized_ ? Communicator::world() : Communicator(); }

namespace impl {

void agree_on_failure(Communicator const& comm, int exit_code, std::string const& message) {
  int const failed = comm.allreduce_sum(message.empty() ? 0 : 1);
  if (failed == 0) return;
  // The exit code travels in front of the message: "<code> <text>".
  std::string const first = comm.first_error(message.empty() ? message : std::to_string(exit_code) + " " + message);
  // first_error returns "rank k: <code> <text>".
  std::size_t const colon = first.find(": ");
  std::string const rank_prefix = first.substr(0, colon + 2);
  std::string const encoded = first.substr(colon + 2);
  std::size_t const space = encoded.find(' ');
  int const code = std::atoi(encoded.substr(0, space).c_str());
  std::string const text = encoded.substr(space + 1);
  // When every rank failed the message is the same on all of them (a missing file, a bad shape): say it as the
  // single-process tool does.
  throw CollectiveError(code, failed == comm.size() ? text : rank_prefix + text);
}

}  // namespace impl

void abort_if_distributed(Communicator const& comm, int exit_code) {
#ifdef T3K_ENABLE_MPI
  if (comm.size() > 1) {
    std::fflush(stdout);
    std::fflush(stderr);
    MPI_Abort(comm.mpi_comm(), exit_code);
  }
#else
  (void)comm;
  (void)exit_code;
#endif
}

// --------------------------------------------------------------------------------------------------- ShardedWriter

ShardedWriter::ShardedWriter(Communicator const& comm, ExitCodeOf exit_code_of, std::string const& path)
    : comm_(comm), exit_code_of_(exit_code_of) {
  if (comm_.size() == 1) {
    writer_ = std::make_unique<io::Writer>(path);
    return;
  }
  if (comm_.rank_index() != 0) return;
  try {
    writer_ = std::make_unique<io::Writer>(path);
  } catch (std::exception const& e) {
    record(e);
  }
}

ShardedWriter::~ShardedWriter() = default;

void ShardedWriter::record(std::exception const& e) {
  if (!error_.empty()) return;
  error_ = e.what();
  if (error_.empty()) error_ = "unknown error";
  error_code_ = exit_code_of_(e);
  writer_.reset();  // removes the temporary file
}

void ShardedWriter::write_rows(std::string const& dataset, std::vector<std::size_t> const& local_shape,
                               double const* local_data) {
  if (comm_.size() == 1) {
    writer_->write_raw(dataset, local_shape, local_data);
    return;
  }
#ifdef T3K_ENABLE_MPI
  std::size_t row_length = 1;
  for (std::size_t k = 1; k < local_shape.size(); ++k) row_length *= local_shape[k];
  MPI_Comm const mpi = comm_.mpi_comm();
  int const size = comm_.size(), rank = comm_.rank_index();
  std::uint64_t const local_rows = local_shape.empty() ? 0 : local_shape[0];
  std::vector<std::uint64_t> rows(std::size_t(size), 0);
  MPI_Gather(&local_rows, 1, MPI_UINT64_T, rows.data(), 1, MPI_UINT64_T, 0, mpi);
  // MPI counts are int: long shards travel in pieces of at most 2^30 values.
  std::size_t const piece = std::size_t(1) << 30;
  int const tag = 7;
  if (rank != 0) {
    std::size_t const n = std::size_t(local_rows) * row_length;
    for (std::size_t done = 0; done < n; done += piece) {
      int const count = int(n - done < piece ? n - done : piece);
      MPI_Send(local_data + done, count, MPI_DOUBLE, 0, tag, mpi);
    }
    return;
  }
  std::vector<std::size_t> shape = local_shape;
  shape[0] = 0;
  std::size_t largest = 0;
  for (auto r : rows) {
    shape[0] += std::size_t(r);
    largest = std::max(largest, std::size_t(r));
  }
  auto attempt = [this](auto&& step) {
    if (!error_.empty()) return;
    try {
      step();
    } catch (std::exception const& e) {
      record(e);
    }
  };
  auto write = [&](std::size_t first_row, std::size_t n_rows, double const* data) {
    attempt([&] { writer_->write_rows(dataset, first_row, n_rows, data); });
  };
  attempt([&] { writer_->create_dataset(dataset, shape); });
  write(0, std::size_t(local_rows), local_data);
  std::vector<double> buffer(largest * row_length);
  std::size_t first_row = std::size_t(local_rows);
  for (int source = 1; source < size; ++source) {
    std::size_t const n = std::size_t(rows[std::size_t(source)]) * row_length;
    for (std::size_t done = 0; done < n; done += piece) {
      int const count = int(n - done < piece ? n - done : piece);
      MPI_Recv(buffer.data() + done, count, MPI_DOUBLE, source, tag, mpi, MPI_STATUS_IGNORE);
    }
    write(first_row, std::size_t(rows[std::size_t(source)]), buffer.data());
    first_row += std::size_t(rows[std::size_t(source)]);
  }
#else
  (void)dataset;
  (void)local_shape;
  (void)local_data;
#endif
}

void ShardedWriter::commit() {
  if (comm_.size() == 1) {
    writer_->commit();
    return;
  }
  if (comm_.rank_index() == 0 && error_.empty()) {
    try {
      writer_->commit();
    } catch (std::exception const& e) {
      record(e);
    }
  }
  impl::agree_on_failure(comm_, error_code_, error_);
}

}  // namespace cli
}  // namespace t3k
