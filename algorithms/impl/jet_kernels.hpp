#pragma once
/// \file jet_kernels.hpp
/// The elementary kernels every probe sweep is built from (docs/math.md: jet algebra, probe jets, J and J^T), one
/// operation per header, each with one dispatch point between its host wing (impl/host/) and its device wing
/// (impl/device/). Not API.
///
/// Determinism: every kernel computes each output entry by a sequential sum in a fixed order, parallel only over
/// output entries, and the core contractions (apply_matrix) run one matrix product per aligned block of probes on host
/// backends and one tiled kernel of sequential sums on device backends. A probe's results therefore never depend on
/// the chunk it was computed in, which is what makes the chunked J^T bitwise equal to the dense one.

#include "t3k/algorithms/impl/apply_matrix.hpp"
#include "t3k/algorithms/impl/contract_jets.hpp"
#include "t3k/algorithms/impl/jet_packing.hpp"
#include "t3k/algorithms/impl/khatri_rao_jets.hpp"
#include "t3k/algorithms/impl/probe_jet_output.hpp"
#include "t3k/algorithms/impl/probe_pair_products.hpp"
