#pragma once
/// \file frame_shapes.hpp
/// The extents of a frame as plain numbers: everything the workspace layouts and the memory model need. Not API.

#include "t3k/core/orthogonal_frame.hpp"

#include <cstddef>
#include <vector>

namespace t3k {
namespace impl {

struct FrameShapes {
  std::vector<std::size_t> big_n;  ///< N_i
  std::vector<std::size_t> nu;     ///< nU_i
  std::vector<std::size_t> no;     ///< nO_i
  std::vector<std::size_t> rl;     ///< rL_0..rL_d
  std::vector<std::size_t> rr;     ///< rR_0..rR_d
  std::size_t d() const { return big_n.size(); }
};

template <class Scalar, class MemorySpace>
FrameShapes frame_shapes(OrthogonalFrame<Scalar, MemorySpace> const& frame) {
  return FrameShapes{frame.mode_shapes(), frame.up_ranks(), frame.outer_ranks(), frame.left_ranks(),
                     frame.right_ranks()};
}

}  // namespace impl
}  // namespace t3k
