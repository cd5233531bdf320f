#pragma once
/// \file orthogonal_frame.hpp
/// The orthogonal frame of a T3 (docs/math.md): up-orthogonal Tucker cores U_i, left-orthogonal L_i,
/// right-orthogonal R_i and outer-orthogonal O_i TT cores. The frame fixes the tangent space at X.

#include "t3k/core/error.hpp"
#include "t3k/core/impl/kokkos_compat.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace t3k {

/// Frame cores, LayoutRight: U_i (nU_i, N_i); L_i (rL_i, nU_i, rL_{i+1}); R_i (rR_i, nU_i, rR_{i+1});
/// O_i (rL_i, nO_i, rR_{i+1}); rL_0 = rR_0 = rL_d = rR_d = 1. L_{d-1} and R_0 are the end cores (not orthogonal).
/// Optionally the centre factors S_i (nO_i, nU_i) with C_i[a,u,b] = sum_o O_i[a,o,b] S_i[o,u]; they are known when
/// the frame was built from a T3 and absent (empty vector) when it was read from a file.
template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class OrthogonalFrame {
 public:
  using scalar_type = Scalar;                                                    ///< float or double
  using memory_space = MemorySpace;                                              ///< where the cores live
  using matrix_type = Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace>;  ///< U_i and S_i
  using core_type = Kokkos::View<Scalar***, Kokkos::LayoutRight, MemorySpace>;   ///< L_i, R_i and O_i

  OrthogonalFrame() = default;

  /// **Throws:** DimensionMismatch naming the core and both shapes when the cores do not fit together.
  OrthogonalFrame(std::vector<matrix_type> up_tucker, std::vector<core_type> left_tt, std::vector<core_type> right_tt,
                  std::vector<core_type> outer_tt, std::vector<matrix_type> centre_tucker = {})
      : up_tucker_(std::move(up_tucker)),
        left_tt_(std::move(left_tt)),
        right_tt_(std::move(right_tt)),
        outer_tt_(std::move(outer_tt)),
        centre_tucker_(std::move(centre_tucker)) {
    validate();
  }

  std::size_t n_modes() const { return up_tucker_.size(); }                    ///< d
  matrix_type const& up_tucker(std::size_t i) const { return up_tucker_[i]; }  ///< U_i
  core_type const& left_tt(std::size_t i) const { return left_tt_[i]; }        ///< L_i
  core_type const& right_tt(std::size_t i) const { return right_tt_[i]; }      ///< R_i
  core_type const& outer_tt(std::size_t i) const { return outer_tt_[i]; }      ///< O_i
  /// S_i; only when has_centre().
  matrix_type const& centre_tucker(std::size_t i) const { return centre_tucker_[i]; }
  bool has_centre() const { return !centre_tucker_.empty(); }  ///< whether the centre factors S_i are known

  std::vector<std::size_t> mode_shapes() const { return extents_of(up_tucker_, 1); }  ///< N_0..N_{d-1}
  /// nU_i.
  std::vector<std::size_t> up_ranks() const { return extents_of(up_tucker_, 0); }
  /// nO_i.
  std::vector<std::size_t> outer_ranks() const { return extents_of(outer_tt_, 1); }
  /// rL_0..rL_d (d + 1 entries).
  std::vector<std::size_t> left_ranks() const {
    auto r = extents_of(left_tt_, 0);
    r.push_back(1);
    return r;
  }
  /// rR_0..rR_d (d + 1 entries).
  std::vector<std::size_t> right_ranks() const {
    auto r = extents_of(right_tt_, 2);
    r.insert(r.begin(), 1);
    return r;
  }

 private:
  template <class V>
  static std::vector<std::size_t> extents_of(std::vector<V> const& cores, int axis) {
    std::vector<std::size_t> e;
    for (auto const& c : cores) e.push_back(c.extent(axis));
    return e;
  }

  void validate() const {
    std::string const where = "t3k::OrthogonalFrame";
    std::size_t const d = up_tucker_.size();
    if (d == 0) throw InvalidArgument(where + ": a frame needs at least one mode");
    if (left_tt_.size() != d || right_tt_.size() != d || outer_tt_.size() != d ||
        (!centre_tucker_.empty() && centre_tucker_.size() != d)) {
      throw DimensionMismatch(impl::concat(where, ": got ", d, " up Tucker cores, ", left_tt_.size(), " left, ",
                                           right_tt_.size(), " right and ", outer_tt_.size(),
                                           " outer TT cores; all must number d"));
    }
    for (std::size_t i = 0; i < d; ++i) {
      std::size_t const nu = up_tucker_[i].extent(0);
      std::size_t const rl = i == 0 ? 1 : left_tt_[i - 1].extent(2);
      std::size_t const rl1 = i + 1 == d ? 1 : left_tt_[i + 1].extent(0);
      std::size_t const rr = i == 0 ? 1 : right_tt_[i - 1].extent(2);
      std::size_t const rr1 = i + 1 == d ? 1 : right_tt_[i + 1].extent(0);
      std::string const core = std::to_string(i);
      impl::check_shape(where, "left TT core " + core, left_tt_[i], {rl, nu, rl1});
      impl::check_shape(where, "right TT core " + core, right_tt_[i], {rr, nu, rr1});
      impl::check_shape(where, "outer TT core " + core, outer_tt_[i], {rl, outer_tt_[i].extent(1), rr1});
      if (!centre_tucker_.empty()) {
        impl::check_shape(where, "centre Tucker factor " + core, centre_tucker_[i], {outer_tt_[i].extent(1), nu});
      }
    }
  }

  std::vector<matrix_type> up_tucker_;
  std::vector<core_type> left_tt_, right_tt_, outer_tt_;
  std::vector<matrix_type> centre_tucker_;
};

}  // namespace t3k
