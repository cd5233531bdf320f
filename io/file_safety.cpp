/// \file file_safety.cpp
/// POSIX file checks and exclusive temporaries behind file_safety.hpp.

#include "t3k/io/file_safety.hpp"

#include "t3k/io/hdf5_io.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <ctime>
#include <fstream>
#include <random>
#include <sstream>

namespace t3k {
namespace io {
namespace {

std::string errno_text(int error) { return std::strerror(error); }

char const* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISCHR(mode)) return "a character device";
  return "not a regular file";
}

void split_path(std::string const& path, std::string& directory, std::string& name) {
  std::size_t const slash = path.rfind('/');
  if (slash == std::string::npos) {
    directory = ".";
    name = path;
  } else {
    directory = slash == 0 ? "/" : path.substr(0, slash);
    name = path.substr(slash + 1);
  }
}

bool all_digits(std::string const& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

bool all_alphanumeric(std::string const& s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) return false;
  return true;
}

constexpr std::size_t random_letters = 12;

/// Writes all of `text` to `fd`. Returns false (errno set) on failure.
bool write_all(int fd, char const* data, std::size_t size) {
  while (size > 0) {
    ssize_t const n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= std::size_t(n);
  }
  return true;
}

}  // namespace

void require_regular_input(std::string const& path, std::string const& what) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) {
    throw FileError(what + ": cannot open input file '" + path + "': " + errno_text(errno));
  }
  if (!S_ISREG(info.st_mode)) {
    throw FileError(what + ": cannot read input file '" + path + "': it is " + kind_of(info.st_mode) +
                    ", not a regular file");
  }
}

OutputTarget output_target(std::string const& path, std::string const& what) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) return OutputTarget::replace;  // absent (or a dangling link: replaced)
  if (S_ISREG(info.st_mode)) return OutputTarget::replace;
  if (S_ISCHR(info.st_mode)) return OutputTarget::write_through;
  throw FileError(what + ": cannot write output '" + path + "': it is " + kind_of(info.st_mode) +
                  "; name a regular file (or a character device such as /dev/null)");
}

bool same_file(std::string const& a, std::string const& b) {
  struct stat sa, sb;
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

std::string temporary_name(std::string const& path) {
  static char const letters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937_64 gen([] {
    std::random_device device;
    std::seed_seq seq{device(), device(), device(), device(), unsigned(::getpid()), unsigned(std::time(nullptr))};
    std::mt19937_64 g(seq);
    return g;
  }());
  std::string suffix;
  for (std::size_t k = 0; k < random_letters; ++k) suffix += letters[gen() % (sizeof letters - 1)];
  return path + ".tmp-" + std::to_string(long(::getpid())) + "-" + suffix;
}

void remove_stale_temporaries(std::string const& path) {
  std::string directory, name;
  split_path(path, directory, name);
  std::string const prefix = name + ".tmp-";
  DIR* dir = ::opendir(directory.c_str());
  if (dir == nullptr) return;
  int const dir_fd = ::dirfd(dir);
  std::time_t const now = std::time(nullptr);
  while (dirent const* entry = ::readdir(dir)) {
    std::string const entry_name = entry->d_name;
    if (entry_name.compare(0, prefix.size(), prefix) != 0) continue;
    std::string const rest = entry_name.substr(prefix.size());
    std::size_t const dash = rest.find('-');
    std::string const pid_text = rest.substr(0, dash);
    if (!all_digits(pid_text) || pid_text.size() > 9) continue;
    if (dash != std::string::npos) {
      std::string const letters = rest.substr(dash + 1);
      if (letters.size() != random_letters || !all_alphanumeric(letters)) continue;
    }
    struct stat info;
    if (::fstatat(dir_fd, entry->d_name, &info, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(info.st_mode) || info.st_uid != ::geteuid()) continue;
    pid_t const pid = pid_t(std::stol(pid_text));
    bool const gone = pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH;
    bool const old = now - info.st_mtime > 24 * 3600;
    if (gone || old) ::unlinkat(dir_fd, entry->d_name, 0);
  }
  ::closedir(dir);
}

void write_text_file(std::string const& path, std::string const& text) {
  if (output_target(path, path) == OutputTarget::write_through) {
    int const fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) throw FileError("cannot open '" + path + "' for writing: " + errno_text(errno));
    bool const ok = write_all(fd, text.data(), text.size());
    int const error = errno;
    ::close(fd);
    if (!ok) throw FileError("cannot write '" + path + "': " + errno_text(error));
    return;
  }
  remove_stale_temporaries(path);
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    tmp = temporary_name(path);
    // O_EXCL: a name that exists (even as a link) is never opened, so no link is ever followed.
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) throw FileError("cannot create a temporary file for '" + path + "': " + errno_text(errno));
  bool ok = write_all(fd, text.data(), text.size());
  int error = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    error = errno;
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    throw FileError("cannot write '" + tmp + "' (for '" + path + "'): " + errno_text(error));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    error = errno;
    ::unlink(tmp.c_str());
    throw FileError("cannot rename '" + tmp + "' to '" + path + "': " + errno_text(error));
  }
}

std::FILE* open_log_file(std::string const& path, bool truncate, std::string const& what) {
  // O_NONBLOCK: opening a FIFO without a reader fails at once instead of waiting; the type is checked next.
  int const fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0666);
  if (fd < 0) {
    int const error = errno;
    throw FileError(what + ": cannot open '" + path +
                    "' for writing: " + (error == ELOOP ? std::string("it is a symbolic link") : errno_text(error)));
  }
  struct stat info;
  if (::fstat(fd, &info) != 0 || !(S_ISREG(info.st_mode) || S_ISCHR(info.st_mode))) {
    ::close(fd);
    throw FileError(what + ": cannot write '" + path + "': it is " + kind_of(info.st_mode) +
                    "; name a regular file (or a character device such as /dev/null)");
  }
  int const flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  if (truncate && S_ISREG(info.st_mode) && ::ftruncate(fd, 0) != 0) {
    int const error = errno;
    ::close(fd);
    throw FileError(what + ": cannot truncate '" + path + "': " + errno_text(error));
  }
  std::FILE* file = ::fdopen(fd, "a");
  if (file == nullptr) {
    ::close(fd);
    throw FileError(what + ": cannot open '" + path + "' for writing");
  }
  return file;
}

std::uint64_t available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream fields(line.substr(13));
      std::uint64_t kib = 0;
      if (fields >> kib) return kib * 1024;
    }
  }
  long const pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) return std::uint64_t(pages) * std::uint64_t(page);
  return ~std::uint64_t(0);  // unknown: do not refuse
}

std::optional<std::uint64_t> checked_product(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

std::optional<std::uint64_t> checked_sum(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

std::string bytes_text(std::optional<std::uint64_t> bytes) {
  if (!bytes) return "more than 2^64 bytes";
  char const* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = double(*bytes);
  int u = 0;
  while (value >= 1024 && u < 6) {
    value /= 1024;
    ++u;
  }
  char buffer[96];
  if (u == 0) {
    std::snprintf(buffer, sizeof buffer, "%" PRIu64 " bytes", *bytes);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.1f %s (%" PRIu64 " bytes)", value, units[u], *bytes);
  }
  return buffer;
}

std::optional<std::string> memory_shortfall(std::optional<std::uint64_t> bytes) {
  std::uint64_t const available = available_memory_bytes();
  if (bytes && *bytes <= available) return std::nullopt;
  return "needs " + bytes_text(bytes) + " of memory, but only " + bytes_text(available) + " are available";
}

}  // namespace io
}  // namespace t3k
