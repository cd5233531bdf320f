#pragma once
/// \file fit_checkpoint.hpp
/// checkpoint.h5 of `t3k fit` (docs/file-format.md): the optimizer's state, written every
/// output.checkpoint_every iterations and read by --resume.
///
/// Text (the optimizer's name, the configuration's fingerprint, the scalars' names) is stored as string datasets.
/// Checkpoints of earlier versions, which stored text as one float64 character code per byte, are still read.

#include "drivers/fit_types.hpp"

#include <string>

namespace t3k {
namespace fit {

struct LoadedCheckpoint {
  Checkpoint checkpoint;
  std::string fingerprint;  ///< Config::fingerprint() of the run that wrote it
};

/// Writes `c` to `path` atomically (io::Writer). **Blocking:** yes. **Throws:** io::FileError.
void write_checkpoint(std::string const& path, Checkpoint const& c, std::string const& fingerprint);

/// Reads a checkpoint into the default memory space. **Blocking:** yes. **Throws:** io::FileError naming the file
/// and the dataset that is missing or malformed.
LoadedCheckpoint read_checkpoint(std::string const& path);

}  // namespace fit
}  // namespace t3k
