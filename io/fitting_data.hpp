#pragma once
/// \file fitting_data.hpp
/// The input of a `t3k fit` data problem (docs/file-format.md): samples of one measurement kind (/entries, /applies
/// or /probes), their target values and optional per-sample weights, read (all rows or a shard's) and written as
/// one. The command-line tool and the Python module read it through the same function, so both check a file the
/// same way.

#include "t3k/core/measurement_kind.hpp"
#include "t3k/io/hdf5_io.hpp"

#include <string>
#include <vector>

namespace t3k {
namespace io {

/// Multi-indices of entries: (W, d), 0-based, on the host.
using IndexMatrix = Kokkos::View<int**, Kokkos::LayoutRight, HostSpace>;

/// A data problem as read from a file (the rows held: all of them, or a shard's).
struct FittingData {
  MeasurementKind kind = MeasurementKind::probes;  ///< which of /entries, /applies, /probes the file holds
  std::vector<std::size_t> mode_shapes;            ///< N_i of the tensor measured
  /// probes: /probes/w and /probes/p; applies: w = /applies/w, p = /applies/p (empty when absent); entries: p =
  /// /entries/p (empty when absent), no w. first_row and file_rows (the file's W) are set for every kind.
  ProbeSet probes;
  IndexMatrix indices;  ///< entries: (rows, d), 0-based; empty for the other kinds
  /// The targets: probes, one (rows, K+1, N_i) per mode; entries and applies, one (rows, K+1, 1) array of the
  /// values (empty when read without targets).
  JetStack targets;
  std::vector<double> weights;      ///< one per row held; empty without a weights dataset
  std::size_t order = 0;            ///< K
  std::size_t n_rows() const;       ///< rows held
  std::size_t n_file_rows() const;  ///< the file's W
};

/// A problem with the weights dataset (missing, not (W), or an entry negative or not finite): a FileError that
/// says the weights were at fault, so that a caller can name its own weights setting.
class WeightsError : public FileError {
 public:
  using FileError::FileError;
};

/// Which of /entries, /applies and /probes `in` holds. **Throws:** FileError naming them when it holds none or
/// more than one.
MeasurementKind detect_measurement_kind(Reader const& in);

/// Reads the samples of the kind the file holds (detect_measurement_kind), their targets and, when `weights` names
/// one (e.g. "/weights"), a 1-D dataset of W weights, each finite and >= 0.
/// - probes: /probes and /jets; with the order attribute of /probes, /jets/0 must be (W, K+1, N_0) for that K (a
///   stack stored transposed is refused with the shape it should have).
/// - entries: the attribute mode_shapes of /entries (d integers >= 1), /entries/indices (W, d) of any integer type,
///   each in [0, N_i) (a multi-index may repeat), /entries/values (W) for K = 0 or (W, K+1), and /entries/p/\<i\>
///   (W, N_i), required when K >= 1.
/// - applies: /applies/w/\<i\> (W, N_i), /applies/values (W) or (W, K+1), /applies/p/\<i\>, required when K >= 1.
/// `select_rows` (empty: all rows) chooses the rows read, as hyperslabs; every array's full shape is checked either
/// way. Without `with_targets` the targets and values are not read (K: the order attribute of /probes or the shape
/// of the values, 0 when neither is there), and missing directions are left empty for the caller to require.
/// **Blocking:** yes (host I/O). **Throws:** WeightsError for the weights; FileError naming the file and the
/// dataset otherwise.
FittingData read_fitting_data(Reader const& in, std::string const& weights = "",
                              RowSelector const& select_rows = RowSelector(), bool with_targets = true);

/// Writes /probes (with the order attribute K), /jets = targets, the root attributes d, W and K and, when
/// `weights` is not empty, the dataset `weights_dataset` (W entries). **Throws:** DimensionMismatch or
/// InvalidArgument when the arrays do not fit together; FileError when HDF5 fails.
void write_fitting_data(Writer& out, ProbeSet const& probes, JetStack const& targets,
                        std::vector<double> const& weights = {}, std::string const& weights_dataset = "/weights");

/// Writes `data` of any kind in the layout read_fitting_data reads (values of entries and applies as (W, K+1)),
/// the root attributes d, W and K, and the weights (when any) as `weights_dataset`. All rows: data.probes.first_row
/// must be 0. **Throws:** InvalidArgument or DimensionMismatch when the arrays do not fit together; FileError when
/// HDF5 fails.
void write_fitting_data(Writer& out, FittingData const& data, std::string const& weights_dataset = "/weights");

}  // namespace io
}  // namespace t3k
