#pragma once
/// \file file_safety.hpp
/// What to check before reading or writing a file a user named (the t3k tool checks every one), and how to write
/// outputs so that nothing the user has is lost or overwritten by accident.
///
/// Inputs must be regular files (a FIFO would block forever, a device would read without end). Outputs are written
/// to a temporary file next to the target, created exclusively under an unpredictable name (never through a
/// symbolic link), and renamed onto the target when complete; temporaries left by a killed run of the same output
/// are removed by the next one. A character device (such as /dev/null) is written through directly; a directory,
/// FIFO, socket or block device is refused. Memory checks compare a size computed in checked arithmetic with the
/// memory the system reports available, before anything large is allocated.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace t3k {
namespace io {

/// Checks that `path` names a readable regular file (symbolic links followed). `what` names it in the message
/// ("--in", "problem.data.file"). **Throws:** FileError.
void require_regular_input(std::string const& path, std::string const& what);

/// How an output path is written.
enum class OutputTarget {
  replace,       ///< no file or a regular file: temporary file, then rename onto the path
  write_through  ///< a character device (such as /dev/null): written directly
};

/// Classifies an output path (symbolic links followed). **Throws:** FileError naming `what` and the path for a
/// directory, FIFO, socket or block device.
OutputTarget output_target(std::string const& path, std::string const& what);

/// Whether `a` and `b` are the same existing file (same device and inode).
bool same_file(std::string const& a, std::string const& b);

/// A fresh temporary name next to `path`: "<path>.tmp-<pid>-<12 random letters and digits>".
std::string temporary_name(std::string const& path);

/// Removes temporaries of `path` left by earlier runs: regular files (not links) of this user named
/// "<path>.tmp-<pid>" or "<path>.tmp-<pid>-<12 characters>" whose process is gone or that are over a day old.
void remove_stale_temporaries(std::string const& path);

/// Writes `text` to `path`: through a character device directly, else through an exclusively created temporary
/// file renamed onto `path`. **Throws:** FileError naming `path`.
void write_text_file(std::string const& path, std::string const& text);

/// Opens `path` for appending lines (`truncate`: start empty), never through a symbolic link, never blocking on a
/// FIFO. Returns a stdio stream. **Throws:** FileError naming `what` and the path.
std::FILE* open_log_file(std::string const& path, bool truncate, std::string const& what);

/// Bytes of memory available for new allocations (MemAvailable of /proc/meminfo, else free physical pages).
std::uint64_t available_memory_bytes();

/// a * b, or empty when it exceeds 2^64 - 1.
std::optional<std::uint64_t> checked_product(std::uint64_t a, std::uint64_t b);
/// a + b, or empty when it exceeds 2^64 - 1.
std::optional<std::uint64_t> checked_sum(std::uint64_t a, std::uint64_t b);

/// "12.0 GiB (12884901888 bytes)", or "more than 2^64 bytes" for an empty size.
std::string bytes_text(std::optional<std::uint64_t> bytes);

/// Empty when `bytes` fits available_memory_bytes(); else a message "needs B, but only A are available".
std::optional<std::string> memory_shortfall(std::optional<std::uint64_t> bytes);

}  // namespace io
}  // namespace t3k
