# `t3k fit` (drivers/fit_*.cpp): the YAML-driven fitting driver, as a static library that the t3k executable and the
# tests link. Included from drivers/CMakeLists.txt after t3k_collective and t3k_cli exist.

# yaml-cpp's CMake package names its target yaml-cpp (Debian's 0.7) or yaml-cpp::yaml-cpp (0.8 and later).
find_package(yaml-cpp CONFIG REQUIRED)
if(TARGET yaml-cpp::yaml-cpp)
  set(_t3k_yaml_target yaml-cpp::yaml-cpp)
else()
  set(_t3k_yaml_target yaml-cpp)
endif()

add_library(t3k_fit STATIC errors.hpp exit_codes.hpp exit_codes.cpp fit_config.hpp fit_config_internal.hpp fit_config.cpp
  fit_config_parse.cpp fit_config_emit.cpp fit_config_fingerprint.cpp
  fit_types.hpp device_copies.hpp fit_setup.hpp fit_setup.cpp fit_checkpoint.hpp fit_checkpoint.cpp fit_progress.hpp
  fit_progress.cpp fit_outputs.hpp fit_outputs.cpp fit_run.hpp fit_run.cpp fit_command.hpp fit_command.cpp)
target_link_libraries(t3k_fit PUBLIC t3k_collective t3k_optimizer_keys PRIVATE ${_t3k_yaml_target} CLI11::CLI11 fmt::fmt t3k_warnings)
target_link_libraries(t3k_cli PRIVATE t3k_fit)
