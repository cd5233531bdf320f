#pragma once
/// \file process_threads.hpp
/// The threads of this process as Linux lists them (/proc/self/task): their ids, and whether one is runnable. Not
/// API. Elsewhere there are none to list.

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#if defined(__linux__)
#include <dirent.h>
#endif

namespace t3k::impl {

/// The Linux thread ids of this process's threads now, or none where they cannot be listed.
inline std::vector<int> process_thread_ids() {
  std::vector<int> ids;
#if defined(__linux__)
  if (DIR* tasks = ::opendir("/proc/self/task")) {
    while (dirent const* entry = ::readdir(tasks)) {
      if (entry->d_name[0] >= '0' && entry->d_name[0] <= '9') ids.push_back(std::atoi(entry->d_name));
    }
    ::closedir(tasks);
  }
#endif
  return ids;
}

/// Whether this process's thread `id` is runnable (running or waiting for a core): the state field of
/// /proc/self/task/<id>/stat. False where it cannot be read (the thread ended meanwhile).
inline bool process_thread_runnable(int id) {
#if defined(__linux__)
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%d/stat", id);
  std::FILE* f = std::fopen(path, "r");
  if (f == nullptr) return false;
  char line[512];
  std::size_t const n = std::fread(line, 1, sizeof line - 1, f);
  std::fclose(f);
  line[n] = '\0';
  // "tid (name) S ...": the name may hold spaces and parentheses, the state follows the last ')'.
  char const* close = std::strrchr(line, ')');
  return close != nullptr && close[1] == ' ' && close[2] == 'R';
#else
  (void)id;
  return false;
#endif
}

}  // namespace t3k::impl
