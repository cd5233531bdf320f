#pragma once
/// \file view_utils.hpp
/// Small helpers on Views shared by the whole library (not API).

#include "t3k/core/impl/kokkos_compat.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace t3k {
namespace impl {

/// A fully overwritten allocation: no initialization kernel, labelled, fenced on `space` only by the caller.
template <class ViewType, class ExecutionSpace, class... Extents>
ViewType allocate_uninitialized(ExecutionSpace const& space, std::string const& label, Extents... extents) {
  return ViewType(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label), extents...);
}

/// A zero-initialized allocation whose initialization runs on `space`.
template <class ViewType, class ExecutionSpace, class... Extents>
ViewType allocate_zeroed(ExecutionSpace const& space, std::string const& label, Extents... extents) {
  ViewType v(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label), extents...);
  Kokkos::deep_copy(space, v, typename ViewType::non_const_value_type(0));
  return v;
}

/// Host copy of a View (a new allocation, never an alias, so callers may modify it). The allocation is not
/// initialized: that would be a parallel region of its own.
template <class ViewType>
auto host_copy(ViewType const& v) {
  typename ViewType::HostMirror h(Kokkos::view_alloc(Kokkos::WithoutInitializing, "t3k::host_copy"), v.layout());
  Kokkos::deep_copy(h, v);
  return h;
}

/// Copy of a host View into `MemorySpace` (contiguous LayoutRight both sides, so the copy is legal on GPUs).
template <class MemorySpace, class ExecutionSpace, class HostView>
auto device_copy(ExecutionSpace const& space, HostView const& h, std::string const& label) {
  using DeviceView = Kokkos::View<typename HostView::non_const_data_type, Kokkos::LayoutRight, MemorySpace>;
  DeviceView d(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label), h.layout());
  Kokkos::deep_copy(space, d, h);
  return d;
}

/// Product of extents, as the element count of a contiguous block.
inline std::size_t product(std::vector<std::size_t> const& extents) {
  std::size_t p = 1;
  for (auto e : extents) p *= e;
  return p;
}

inline std::size_t max_element_or(std::vector<std::size_t> const& v, std::size_t fallback) {
  std::size_t m = fallback;
  for (auto e : v) m = e > m ? e : m;
  return m;
}

}  // namespace impl
}  // namespace t3k
