#!/usr/bin/env python3
"""The cost per iteration of a fit of a shared model against the untied fit at the same shapes.

Runs `t3k fit` on a planted problem, N = [20 20 20 6], Tucker ranks [4 4 4 3], TT ranks [1 4 4 3 1], K = 1,
W = 2000 probes, 30 iterations from a random start, once with `model.sharing: [0, 0, 0, 1]` (the first three modes
share one factor) and once without, for each optimizer named (default: adam and gradient_descent, whose work per
iteration is fixed; newton_cg's CG steps differ between the two models). The configurations run interleaved, each
as a whole process; the time per iteration is `timings_seconds.fit` of summary.yaml over `final.iterations`. The
report gives the median (min, max) of --rounds runs and the ratio shared / untied; the target is a ratio of at most
1.3 (`--check` exits 1 on a miss).

    python3 perf/shared_fit_cost.py --t3k build/drivers/t3k

Timing targets live here, not in the tests.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

CONFIG = """problem:
  synthetic: {{mode_shapes: [20, 20, 20, 6], tucker_ranks: [4, 4, 4, 3], tt_ranks: [1, 4, 4, 3, 1], order: 1,
              n_probes: 2000, seed: 1}}
model:
{sharing}  tucker_ranks: [4, 4, 4, 3]
  tt_ranks: [1, 4, 4, 3, 1]
  init: {{random: {{seed: 2}}}}
optimizer: {{name: {optimizer}, max_iterations: {iterations}, tol_gradient: 0}}
output: {{directory: {directory}}}
"""
TARGET = 1.3


def summary_value(path, section, key):
    """`key` of the top-level `section` of a summary.yaml, read without a YAML library."""
    inside = False
    with open(path) as f:
        for line in f:
            if not line.startswith(" "):
                inside = line.rstrip() == section + ":"
            elif inside and line.strip().startswith(key + ":"):
                return float(line.split(":", 1)[1])
    raise KeyError(f"{path}: no {section}.{key}")


def run(t3k, config, directory):
    """Seconds per iteration of one `t3k fit` run."""
    subprocess.run([t3k, "fit", config, "--quiet"], check=True, stdout=subprocess.DEVNULL)
    summary = os.path.join(directory, "summary.yaml")
    return summary_value(summary, "timings_seconds", "fit") / summary_value(summary, "final", "iterations")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--t3k", default="build/drivers/t3k", help="the t3k program")
    parser.add_argument("--optimizers", default="adam,gradient_descent", help="comma-separated optimizer names")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved runs of each configuration")
    parser.add_argument("--iterations", type=int, default=30, help="max_iterations of every fit")
    parser.add_argument("--check", action="store_true", help="exit 1 when a ratio exceeds the target")
    args = parser.parse_args()
    t3k = os.path.abspath(args.t3k)
    optimizers = [o for o in args.optimizers.split(",") if o]
    missed = False
    with tempfile.TemporaryDirectory(prefix="t3k-shared-cost-") as tmp:
        configs = {}
        for optimizer in optimizers:
            for model, sharing in (("untied", ""), ("shared", "  sharing: [0, 0, 0, 1]\n")):
                directory = os.path.join(tmp, f"{optimizer}-{model}")
                path = directory + ".yaml"
                with open(path, "w") as f:
                    f.write(CONFIG.format(sharing=sharing, optimizer=optimizer, iterations=args.iterations,
                                          directory=directory))
                configs[(optimizer, model)] = (path, directory)
        times = {key: [] for key in configs}
        for _ in range(args.rounds):
            for key, (path, directory) in configs.items():
                subprocess.run(["rm", "-rf", directory], check=True)
                times[key].append(run(t3k, path, directory))
    print("| optimizer | model | ms per iteration, median (min, max) |")
    print("|---|---|---|")
    for optimizer in optimizers:
        for model in ("untied", "shared"):
            t = [1e3 * s for s in times[(optimizer, model)]]
            print(f"| {optimizer} | {model} | {statistics.median(t):.2f} ({min(t):.2f}, {max(t):.2f}) |")
    for optimizer in optimizers:
        ratio = statistics.median(times[(optimizer, "shared")]) / statistics.median(times[(optimizer, "untied")])
        verdict = "met" if ratio <= TARGET else "MISSED"
        missed = missed or ratio > TARGET
        print(f"{optimizer}: shared / untied = {ratio:.2f} (target <= {TARGET}: {verdict})")
    return 1 if (args.check and missed) else 0


if __name__ == "__main__":
    sys.exit(main())
