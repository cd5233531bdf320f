#pragma once
/// \file error.hpp
/// The small error taxonomy of T3K: user errors throw, internal invariants assert (debug builds only).

#include <cassert>
#include <cstddef>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace t3k {

/// A user input that is invalid on its own (a negative rank, an unknown option, a zero-sized mode).
class InvalidArgument : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Shapes of user inputs that do not agree with each other; the message names both shapes.
class DimensionMismatch : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace impl {

/// "[3 x 4 x 2]": the form every shape takes in an error message.
inline std::string shape_string(std::vector<std::size_t> const& extents) {
  std::ostringstream out;
  out << '[';
  for (std::size_t k = 0; k < extents.size(); ++k) out << (k ? " x " : "") << extents[k];
  out << ']';
  return out.str();
}

/// The shape of any View as a vector of extents.
template <class View>
std::vector<std::size_t> view_shape(View const& v) {
  std::vector<std::size_t> extents(View::rank);
  for (std::size_t k = 0; k < extents.size(); ++k) extents[k] = v.extent(k);
  return extents;
}

/// Throws DimensionMismatch "<where>: <what> has shape [..], expected [..]" unless the shapes agree.
template <class View>
void check_shape(std::string const& where, std::string const& what, View const& v,
                 std::vector<std::size_t> const& expected) {
  auto const actual = view_shape(v);
  if (actual != expected) {
    throw DimensionMismatch(where + ": " + what + " has shape " + shape_string(actual) + ", expected " +
                            shape_string(expected));
  }
}

template <class... Parts>
std::string concat(Parts const&... parts) {
  std::ostringstream out;
  (void)std::initializer_list<int>{((out << parts), 0)...};
  return out.str();
}

}  // namespace impl
}  // namespace t3k

/// Internal invariant; compiled out of release builds. Never for user input.
#define T3K_DEBUG_ASSERT(condition) assert(condition)
