#pragma once
/// \file bench_common.hpp
/// Everything the benchmark files share: shapes and data (bench_data.hpp), cached fixtures (bench_fixtures.hpp) and
/// the timing loop, counters and references (bench_measure.hpp).

#include "bench_data.hpp"
#include "bench_fixtures.hpp"
#include "bench_measure.hpp"
