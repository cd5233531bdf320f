#pragma once
// The T3 shapes the tests share: one case type, and the list of corners every algorithm on T3s must handle. A test
// that needs more (wide ranks, larger d, minimal ranks) appends its own cases of the same type.

#include "t3k/core/error.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace t3k_test {

/// Mode sizes N_i, Tucker ranks n_i and TT ranks r_0..r_d of one T3.
struct T3ShapeCase {
  std::vector<std::size_t> big_n, n, r;
};

/// Ragged ranks, boundary TT ranks != 1, n_i > N_i, size-1 modes, rank-1 bonds, d = 1, 2, 3, 4 and 5.
inline std::vector<T3ShapeCase> t3_shape_cases() {
  return {{{4, 5, 3}, {3, 2, 4}, {1, 2, 3, 1}},
          {{2, 3, 1, 4}, {3, 1, 1, 2}, {2, 3, 1, 2, 3}},
          {{5}, {2}, {1, 1}},
          {{3}, {4}, {2, 3}},
          {{3, 4}, {2, 3}, {1, 1, 1}},
          {{3, 4}, {2, 3}, {1, 2, 1}},
          {{2, 3, 2, 3, 2}, {2, 2, 1, 3, 2}, {1, 2, 3, 2, 2, 1}}};
}

/// The case as failure messages name it: "N = [4, 5, 3], n = [3, 2, 4], r = [1, 2, 3, 1]".
inline std::string describe(T3ShapeCase const& c) {
  return "N = " + t3k::impl::shape_string(c.big_n) + ", n = " + t3k::impl::shape_string(c.n) +
         ", r = " + t3k::impl::shape_string(c.r);
}

}  // namespace t3k_test
