#pragma once
/// \file device_copies.hpp
/// Copies between the host Views the HDF5 layer reads and writes and the default memory space the algorithms run
/// in. On a host backend no copy is made: the View itself is returned.

#include <Kokkos_Core.hpp>

#include <vector>

namespace t3k {
namespace cli {

/// A contiguous LayoutRight View of `host` in the default memory space. **Blocking:** yes.
template <class HostView>
Kokkos::View<typename HostView::non_const_data_type, Kokkos::LayoutRight, Kokkos::DefaultExecutionSpace::memory_space>
to_device(HostView const& host) {
  return Kokkos::create_mirror_view_and_copy(Kokkos::DefaultExecutionSpace::memory_space{}, host);
}

/// to_device of each View of `host`. **Blocking:** yes.
template <class HostView>
auto to_device(std::vector<HostView> const& host) {
  std::vector<decltype(to_device(host.front()))> out;
  for (auto const& h : host) out.push_back(to_device(h));
  return out;
}

/// A host View of `view`. **Blocking:** yes.
template <class View>
Kokkos::View<typename View::non_const_data_type, Kokkos::LayoutRight, Kokkos::HostSpace> to_host(View const& view) {
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, view);
}

}  // namespace cli
}  // namespace t3k
