"""The cost of calling J^T from Python: t3k.probe_derivatives_transpose on NumPy arrays against the same C++ call
(t3k::probe_derivatives_transpose on Views of the same arrays, same build, same options) timed in C++.

Shape: d = 8 modes, N = 64, n = 16 (Tucker ranks), r = 32 (interior TT ranks), K = 2, W = 4096 probes, summed over
probes, chunk_size 'auto'. What Python adds: argument checks, wrapping the arrays as Views (no copy: they are
C-contiguous float64) and copying the gradient (a few hundred KiB) into NumPy arrays. Target: at most 5% over the
C++ time. Calls alternate between the two so that a loaded machine slows both alike; the minimum of each is kept.

Run (docs/python.md builds the module; set the threads before the import):
    OMP_NUM_THREADS=2 PYTHONPATH=build/python python perf/python_transpose_overhead.py [--repeats 10] [--small]
Exits 1 when the overhead is above the target.
"""

import argparse
import sys
import time

import numpy as np

import t3k

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--repeats", type=int, default=10, help="calls of each kind (the minimum is reported)")
parser.add_argument("--small", action="store_true", help="W = 512 instead of 4096 (a quick check)")
parser.add_argument("--target", type=float, default=0.05, help="largest overhead accepted (default 0.05)")
args = parser.parse_args()

d, big_n, n, r, order = 8, 64, 16, 32, 2
w = 512 if args.small else 4096
rng = np.random.default_rng(0)
x = t3k.TuckerTensorTrain.random([big_n] * d, [n] * d, [1] + [r] * (d - 1) + [1], seed=1)
frame = t3k.orthogonal_frame(x)
ww = [rng.standard_normal((w, big_n)) for _ in range(d)]
pp = [rng.standard_normal((w, big_n)) for _ in range(d)]
residuals = [rng.standard_normal((w, order + 1, big_n)) for _ in range(d)]

t3k.probe_derivatives_transpose(frame, ww, pp, residuals, chunk_size="auto")  # warm-up: first touch, thread start
python_seconds, cpp_seconds = [], []
for _ in range(args.repeats):
    start = time.perf_counter()
    t3k.probe_derivatives_transpose(frame, ww, pp, residuals, chunk_size="auto")
    python_seconds.append(time.perf_counter() - start)
    cpp_seconds += t3k._t3k._time_transpose(frame, ww, pp, residuals, chunk_size="auto", repeats=1)

best_python, best_cpp = min(python_seconds), min(cpp_seconds)
overhead = best_python / best_cpp - 1
print(
    f"J^T d={d} N={big_n} n={n} r={r} K={order} W={w}, {t3k.num_threads()} threads, min of {args.repeats}: "
    f"Python {best_python * 1e3:.2f} ms, C++ {best_cpp * 1e3:.2f} ms, overhead {100 * overhead:+.2f}% "
    f"(target <= {100 * args.target:.0f}%)"
)
sys.exit(0 if overhead <= args.target else 1)
