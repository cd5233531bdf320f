#pragma once
/// \file mode_sharing.hpp
/// Shared Tucker factors: a partition of the modes of a T3 into groups whose modes use one Tucker factor
/// (docs/math.md, "Shared Tucker factors").
///
/// **How a tie is held.** A tied T3 is an ordinary TuckerTensorTrain whose Tucker cores within a group are the same
/// View: one allocation, referenced from every mode of the group (tie_tucker_factors). Every algorithm that reads a
/// T3 works on a tied one unchanged, and the tie cannot drift, because there is only one factor to change. The price
/// is that the storage of a factor is not saved (the vector of cores still has d entries) and that an in-place write
/// to one mode's Tucker core is a write to the whole group: code that updates cores in place, mode by mode, must
/// update each group once. Algorithms of the library return new T3s and never write into their inputs. Copies
/// (deep_copy_t3, copy_t3_to, files) allocate a factor per mode: their factors are equal but no longer tied;
/// tie_tucker_factors ties them again.

#include "t3k/core/error.hpp"
#include "t3k/core/impl/kokkos_compat.hpp"
#include "t3k/core/tucker_tensor_train.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace t3k {

/// Which modes of a T3 share one Tucker factor: one label per mode, modes with equal labels form a group.
///
/// Groups are numbered in the order of their first mode (labels {7, 3, 7} give the groups {0, 2} and {1}). Every
/// mode of a group has the same size N_g. A sharing in which every mode is its own group is trivial: it describes an
/// ordinary T3, and every algorithm that takes a sharing does exactly what it does without one.
class ModeSharing {
 public:
  /// The trivial sharing of zero modes (no T3 has it; a placeholder to assign to).
  ModeSharing() = default;

  /// \param labels one label per mode; modes with equal labels share a factor
  /// \param mode_shapes N_0..N_{d-1} of the T3s the sharing is for
  /// **Throws:** InvalidArgument for d = 0 or a zero mode size; DimensionMismatch when the label count is not d, or
  /// when two modes of a group differ in size ("t3k::ModeSharing: modes 0 and 2 share a factor but have sizes 5
  /// and 6").
  ModeSharing(std::vector<long long> labels, std::vector<std::size_t> mode_shapes)
      : labels_(std::move(labels)), mode_shapes_(std::move(mode_shapes)) {
    std::string const where = "t3k::ModeSharing";
    if (mode_shapes_.empty()) throw InvalidArgument(where + ": mode_shapes is empty; a T3 needs at least one mode");
    if (labels_.size() != mode_shapes_.size()) {
      throw DimensionMismatch(impl::concat(where, ": got ", labels_.size(), " labels for d = ", mode_shapes_.size(),
                                           " modes; give one label per mode"));
    }
    for (std::size_t i = 0; i < mode_shapes_.size(); ++i) {
      if (mode_shapes_[i] == 0) throw InvalidArgument(impl::concat(where, ": mode_shapes[", i, "] is 0"));
    }
    for (std::size_t i = 0; i < labels_.size(); ++i) {
      std::size_t g = 0;
      while (g < groups_.size() && labels_[groups_[g].front()] != labels_[i]) ++g;
      if (g == groups_.size()) {
        groups_.emplace_back();
      } else if (mode_shapes_[groups_[g].front()] != mode_shapes_[i]) {
        throw DimensionMismatch(impl::concat(where, ": modes ", groups_[g].front(), " and ", i,
                                             " share a factor but have sizes ", mode_shapes_[groups_[g].front()],
                                             " and ", mode_shapes_[i]));
      }
      groups_[g].push_back(i);
      group_of_.push_back(g);
    }
  }

  /// The trivial sharing: every mode its own group. \param mode_shapes N_0..N_{d-1}
  /// **Throws:** as the constructor.
  static ModeSharing unshared(std::vector<std::size_t> mode_shapes) {
    std::vector<long long> labels(mode_shapes.size());
    for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<long long>(i);
    return ModeSharing(std::move(labels), std::move(mode_shapes));
  }

  std::size_t n_modes() const { return labels_.size(); }                        ///< d
  std::size_t n_groups() const { return groups_.size(); }                       ///< number of groups
  std::vector<long long> const& labels() const { return labels_; }              ///< the labels as given
  std::vector<std::size_t> const& mode_shapes() const { return mode_shapes_; }  ///< N_0..N_{d-1}
  /// The modes of every group, ascending; groups in the order of their first mode.
  std::vector<std::vector<std::size_t>> const& groups() const { return groups_; }
  /// The group of mode `mode`. **Throws:** InvalidArgument for mode >= d.
  std::size_t group_of(std::size_t mode) const {
    if (mode >= group_of_.size()) {
      throw InvalidArgument(
          impl::concat("t3k::ModeSharing::group_of: mode ", mode, " is not below d = ", group_of_.size()));
    }
    return group_of_[mode];
  }
  /// N_g, the size of every mode of group `group` (no check: group < n_groups()).
  std::size_t group_shape(std::size_t group) const { return mode_shapes_[groups_[group].front()]; }
  /// Whether every mode is its own group (an ordinary T3).
  bool is_trivial() const { return groups_.size() == labels_.size(); }

  /// Checks that Tucker ranks fit the sharing: d entries, equal within every group.
  /// \param tucker_ranks n_0..n_{d-1}   \param where the caller's name, for messages
  /// **Throws:** DimensionMismatch naming both modes and ranks ("...: modes 0 and 2 share a factor but have Tucker
  /// ranks 3 and 4").
  void check_tucker_ranks(std::vector<std::size_t> const& tucker_ranks, std::string const& where) const {
    if (tucker_ranks.size() != labels_.size()) {
      throw DimensionMismatch(impl::concat(where, ": got ", tucker_ranks.size(),
                                           " Tucker ranks for a sharing of d = ", labels_.size(), " modes"));
    }
    for (auto const& group : groups_) {
      for (std::size_t i : group) {
        if (tucker_ranks[i] != tucker_ranks[group.front()]) {
          throw DimensionMismatch(impl::concat(where, ": modes ", group.front(), " and ", i,
                                               " share a factor but have Tucker ranks ", tucker_ranks[group.front()],
                                               " and ", tucker_ranks[i]));
        }
      }
    }
  }

  /// Checks that a T3 can carry the sharing: its mode shapes are the sharing's and its Tucker ranks are equal within
  /// every group (its factors need not be tied).
  /// \param x the T3   \param where the caller's name, for messages
  /// **Throws:** DimensionMismatch naming the shapes, or both modes and their ranks.
  template <class Scalar, class MemorySpace>
  void check_t3(TuckerTensorTrain<Scalar, MemorySpace> const& x, std::string const& where) const {
    if (x.mode_shapes() != mode_shapes_) {
      throw DimensionMismatch(impl::concat(where, ": the T3 has mode shapes ", impl::shape_string(x.mode_shapes()),
                                           ", the sharing is for ", impl::shape_string(mode_shapes_)));
    }
    check_tucker_ranks(x.tucker_ranks(), where);
  }

 private:
  std::vector<long long> labels_;
  std::vector<std::size_t> mode_shapes_;
  std::vector<std::vector<std::size_t>> groups_;
  std::vector<std::size_t> group_of_;
};

/// Whether the Tucker cores of `x` are tied as `sharing` asks: within every group, every mode holds the same View
/// (the same allocation, extents and strides). Factors that are equal but separately allocated are not tied (see
/// has_equal_tucker_factors).
/// \param x the T3   \param sharing the groups
/// \return true when every group's cores are one View; false also when the shapes do not fit the sharing
/// **Blocking:** no (compares Views, not values). **Throws:** nothing.
template <class Scalar, class MemorySpace>
bool has_tied_tucker_factors(TuckerTensorTrain<Scalar, MemorySpace> const& x, ModeSharing const& sharing) {
  if (x.n_modes() != sharing.n_modes() || x.mode_shapes() != sharing.mode_shapes()) return false;
  for (auto const& group : sharing.groups()) {
    auto const& first = x.tucker_core(group.front());
    for (std::size_t i : group) {
      auto const& u = x.tucker_core(i);
      if (u.data() != first.data() || u.extent(0) != first.extent(0) || u.extent(1) != first.extent(1) ||
          u.stride(0) != first.stride(0) || u.stride(1) != first.stride(1)) {
        return false;
      }
    }
  }
  return true;
}

/// Whether the Tucker cores of `x` are equal, entry by entry and bitwise, within every group of `sharing` (tied or
/// separately allocated, as after a copy or a file round trip).
/// \param space execution space for the copies to the host   \param x the T3   \param sharing the groups
/// \return true when every group's cores have the same shape and the same values; false also when the shapes do not
/// fit the sharing
/// **Blocking:** yes (copies the factors to the host and fences `space`). **Throws:** nothing beyond allocation
/// failures.
template <class ExecutionSpace, class Scalar, class MemorySpace>
bool has_equal_tucker_factors(ExecutionSpace const& space, TuckerTensorTrain<Scalar, MemorySpace> const& x,
                              ModeSharing const& sharing) {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "t3k::has_equal_tucker_factors: the first argument must be a Kokkos execution space instance");
  if (has_tied_tucker_factors(x, sharing)) return true;
  if (x.n_modes() != sharing.n_modes() || x.mode_shapes() != sharing.mode_shapes()) return false;
  using HostMatrix = Kokkos::View<Scalar**, Kokkos::LayoutRight, Kokkos::HostSpace>;
  auto host_copy = [&space](typename TuckerTensorTrain<Scalar, MemorySpace>::tucker_core_type const& u) {
    HostMatrix h(Kokkos::view_alloc(Kokkos::WithoutInitializing, "t3k::has_equal_tucker_factors::host"), u.extent(0),
                 u.extent(1));
    Kokkos::deep_copy(space, h, u);
    return h;
  };
  for (auto const& group : sharing.groups()) {
    auto const first = host_copy(x.tucker_core(group.front()));
    for (std::size_t i : group) {
      if (x.tucker_core(i).data() == x.tucker_core(group.front()).data()) continue;
      if (x.tucker_core(i).extent(0) != first.extent(0)) return false;
      auto const other = host_copy(x.tucker_core(i));
      space.fence();
      for (std::size_t e = 0; e < first.span(); ++e) {
        if (other.data()[e] != first.data()[e]) return false;
      }
    }
  }
  return true;
}

/// `x` with its Tucker cores tied as `sharing` asks: every mode of a group holds the View of the group's first mode
/// (no copy; the other modes' factors are dropped, not averaged). To bring a T3 whose group factors differ into the
/// shared format, use grouped_t3_svd, which finds the best common factor.
/// \param x the T3 (shallow copy; its TT cores are shared with the result)   \param sharing the groups
/// \return the tied T3 (has_tied_tucker_factors is true)
/// **Blocking:** no. **Throws:** DimensionMismatch when the mode shapes differ from the sharing's or the Tucker
/// ranks differ within a group (ModeSharing::check_t3).
template <class Scalar, class MemorySpace>
TuckerTensorTrain<Scalar, MemorySpace> tie_tucker_factors(TuckerTensorTrain<Scalar, MemorySpace> const& x,
                                                          ModeSharing const& sharing) {
  sharing.check_t3(x, "t3k::tie_tucker_factors");
  auto tucker = x.tucker_cores();
  for (auto const& group : sharing.groups()) {
    for (std::size_t i : group) tucker[i] = x.tucker_core(group.front());
  }
  return TuckerTensorTrain<Scalar, MemorySpace>(std::move(tucker), x.tt_cores());
}

}  // namespace t3k
