# Finds Kokkos, Kokkos Kernels and LAPACK and absorbs their packaging quirks, so that the rest of the build sees
# exactly two targets: t3k::kokkos (Kokkos core, containers and Kokkos Kernels) and t3k::lapack.
#
# Kokkos is searched in this order:
#   1. a user's install given by -DKokkos_ROOT (Kokkos 4.x with OpenMP/CUDA/HIP, exporting Kokkos::kokkos);
#   2. the OpenMP+Serial build that scripts/setup.sh makes from Debian's source package (T3K_KOKKOS_PREFIX);
#   3. Debian's prebuilt Serial-only Trilinos packages (libtrilinos-kokkos-dev), whose CMake config is broken:
#      Kokkos::kokkos points at a nonexistent /usr/lib/include, there is no Kokkos::kokkoskernels, and the
#      trilinos_kokkos* targets carry no include directories.

set(T3K_KOKKOS_PREFIX "$ENV{HOME}/.cache/t3k/kokkos-3.4.01-openmp-blas" CACHE PATH
    "Prefix of the OpenMP+Serial Kokkos built by scripts/setup.sh (searched when Kokkos_ROOT is not given)")
option(T3K_USE_SYSTEM_KOKKOS "Use Debian's prebuilt Serial-only Trilinos Kokkos even if another one is found" OFF)

add_library(t3k_kokkos INTERFACE)

set(_t3k_kokkos_flavour "")
if(NOT T3K_USE_SYSTEM_KOKKOS)
  if(DEFINED Kokkos_ROOT OR DEFINED ENV{Kokkos_ROOT})
    find_package(Kokkos REQUIRED)
    set(_t3k_kokkos_flavour "user install (Kokkos_ROOT)")
  elseif(EXISTS "${T3K_KOKKOS_PREFIX}/lib/cmake/Kokkos/KokkosConfig.cmake")
    find_package(Kokkos REQUIRED PATHS "${T3K_KOKKOS_PREFIX}" NO_DEFAULT_PATH)
    set(_t3k_kokkos_flavour "OpenMP+Serial build from Debian's source package (${T3K_KOKKOS_PREFIX})")
  endif()
endif()

if(_t3k_kokkos_flavour)
  # Kokkos Kernels is optional for the library (its kernels are written on Kokkos core); the benchmarks use it
  # for the dense-GEMM reference when it is there.
  # Only next to the Kokkos found: a Kokkos Kernels built against another Kokkos (say the setup prefix's 3.4 next to a
  # user's 4.x) does not compile against this one.
  if(_t3k_kokkos_flavour STREQUAL "user install (Kokkos_ROOT)")
    # A Kokkos Kernels installed in its own prefix is named with KokkosKernels_ROOT (it must be built against this
    # Kokkos).
    set(_t3k_kk_hints "${KokkosKernels_ROOT}" "$ENV{KokkosKernels_ROOT}" "${Kokkos_DIR}/../KokkosKernels"
        "${Kokkos_ROOT}" "$ENV{Kokkos_ROOT}")
  else()
    set(_t3k_kk_hints "${Kokkos_DIR}/../KokkosKernels" "${T3K_KOKKOS_PREFIX}")
  endif()
  find_package(KokkosKernels QUIET HINTS ${_t3k_kk_hints} NO_DEFAULT_PATH)
  target_link_libraries(t3k_kokkos INTERFACE Kokkos::kokkos)
  if(TARGET Kokkos::kokkoskernels)
    target_link_libraries(t3k_kokkos INTERFACE Kokkos::kokkoskernels)
    target_compile_definitions(t3k_kokkos INTERFACE T3K_HAVE_KOKKOSKERNELS)
  else()
    message(STATUS "T3K: Kokkos Kernels not found next to Kokkos; building without it")
  endif()
  set(T3K_KOKKOS_IS_DEBIAN_PREBUILT OFF)
else()
  # Debian's prebuilt Trilinos Kokkos 3.4.01 (Serial only).
  find_package(Kokkos REQUIRED CONFIG PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/cmake/Kokkos)
  find_library(_t3k_kk_lib NAMES trilinos_kokkoskernels REQUIRED)
  find_library(_t3k_kcore_lib NAMES trilinos_kokkoscore REQUIRED)
  find_library(_t3k_kcont_lib NAMES trilinos_kokkoscontainers REQUIRED)
  target_include_directories(t3k_kokkos SYSTEM INTERFACE ${Kokkos_INCLUDE_DIRS})
  target_link_libraries(t3k_kokkos INTERFACE ${_t3k_kk_lib} ${_t3k_kcont_lib} ${_t3k_kcore_lib} dl)
  target_compile_definitions(t3k_kokkos INTERFACE T3K_HAVE_KOKKOSKERNELS)
  set(_t3k_kokkos_flavour "Debian prebuilt Trilinos packages (Serial only)")
  set(T3K_KOKKOS_IS_DEBIAN_PREBUILT ON)
endif()
add_library(t3k::kokkos ALIAS t3k_kokkos)

# Report the version and the backends from the configuration header itself: it is the one source all three
# flavours agree on (Debian's package does not set Kokkos_DEVICES).
find_file(_t3k_kokkos_config_h NAMES KokkosCore_config.h
  HINTS ${Kokkos_INCLUDE_DIRS} "${Kokkos_DIR}/../../../include" "${T3K_KOKKOS_PREFIX}/include"
  NO_DEFAULT_PATH)
if(NOT _t3k_kokkos_config_h)
  get_target_property(_t3k_kinc Kokkos::kokkoscore INTERFACE_INCLUDE_DIRECTORIES)
  find_file(_t3k_kokkos_config_h NAMES KokkosCore_config.h HINTS ${_t3k_kinc} NO_DEFAULT_PATH)
endif()
set(T3K_KOKKOS_BACKENDS "")
if(_t3k_kokkos_config_h)
  file(STRINGS "${_t3k_kokkos_config_h}" _t3k_backend_lines REGEX "^#define KOKKOS_ENABLE_(SERIAL|OPENMP|THREADS|CUDA|HIP|SYCL)$")
  foreach(_line IN LISTS _t3k_backend_lines)
    string(REGEX REPLACE "^#define KOKKOS_ENABLE_" "" _b "${_line}")
    list(APPEND T3K_KOKKOS_BACKENDS "${_b}")
  endforeach()
endif()
message(STATUS "T3K: Kokkos ${Kokkos_VERSION} from ${_t3k_kokkos_flavour}; backends: ${T3K_KOKKOS_BACKENDS}")

# Host LAPACK (QR and SVD of small cores). OpenBLAS carries LAPACK on Debian.
set(BLA_VENDOR OpenBLAS)
find_package(LAPACK)
if(NOT LAPACK_FOUND)
  unset(BLA_VENDOR)
  find_package(LAPACK REQUIRED)
endif()
add_library(t3k_lapack INTERFACE)
# With Kokkos' OpenMP backend, prefer Debian's OpenMP build of OpenBLAS (libopenblas0-openmp, which scripts/setup.sh
# installs) over the default pthreads build: its GEMMs run on the same libgomp threads as Kokkos, whereas the
# pthreads build keeps a second pool whose threads spin against Kokkos' after every call (measured: J^T on two
# threads up to 3x slower with many small GEMMs; docs/performance.md). Its directory goes on the RUNPATH of every
# program linked with t3k (installed ones too), so every libopenblas.so.0 of the process (Kokkos Kernels' too) is it.
# A linker option rather than the library's full path: CMake would warn that the directory hides the default
# libopenblas.so.0, which is the point.
set(T3K_OPENMP_OPENBLAS "/usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp/libopenblas.so.0" CACHE FILEPATH
    "OpenMP build of OpenBLAS used when Kokkos has the OpenMP backend (empty: the system default BLAS)")
if("OPENMP" IN_LIST T3K_KOKKOS_BACKENDS AND T3K_OPENMP_OPENBLAS AND EXISTS "${T3K_OPENMP_OPENBLAS}")
  get_filename_component(_t3k_openmp_openblas_dir "${T3K_OPENMP_OPENBLAS}" DIRECTORY)
  target_link_options(t3k_lapack INTERFACE "LINKER:-rpath,${_t3k_openmp_openblas_dir}")
  message(STATUS "T3K: BLAS/LAPACK from the OpenMP build of OpenBLAS (${T3K_OPENMP_OPENBLAS})")
endif()
target_link_libraries(t3k_lapack INTERFACE ${LAPACK_LIBRARIES})
add_library(t3k::lapack ALIAS t3k_lapack)
