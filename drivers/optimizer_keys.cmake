# t3k_optimizer_keys: the optimizer key tables (optimizer_keys.hpp) that `t3k fit` and the Python module's fit both
# check options against. It needs the library's headers only (no HDF5, CLI11 or yaml-cpp), so the Python module
# links it in builds without the tool. Included from the top-level CMakeLists.txt.
add_library(t3k_optimizer_keys STATIC ${CMAKE_CURRENT_LIST_DIR}/optimizer_keys.hpp
  ${CMAKE_CURRENT_LIST_DIR}/optimizer_keys.cpp)
target_link_libraries(t3k_optimizer_keys PUBLIC t3k::t3k PRIVATE t3k_warnings)
# The shared Python module holds it.
set_target_properties(t3k_optimizer_keys PROPERTIES POSITION_INDEPENDENT_CODE ON)
