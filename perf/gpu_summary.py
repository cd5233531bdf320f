#!/usr/bin/env python3
"""Summary table of the GPU benchmark set (scripts/run_gpu.sh): each target, its figure, met or not.

Reads t3k_bench's JSON output. Targets (docs/performance.md): J^T at d=8, N=64, n=16, r=32, K=2, W=10^5, auto chunk
at >= 0.3 of the same run's GEMM (gemm_fraction); probes, probe jets and J at >= 0.3 of the copy bandwidth
(bandwidth_fraction); kernel launches plus BLAS products of one summed J^T call equal at W = 2000 and W = 20000 and
at most 40 per mode (d = 6).
"""
import argparse
import json
import sys


def rows(path):
    with open(path) as f:
        data = json.load(f)
    return [b for b in data.get("benchmarks", []) if b.get("run_type", "iteration") == "iteration"]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("bench_json")
    parser.add_argument("--tests", default="not run", help="the ctest summary line")
    args = parser.parse_args()
    bench = rows(args.bench_json)
    table = [("test suite on the GPU", args.tests, "100% tests passed" in args.tests)]

    def add_fraction(prefix, counter, target, what):
        found = [b for b in bench if b["name"].startswith(prefix)]
        for b in found:
            value = b.get(counter)
            if value is None:
                continue
            table.append((f"{what} {b['name']}", f"{counter} {value:.3f} ({b.get('real_time', 0):.1f} "
                          f"{b.get('time_unit', 'ms')})", value >= target))
        if not found:
            table.append((what, "no benchmark ran", False))

    add_fraction("BM_JT_Target_Optin/", "gemm_fraction", 0.3, "J^T >= 0.3 of GEMM:")
    add_fraction("BM_ProbesInto<double>", "bandwidth_fraction", 0.3, "probes >= 0.3 of copy:")
    add_fraction("BM_ProbeJetsInto<double>", "bandwidth_fraction", 0.3, "jets >= 0.3 of copy:")
    add_fraction("BM_JInto<double>", "bandwidth_fraction", 0.3, "J >= 0.3 of copy:")

    counts = {}
    for b in bench:
        if b["name"].startswith("BM_JT<double>/d:6/N:32/n:8/r:16/K:2/W:") and "kernel_launches" in b:
            w = b["name"].split("/W:")[1].split("/")[0]
            counts[w] = int(b["kernel_launches"] + b.get("blas_products", 0))
    if len(counts) == 2:
        equal = len(set(counts.values())) == 1
        per_mode = max(counts.values()) / 6
        table.append(("J^T launches + BLAS calls, W = 2000 vs 20000",
                      f"{counts.get('2000')} vs {counts.get('20000')} ({per_mode:.1f} per mode)",
                      equal and per_mode <= 40))
    else:
        table.append(("J^T launches + BLAS calls, W = 2000 vs 20000", "not counted", False))

    width = max(len(t[0]) for t in table)
    for name, figure, met in table:
        print(f"{name:<{width}}  {figure:<48}  {'met' if met else 'NOT met'}")
    return 0 if all(t[2] for t in table) else 1


if __name__ == "__main__":
    sys.exit(main())
