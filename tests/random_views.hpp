#pragma once
// Random test data on a configuration's space: Views filled from a seeded normal generator, and probe stacks.

#include "test_devices.hpp"

#include "t3k/core/impl/host_random.hpp"

#include <cstdint>
#include <vector>

namespace t3k_test {

template <class C>
using Probe2 = Kokkos::View<typename C::scalar_type**, Kokkos::LayoutRight, typename C::memory_space>;
template <class C>
using Jets3 = Kokkos::View<typename C::scalar_type***, Kokkos::LayoutRight, typename C::memory_space>;
template <class C>
using Jets4 = Kokkos::View<typename C::scalar_type****, Kokkos::LayoutRight, typename C::memory_space>;

/// `v` filled with standard normal values of the generator seeded with `seed`.
template <class V>
V random_view(V v, std::uint64_t seed) {
  t3k::impl::HostNormalGenerator gen(seed);
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t e = 0; e < h.span(); ++e) h.data()[e] = typename V::value_type(gen.normal());
  Kokkos::deep_copy(v, h);
  return v;
}

/// One random (w, N_i) probe View per mode, seeds seed + i.
template <class C>
std::vector<Probe2<C>> probe_stack(std::vector<std::size_t> const& shapes, std::size_t w, std::uint64_t seed) {
  std::vector<Probe2<C>> out;
  for (std::size_t i = 0; i < shapes.size(); ++i)
    out.push_back(random_view(Probe2<C>("probe", w, shapes[i]), seed + i));
  return out;
}

}  // namespace t3k_test
