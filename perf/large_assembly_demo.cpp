// The chunking demonstration: a J^T whose unchunked workspace the memory model puts far beyond this machine's memory
// runs under chunk_size auto within a few GB, and its result equals a smaller chunking bit for bit.
//   t3k_large_assembly [W]    (default W = 10^6; d = 12, N = n = 2, TT ranks up to 64, K = 3, double)
// Prints the model's peaks, the auto chunk, the measured peak bytes and time of each run, and whether the two
// gradients are bitwise equal. Exit 1 if they are not.
#include "t3k/algorithms/estimate_chunk_size.hpp"
#include "t3k/algorithms/orthogonal_frame.hpp"
#include "t3k/algorithms/probe_derivatives_transpose.hpp"
#include "t3k/algorithms/random_t3.hpp"
#include "t3k/core/impl/host_random.hpp"
#include "t3k/core/memory_tracking.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  using Space = Kokkos::DefaultExecutionSpace;
  using Mem = Space::memory_space;
  Space space;
  std::size_t const w = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  std::size_t const d = 12, order = 3;
  std::vector<std::size_t> const big_n(d, 2), n(d, 2), r{1, 2, 4, 8, 16, 32, 64, 32, 16, 8, 4, 2, 1};
  constexpr std::size_t block = t3k::reduction_block_size_for<Space>();
  auto const model = t3k::transpose_memory_model(big_n, n, r, order, 1, true, t3k::ScalarType::float64, block);
  std::size_t const chunk = t3k::estimate_chunk_size(big_n, n, r, order, w, 1, 1, t3k::ScalarType::float64, block);
  std::size_t const reference = chunk / 3 + 1;  // a smaller chunking that does not divide the auto one
  std::printf("W = %zu; model peak (inputs + J^T): chunk none %.1f GB, auto (%zu) %.2f GB, reference (%zu) %.2f GB\n",
              w, model.peak_bytes(w, w) / 1e9, chunk, model.peak_bytes(w, chunk) / 1e9, reference,
              model.peak_bytes(w, reference) / 1e9);
  auto x = t3k::random_t3<double>(space, big_n, n, r, 1);
  auto frame = t3k::orthogonal_frame(space, x);
  std::vector<Kokkos::View<double**, Kokkos::LayoutRight, Mem>> ww, pp;
  std::vector<Kokkos::View<double***, Kokkos::LayoutRight, Mem>> res;
  t3k::impl::HostNormalGenerator gen(2);
  auto fill = [&](auto v) {
    auto h = Kokkos::create_mirror_view(v);
    for (std::size_t e = 0; e < h.span(); ++e) h.data()[e] = gen.normal();
    Kokkos::deep_copy(v, h);
    return v;
  };
  for (std::size_t i = 0; i < d; ++i) {
    ww.push_back(fill(Kokkos::View<double**, Kokkos::LayoutRight, Mem>("w", w, big_n[i])));
    pp.push_back(fill(Kokkos::View<double**, Kokkos::LayoutRight, Mem>("p", w, big_n[i])));
    res.push_back(fill(Kokkos::View<double***, Kokkos::LayoutRight, Mem>("r", w, order + 1, big_n[i])));
  }
  space.fence();
  auto run = [&](t3k::ChunkSize c, char const* name) {
    t3k::AllocationTracker tracker;
    auto t0 = std::chrono::steady_clock::now();
    auto g = t3k::probe_derivatives_transpose(space, frame, ww, pp, res, {true, c});
    space.fence();
    double const seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%-9s chunk %-6s measured J^T peak %.3f GB (model %.3f GB), %.1f s\n", name, c.to_string().c_str(),
                tracker.peak(Mem::name()) / 1e9, model.allocated_bytes(w, c.rows()) / 1e9, seconds);
    return g;
  };
  auto a = run(t3k::ChunkSize::of(chunk), "auto");
  auto b = run(t3k::ChunkSize::of(reference), "reference");
  bool equal = true;
  for (std::size_t i = 0; i < d; ++i) {
    auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a.tt[i]);
    auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b.tt[i]);
    auto va = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a.tucker[i]);
    auto vb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b.tucker[i]);
    equal = equal && std::memcmp(ha.data(), hb.data(), ha.span() * sizeof(double)) == 0 &&
            std::memcmp(va.data(), vb.data(), va.span() * sizeof(double)) == 0;
  }
  std::printf("gradients bitwise equal: %s\n", equal ? "yes" : "NO");
  return equal ? 0 : 1;
}
