#!/usr/bin/env python3
"""How much of its speed `t3k` keeps when other processes share the cores.

Runs workloads of T3K, each as a whole process, with N busy processes beside it (CPU burners,
`while :; do :; done`, started and killed by this script and bounded in time by `timeout`):

* fit: `t3k fit perf/busy_machine.yaml` (a planted 5-mode problem of order 1, 700 probes, newton_cg with a rank
  continuation from ranks 1: many short kernels);
* jtr: `t3k jtr` on a generated input (summed J^T, chunk auto; shape d,N,n,r,K,W from --jtr-shape);
* python-fit (only where --workloads names it): the fit's problem and optimizer through the Python module
  (PYTHON_FIT below), a Python process that imports t3k first (--python, --python-path).

--copies K starts K copies of each workload at once (a sweep of jobs side by side; the run lasts until the last
copy ends) and --launcher puts a command such as `mpirun -np 2` before each run (ranks x threads against cores).

Each runs with the default thread count (all cores) and with one thread (OMP_NUM_THREADS=1); OMP_WAIT_POLICY,
GOMP_SPINCOUNT and OpenBLAS' OPENBLAS_THREAD_TIMEOUT and GOTO_THREAD_TIMEOUT are removed from the environment so
that the runs measure what t3k does by itself (--env puts a value back). Every round runs each workload's
configurations one after the other and then again in reverse order (default, one thread, one thread, default):
beside busy processes a short run's time depends on where it falls in the scheduler's rhythm, and whichever
configuration always ran first could be 10% slower or faster than the other for a whole run of the script. A round's
time is the mean of its two runs. --control adds a second default configuration, "default again", whose ratio to the
default shows how far two identical configurations differ in the same rounds (the measurement's own spread). The
report gives the median wall time of --rounds rounds, the slowdown against the same configuration on the quiet
machine and the median CPU time, then the median over rounds of the default's time divided by one thread's, and
checks the targets: with two busy processes the default is no slower than one thread (that median at most 1) and at
most 3x its quiet time, with four at most 5x (checked for one copy without a launcher). Exits 1 when a target is
missed and --check is given.

    python3 perf/busy_machine.py --t3k build/drivers/t3k

Needs numpy and h5py (for the jtr input), coreutils' `timeout` and `sh`. Timing targets live here, not in the tests.
"""

import argparse
import os
import resource
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
POLICY_VARIABLES = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OPENBLAS_THREAD_TIMEOUT", "GOTO_THREAD_TIMEOUT")

# The python-fit workload: busy_machine.yaml's problem, model and optimizer through the Python module.
PYTHON_FIT = """
import t3k
truth = t3k.TuckerTensorTrain.random([6] * 5, [2, 3, 4, 3, 2], [1, 3, 4, 4, 3, 1], seed=3)
problem = t3k.FittingProblem.planted(truth, 700, 1, seed=3)
x0 = t3k.TuckerTensorTrain.random([6] * 5, [1] * 5, [1] * 6, seed=1)
result = t3k.fit(problem, x0, "newton_cg", max_iterations=300, cg_max_iterations=100, tol_relative_residual=1e-10,
                 max_tucker_ranks=5, max_tt_ranks=5)
assert result.converged, result.reason
"""


def write_jtr_input(t3k, shape, path, seed=1):
    """A `t3k jtr` input: a random T3's frame (`t3k frame`), random probes and a random residual."""
    import h5py
    import numpy as np

    d, big_n, n, r, k, w = shape
    rng = np.random.default_rng(seed)
    ranks = [1] + [r] * (d - 1) + [1]
    t3_path, frame_path = path + ".t3.h5", path + ".frame.h5"
    with h5py.File(t3_path, "w") as f:
        for i in range(d):
            f[f"t3/tucker_cores/{i}"] = rng.standard_normal((n, big_n))
            f[f"t3/tt_cores/{i}"] = rng.standard_normal((ranks[i], n, ranks[i + 1]))
    subprocess.run([t3k, "frame", "--in", t3_path, "--out", frame_path], check=True, stdout=subprocess.DEVNULL)
    with h5py.File(path, "w") as f, h5py.File(frame_path, "r") as fr:
        fr.copy("frame", f)
        probes = f.create_group("probes")
        probes.attrs["order"] = np.int64(k)
        for i in range(d):
            probes[f"w/{i}"] = rng.standard_normal((w, big_n)) / np.sqrt(big_n)
            probes[f"p/{i}"] = rng.standard_normal((w, big_n)) / np.sqrt(big_n)
            f[f"residual/{i}"] = rng.standard_normal((w, k + 1, big_n))
    os.remove(t3_path)
    os.remove(frame_path)


class Burners:
    """N CPU burners in their own process groups; each ends by itself after `limit` seconds if never killed."""

    def __init__(self, n, limit):
        self.processes = [
            subprocess.Popen(["timeout", "-s", "KILL", str(limit), "sh", "-c", "while :; do :; done"],
                             start_new_session=True)
            for _ in range(n)
        ]
        time.sleep(0.3 if n else 0)  # let the scheduler see them as busy

    def kill(self):
        for p in self.processes:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
        self.processes = []


def children_cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_run(commands, env):
    """(wall seconds, CPU seconds) of one run: the commands started at once, until the last one ends. The burners
    are reaped only after the runs of their level, so the children's CPU time grows by this run's alone."""
    # stderr to a file per command: a pipe read one process after another could block a copy that fills it.
    errors = [tempfile.TemporaryFile(mode="w+") for _ in commands]
    try:
        cpu = children_cpu_seconds()
        start = time.perf_counter()
        running = [subprocess.Popen(c, env=env, stdout=subprocess.DEVNULL, stderr=e) for c, e in zip(commands, errors)]
        for p in running:
            p.wait()
        elapsed = time.perf_counter() - start
        for command, p, error in zip(commands, running, errors):
            if p.returncode != 0:
                error.seek(0)
                sys.exit(f"busy_machine: {' '.join(command)} failed with code {p.returncode}:\n{error.read()}")
        return elapsed, children_cpu_seconds() - cpu
    finally:
        for e in errors:
            e.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--t3k", default=os.path.join(HERE, "..", "build", "drivers", "t3k"))
    parser.add_argument("--busy", default="0,1,2,4", help="numbers of busy processes, comma-separated")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each workload and configuration")
    parser.add_argument("--workloads", default="fit,jtr", help="comma-separated: fit, jtr, python-fit (the module)")
    parser.add_argument("--fit-config", default=os.path.join(HERE, "busy_machine.yaml"),
                        help="the fit's YAML (run in a scratch folder: its output directory is thrown away)")
    parser.add_argument("--jtr-shape", default="8,64,16,32,2,1024", help="d,N,n,r,K,W of the jtr input")
    parser.add_argument("--python", default=sys.executable, help="the interpreter of the python-fit workload")
    parser.add_argument("--python-path", default=None,
                        help="where `import t3k` finds the module (default: the python folder beside --t3k's)")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help="set in every run (e.g. OMP_WAIT_POLICY=active to compare policies)")
    parser.add_argument("--copies", type=int, default=1, help="copies of each workload started at once")
    parser.add_argument("--launcher", default="", help='command before each run, e.g. "mpirun -np 2"')
    parser.add_argument("--max-seconds", type=int, default=900, help="bound on each burner's life")
    parser.add_argument("--control", action="store_true",
                        help='also run the default a second time ("default again") to show the measurement spread')
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    if args.copies < 1:
        parser.error("--copies must be at least 1")

    t3k = os.path.abspath(args.t3k)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # runs the finally below: no burner outlives us
    busy_levels = [int(x) for x in args.busy.split(",")]
    workloads = args.workloads.split(",")
    unknown = set(workloads) - {"fit", "jtr", "python-fit"}
    if unknown:
        parser.error(f"--workloads: unknown {', '.join(sorted(unknown))} (fit, jtr, python-fit)")
    base = {k: v for k, v in os.environ.items() if k not in POLICY_VARIABLES + ("OMP_NUM_THREADS",)}
    for item in args.env:
        name, _, value = item.partition("=")
        base[name] = value
    configs = {"default": dict(base), "1 thread": dict(base, OMP_NUM_THREADS="1")}
    if args.control:
        configs["default again"] = dict(base)

    launcher = shlex.split(args.launcher)
    scratch = tempfile.mkdtemp(prefix="t3k_busy_")
    burners = Burners(0, 1)
    try:
        commands = {}  # workload -> one command per copy, each with outputs of its own
        copies = [os.path.join(scratch, f"copy{i}") for i in range(args.copies)]
        for folder in copies:
            os.makedirs(folder)
        if "fit" in workloads:
            for folder in copies:
                shutil.copy(args.fit_config, os.path.join(folder, "fit.yaml"))
            commands["fit"] = [launcher + [t3k, "fit", os.path.join(folder, "fit.yaml"), "--quiet"]
                               for folder in copies]
        if "jtr" in workloads:
            shape = [int(x) for x in args.jtr_shape.split(",")]
            jtr_in = os.path.join(scratch, "jtr_in.h5")
            write_jtr_input(t3k, shape, jtr_in)
            commands["jtr"] = [launcher + [t3k, "jtr", "--in", jtr_in, "--out", os.path.join(folder, "jtr_out.h5")]
                               for folder in copies]
        if "python-fit" in workloads:
            module = args.python_path or os.path.join(os.path.dirname(os.path.dirname(t3k)), "python")
            for env in configs.values():
                env["PYTHONPATH"] = os.path.abspath(module)
            commands["python-fit"] = [launcher + [args.python, "-c", PYTHON_FIT] for _ in copies]
        for runs in commands.values():  # warm the page cache and the loader
            timed_run(runs, configs["default"])

        times, cpu = {}, {}  # (workload, config, busy) -> [seconds], one per round
        for n_busy in busy_levels:
            burners = Burners(n_busy, args.max_seconds)
            for round_index in range(args.rounds):
                # Each configuration once and then again mirrored, the first one turning with the rounds, so that
                # over the rounds every configuration takes every place of the order alike.
                names = list(configs)
                shift = round_index % len(names)
                order = names[shift:] + names[:shift]
                for workload, runs in commands.items():
                    spent = {config: [0.0, 0.0] for config in names}
                    for config in order + order[::-1]:
                        wall, cpu_seconds = timed_run(runs, configs[config])
                        spent[config][0] += wall / 2
                        spent[config][1] += cpu_seconds / 2
                    for config, (wall, cpu_seconds) in spent.items():
                        times.setdefault((workload, config, n_busy), []).append(wall)
                        cpu.setdefault((workload, config, n_busy), []).append(cpu_seconds)
            burners.kill()
    finally:
        burners.kill()
        shutil.rmtree(scratch, ignore_errors=True)

    print(f"t3k: {t3k}; {os.cpu_count()} cores; rounds: {args.rounds}; env: {' '.join(args.env) or '(none)'}; "
          f"copies: {args.copies}; launcher: {args.launcher or '(none)'}")
    print("| workload | threads | busy | median s | min-max s | slowdown vs quiet | median CPU s |")
    print("|---|---|---|---|---|---|---|")
    median = {key: statistics.median(v) for key, v in times.items()}
    for (workload, config, n_busy), values in times.items():
        quiet = median.get((workload, config, 0))
        key = (workload, config, n_busy)
        slowdown = f"{median[key] / quiet:.2f}" if quiet else "-"
        print(f"| {workload} | {config} | {n_busy} | {median[key]:.3f} | {min(values):.3f}-{max(values):.3f} | "
              f"{slowdown} | {statistics.median(cpu[key]):.3f} |")

    # The default against one thread round by round: both run in every round, interleaved, so the load and the
    # machine's state of the moment affect both; the median of their ratios is steadier than a ratio of medians.
    def ratios(workload, n_busy, other):
        a, b = (workload, "default", n_busy), (workload, other, n_busy)
        wall = statistics.median(x / y for x, y in zip(times[a], times[b]))
        return wall, statistics.median(x / y for x, y in zip(cpu[a], cpu[b]) if y > 0)

    paired = {}
    control = " | default / default again, wall | CPU" if args.control else ""
    print(f"\n| workload | busy | default / 1 thread, wall (median of rounds) | CPU{control} |")
    print("|---|---|---|---|" + ("---|---|" if args.control else ""))
    for workload in commands:
        for n_busy in busy_levels:
            wall, cpu_ratio = ratios(workload, n_busy, "1 thread")
            paired[(workload, n_busy)] = wall
            row = f"| {workload} | {n_busy} | {wall:.3f} | {cpu_ratio:.3f} |"
            if args.control:
                row += " {:.3f} | {:.3f} |".format(*ratios(workload, n_busy, "default again"))
            print(row)

    missed = []
    targeted = commands if args.copies == 1 and not launcher else {}  # the targets are for one job beside burners
    for workload in targeted:
        quiet = median.get((workload, "default", 0))
        for n_busy, limit in ((2, 3.0), (4, 5.0)):
            got = median.get((workload, "default", n_busy))
            if got is not None and quiet is not None and got > limit * quiet:
                missed.append(f"{workload}, {n_busy} busy: default {got / quiet:.2f}x quiet (target <= {limit:g}x)")
        ratio = paired.get((workload, 2))  # needs no quiet run
        if ratio is not None and ratio > 1.0:
            # The control's ratio beside it says how far two identical configurations differ in the same rounds.
            control = f", default again {ratios(workload, 2, 'default again')[0]:.3f}x" if args.control else ""
            missed.append(f"{workload}, 2 busy: default {ratio:.3f}x the one-thread time (median of rounds{control})")
    if not targeted:
        print("targets: not checked (they are for one job beside burners)")
    else:
        print("targets: " + ("met" if not missed else "missed: " + "; ".join(missed)))
    return 1 if missed and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
