#pragma once
/// \file fitting_data.hpp
/// The input of a `t3k fit` data problem (docs/file-format.md): /probes, the target jets /jets and optional
/// per-probe weights, read (all rows or a shard's) and written as one. The command-line tool and the Python module
/// read it through the same function, so both check a file the same way.

#include "t3k/io/hdf5_io.hpp"

#include <string>
#include <vector>

namespace t3k {
namespace io {

/// A data problem as read from a file (the rows held: all of them, or a shard's).
struct FittingData {
  ProbeSet probes;              ///< w_i, p_i of the rows held, and the file's W (probes.n_file_probes())
  JetStack targets;             ///< the target jets, (rows, K+1, N_i) per mode
  std::vector<double> weights;  ///< one per row held; empty without a weights dataset
  std::size_t order = 0;        ///< K
};

/// A problem with the weights dataset (missing, not (W), or an entry negative or not finite): a FileError that
/// says the weights were at fault, so that a caller can name its own weights setting.
class WeightsError : public FileError {
 public:
  using FileError::FileError;
};

/// Reads /probes, /jets and, when `weights` names one (e.g. "/weights"), a 1-D dataset of W weights, each finite
/// and >= 0. With the order attribute of /probes, /jets/0 must be (W, K+1, N_0) for that K (a stack stored
/// transposed is refused with the shape it should have). `select_rows` (empty: all rows) chooses the rows read, as
/// hyperslabs; every array's full shape is checked either way.
/// **Blocking:** yes (host I/O). **Throws:** WeightsError for the weights; FileError naming the file and the
/// dataset otherwise.
FittingData read_fitting_data(Reader const& in, std::string const& weights = "",
                              RowSelector const& select_rows = RowSelector());

/// Writes /probes (with the order attribute K), /jets = targets, the root attributes d, W and K and, when
/// `weights` is not empty, the dataset `weights_dataset` (W entries). **Throws:** DimensionMismatch or
/// InvalidArgument when the arrays do not fit together; FileError when HDF5 fails.
void write_fitting_data(Writer& out, ProbeSet const& probes, JetStack const& targets,
                        std::vector<double> const& weights = {}, std::string const& weights_dataset = "/weights");

}  // namespace io
}  // namespace t3k
