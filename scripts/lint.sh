#!/usr/bin/env bash
# The Kokkos 3.4 / 4.x portability lint: tokens that exist in only one of the two (or changed meaning) may appear
# only in core/impl/kokkos_compat.hpp, which holds every difference between them (docs/development.md).
# Exits 1 listing every offending line.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
pattern='KOKKOS_CLASS_LAMBDA|Kokkos::Experimental::|Kokkos::printf|is_view_v|ScopedRegion|\brank\(\)|\bRangePolicy\(|\bTeamPolicy\(|\bMDRangePolicy\(|fence\("|\bvolatile\b|#include <impl/'
if git ls-files '*.hpp' '*.cpp' '*.h' | grep -v '^core/impl/kokkos_compat.hpp$' | xargs grep -nE "$pattern"; then
  echo "[lint] the lines above use tokens that break Kokkos 3.4 or 4.x; wrap them in core/impl/kokkos_compat.hpp" >&2
  exit 1
fi
echo "[lint] portability lint passed"
