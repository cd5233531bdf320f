#pragma once
/// \file communicator.hpp
/// The ranks that share one probe set (docs/math.md). With T3K_ENABLE_MPI a Communicator wraps an MPI
/// communicator; without it, it is a single-rank stand-in with the same API, so the library builds and runs
/// without MPI and every sharded code path degenerates to the single-process one.
///
/// Reductions are made *bitwise identical on every rank*: a floating-point sum is reduced onto rank 0
/// (MPI_Reduce) and then broadcast (MPI_Bcast), never a bare MPI_Allreduce. The MPI standard only advises, and does
/// not require, that MPI_Allreduce return the same bits everywhere; Open MPI's algorithms for non-power-of-two rank
/// counts (and segmented ones for long messages) add the contributions in different orders on different ranks.
/// The optimizers branch on reduced values (Armijo tests, CG breakdowns, stopping rules), so a last-bit difference
/// would let replicated iterates drift apart. Reduce + broadcast costs about what an allreduce costs and its
/// result is one set of bits, copied.

#include "t3k/core/error.hpp"
#include "t3k/core/impl/kokkos_compat.hpp"
#include "t3k/core/t3_variation.hpp"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <type_traits>
#include <vector>

#ifdef T3K_ENABLE_MPI
#include <mpi.h>
#endif

namespace t3k {

/// This rank's contiguous rows [begin, end) of a probe set sharded across ranks.
struct ShardRange {
  std::size_t begin = 0;                            ///< first row
  std::size_t end = 0;                              ///< one past the last row
  std::size_t size() const { return end - begin; }  ///< rows held
};

/// Rows [begin, end) of rank `rank_index` out of `n_ranks` for `n_global` probes: contiguous shards in rank order,
/// the first n_global % n_ranks ranks hold one row more. **Throws:** InvalidArgument for n_ranks = 0 or a rank
/// index out of range.
inline ShardRange shard_range(std::size_t n_global, std::size_t rank_index, std::size_t n_ranks) {
  if (n_ranks == 0 || rank_index >= n_ranks) {
    throw InvalidArgument(impl::concat("t3k::shard_range: rank ", rank_index, " of ", n_ranks, " ranks"));
  }
  std::size_t const base = n_global / n_ranks, extra = n_global % n_ranks;
  ShardRange r;
  r.begin = rank_index * base + (rank_index < extra ? rank_index : extra);
  r.end = r.begin + base + (rank_index < extra ? 1 : 0);
  return r;
}

namespace impl {
#ifdef T3K_ENABLE_MPI
template <class T>
MPI_Datatype mpi_datatype() {
  static_assert(std::is_arithmetic<T>::value, "t3k::Communicator: reductions take arithmetic types");
  if (std::is_same<T, double>::value) return MPI_DOUBLE;
  if (std::is_same<T, float>::value) return MPI_FLOAT;
  if (std::is_same<T, long double>::value) return MPI_LONG_DOUBLE;
  if (std::is_same<T, bool>::value) return MPI_CXX_BOOL;
  if (std::is_signed<T>::value) {
    return sizeof(T) == 1 ? MPI_INT8_T : sizeof(T) == 2 ? MPI_INT16_T : sizeof(T) == 4 ? MPI_INT32_T : MPI_INT64_T;
  }
  return sizeof(T) == 1 ? MPI_UINT8_T : sizeof(T) == 2 ? MPI_UINT16_T : sizeof(T) == 4 ? MPI_UINT32_T : MPI_UINT64_T;
}
#endif
}  // namespace impl

/// A group of ranks sharing a probe set. Cheap to copy; never owns, duplicates or frees the MPI communicator and
/// never initializes or finalizes MPI.
///
/// A default-constructed Communicator is this process alone and makes no MPI call, so code that holds the whole
/// problem in one process (and programs that never call MPI_Init) behave exactly as without MPI; sharding is
/// asked for explicitly with Communicator::world() or Communicator(MPI_Comm).
///
/// Every member except rank_index() and size() is collective: all ranks must call it in the same order.
/// **Blocking:** collectives block until every rank has entered them. **Throws:** nothing of its own (MPI errors
/// follow the communicator's error handler, by default fatal).
class Communicator {
 public:
  /// This process alone (single rank, no MPI calls).
  Communicator() = default;

#ifdef T3K_ENABLE_MPI
  /// Wraps `comm` (not owned). MPI must be initialized.
  explicit Communicator(MPI_Comm comm) : comm_(comm), distributed_(true) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  /// The wrapped MPI communicator (MPI_COMM_SELF for a default-constructed one).
  MPI_Comm mpi_comm() const { return distributed_ ? comm_ : MPI_COMM_SELF; }
#endif

  /// MPI_COMM_WORLD with MPI enabled (MPI must be initialized), the single rank otherwise.
  static Communicator world() {
#ifdef T3K_ENABLE_MPI
    return Communicator(MPI_COMM_WORLD);
#else
    return Communicator();
#endif
  }

  /// Index of this rank, 0..size()-1. (Not named after the View rank accessor, whose call the style lint forbids.)
  int rank_index() const { return rank_; }
  /// Number of ranks.
  int size() const { return size_; }
  /// This rank's rows of `n_global` probes (see the free shard_range).
  ShardRange shard_range(std::size_t n_global) const {
    return t3k::shard_range(n_global, std::size_t(rank_), std::size_t(size_));
  }

  /// Sum over ranks, the same bits on every rank (reduce onto rank 0, then broadcast).
  template <class T>
  T allreduce_sum(T value) const {
    allreduce_sum(&value, 1);
    return value;
  }
  /// In-place sum over ranks of `n` host values, the same bits on every rank.
  template <class T>
  void allreduce_sum(T* host_data, std::size_t n) const {
#ifdef T3K_ENABLE_MPI
    if (size_ > 1 && n > 0) {
      auto const type = impl::mpi_datatype<T>();
      for (std::size_t done = 0; done < n;) {  // MPI counts are int
        int const count = int(n - done < std::size_t(1) << 30 ? n - done : std::size_t(1) << 30);
        if (rank_ == 0) {
          MPI_Reduce(MPI_IN_PLACE, host_data + done, count, type, MPI_SUM, 0, comm_);
        } else {
          MPI_Reduce(host_data + done, nullptr, count, type, MPI_SUM, 0, comm_);
        }
        MPI_Bcast(host_data + done, count, type, 0, comm_);
        done += std::size_t(count);
      }
    }
#else
    (void)host_data;
    (void)n;
#endif
  }
  /// Minimum / maximum over ranks (exact, so a plain allreduce).
  template <class T>
  T allreduce_min(T value) const {
    return extremum(value, false);
  }
  /// \copydoc allreduce_min
  template <class T>
  T allreduce_max(T value) const {
    return extremum(value, true);
  }
  /// True on every rank when `value` is true on every rank.
  bool all_of(bool value) const { return allreduce_min(int(value ? 1 : 0)) == 1; }

  /// Copies `n` host values from `root` to every rank.
  template <class T>
  void broadcast(T* host_data, std::size_t n, int root = 0) const {
#ifdef T3K_ENABLE_MPI
    if (size_ > 1 && n > 0) MPI_Bcast(host_data, int(n * sizeof(T)), MPI_BYTE, root, comm_);
#else
    (void)host_data;
    (void)n;
    (void)root;
#endif
  }

  /// Turns per-rank failures into a collective one: every rank passes its own error message ("" when it is
  /// fine); every rank gets "" when all are fine, otherwise the message of the lowest failing rank, prefixed by
  /// "rank k: " when there is more than one rank.
  std::string first_error(std::string const& local_message) const {
    if (size_ == 1) return local_message;
    int const failing = allreduce_min(local_message.empty() ? size_ : rank_);
    if (failing == size_) return std::string();
    std::uint64_t length = rank_ == failing ? local_message.size() : 0;
    broadcast(&length, 1, failing);
    std::string text(std::size_t(length), '\0');
    if (rank_ == failing) text = local_message;
    if (length > 0) broadcast(&text[0], std::size_t(length), failing);
    return impl::concat("rank ", failing, ": ", text);
  }

  /// Waits for every rank.
  void barrier() const {
#ifdef T3K_ENABLE_MPI
    if (size_ > 1) MPI_Barrier(comm_);
#endif
  }

 private:
  template <class T>
  T extremum(T value, bool maximum) const {
#ifdef T3K_ENABLE_MPI
    if (size_ > 1) MPI_Allreduce(MPI_IN_PLACE, &value, 1, impl::mpi_datatype<T>(), maximum ? MPI_MAX : MPI_MIN, comm_);
#else
    (void)maximum;
#endif
    return value;
  }

#ifdef T3K_ENABLE_MPI
  MPI_Comm comm_ = MPI_COMM_SELF;
  bool distributed_ = false;
#endif
  int rank_ = 0;
  int size_ = 1;
};

namespace impl {

/// Runs `check` on every rank and makes its outcome collective: when it throws on any rank, every rank throws
/// (DimensionMismatch when the lowest failing rank threw one, InvalidArgument otherwise) with that rank's message.
/// With one rank the exception passes through unchanged. Collective.
template <class Check>
void collective_check(Communicator const& comm, Check&& check) {
  if (comm.size() == 1) {
    check();
    return;
  }
  std::string message;
  try {
    check();
  } catch (DimensionMismatch const& e) {
    message = std::string("D") + e.what();
  } catch (std::exception const& e) {
    message = std::string("I") + e.what();
  }
  std::string const first = comm.first_error(message);
  if (first.empty()) return;
  // "rank k: " + code + text
  std::size_t const colon = first.find(": ");
  char const code = first[colon + 2];
  std::string const text = first.substr(0, colon + 2) + first.substr(colon + 3);
  if (code == 'D') throw DimensionMismatch(text);
  throw InvalidArgument(text);
}

}  // namespace impl

/// Sums a variation stack over the ranks in place (J^T's partial sums of the shards), the same bits on every rank.
/// All cores travel in one message: they are packed into one host staging buffer of the variation's size, reduced
/// onto rank 0, broadcast and unpacked. With one rank nothing is copied. Collective.
/// **Blocking:** yes. **Throws:** InvalidArgument for a non-contiguous core.
template <class ExecutionSpace, class Scalar, class MemorySpace>
void allreduce_sum(ExecutionSpace const& space, Communicator const& comm, T3Variation<Scalar, MemorySpace>& v) {
  if (comm.size() == 1) return;
  using Flat = Kokkos::View<Scalar*, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using HostFlat = Kokkos::View<Scalar*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  std::vector<Flat> parts;
  std::size_t total = 0;
  for (std::size_t i = 0; i < v.n_modes(); ++i) {
    if (!v.tucker[i].span_is_contiguous() || !v.tt[i].span_is_contiguous()) {
      throw InvalidArgument(impl::concat("t3k::allreduce_sum: variation core ", i, " is not contiguous"));
    }
    parts.emplace_back(v.tucker[i].data(), v.tucker[i].span());
    parts.emplace_back(v.tt[i].data(), v.tt[i].span());
  }
  for (auto const& p : parts) total += p.extent(0);
  Kokkos::View<Scalar*, Kokkos::HostSpace> staging(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "t3k::allreduce_sum::staging"), total);
  std::size_t offset = 0;
  for (auto const& p : parts) {
    Kokkos::deep_copy(space, HostFlat(staging.data() + offset, p.extent(0)), p);
    offset += p.extent(0);
  }
  space.fence();  // the host reads the staging buffer
  comm.allreduce_sum(staging.data(), total);
  offset = 0;
  for (auto const& p : parts) {
    Kokkos::deep_copy(space, p, HostFlat(staging.data() + offset, p.extent(0)));
    offset += p.extent(0);
  }
  space.fence();  // the staging buffer dies here
}

}  // namespace t3k
