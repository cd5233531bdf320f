import ast
import os
import pathlib
import subprocess
import sys
import threading

import numpy as np
import pytest
from conftest import random_probe_set, random_t3

import t3k


def test_calls_from_several_threads_give_the_serial_results(rng):
    shape = (4, 3, 5)
    x, _, _ = random_t3(rng, shape, (2, 3, 2), (1, 2, 2, 1))
    probe_sets = [random_probe_set(rng, shape, 40) for _ in range(4)]
    serial = [t3k.probe_derivatives(x, ww, pp, 2) for ww, pp in probe_sets]
    results = [None] * 4

    def work(k):
        for _ in range(5):
            results[k] = t3k.probe_derivatives(x, *probe_sets[k], 2)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    for expected, got in zip(serial, results):
        for a, b in zip(expected, got):
            np.testing.assert_array_equal(a, b)


def test_the_interpreter_exits_cleanly_with_t3k_objects_alive():
    script = (
        "import t3k\n"
        "x = t3k.TuckerTensorTrain.random([3, 4], [2, 2], [1, 2, 1], seed=1)\n"
        "f = t3k.orthogonal_frame(x)\n"
        "v = t3k.T3Variation.zeros(f)\n"
        "print('alive', x.norm() > 0)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "alive True"
    assert "Kokkos" not in done.stderr


# The start of a child that takes every core it may have (so that what this process's threads hold does not matter)
# and leaves if that is one: nothing to place; and its end, a line per thread: whether it has that whole mask.
TAKE_EVERY_CORE = (
    "import os, sys\n"
    "os.sched_setaffinity(0, range(os.cpu_count()))\n"
    "mask = os.sched_getaffinity(0)\n"
    "if len(mask) < 2:\n"
    "    raise SystemExit(3)\n"
    "def threads():\n"
    "    return sorted(int(t) for t in os.listdir('/proc/self/task'))\n"
)
PRINT_THREAD_MASKS = "for tid in threads():\n    print(tid, os.sched_getaffinity(tid) == mask)\n"


def placement_child_lines(script):
    """The non-empty output lines of a child running TAKE_EVERY_CORE + script + PRINT_THREAD_MASKS with two OpenMP
    threads and no binding asked for; skips where the child may run on one core only."""
    env = dict(os.environ, OMP_NUM_THREADS="2", OMP_PROC_BIND="false")
    env.pop("OMP_PLACES", None)
    done = subprocess.run([sys.executable, "-c", TAKE_EVERY_CORE + script + PRINT_THREAD_MASKS], capture_output=True,
                          text=True, env=env, timeout=120)
    if done.returncode == 3:
        pytest.skip("this machine gives the process one core: nothing to place")
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.split("\n") if line]


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs Linux affinity masks")
def test_the_module_leaves_every_thread_on_the_cores_it_had_and_no_idle_pool_thread():
    # The host pool starts on the importing thread's core (t3k/core/kokkos_scope.hpp), then its threads end while
    # idle (IdleHostThreads::released; GCC's libgomp ends them, a runtime that only lets them sleep keeps them) and
    # come back, on the whole mask, for regions on two threads; those that Kokkos' stop starts at exit end too. NumPy
    # (and its BLAS's threads, if any) is loaded before the threads are counted. Exit handlers run last registered
    # first: the child's, registered before the import, runs after the module's.
    script = (
        "import atexit, time\n"
        "import numpy\n"
        "def as_before():\n"
        "    deadline = time.monotonic() + 5\n"  # an ended thread leaves the list once it has exited
        "    while threads() != before and time.monotonic() < deadline:\n"
        "        time.sleep(0.01)\n"
        "    return threads() == before or 'libgomp' not in open('/proc/self/maps').read()\n"
        "before = threads()\n"
        "atexit.register(lambda: print('at exit', as_before()))\n"
        "import t3k\n"
        "print(as_before())\n"
        "x = t3k.TuckerTensorTrain.random([30, 40, 20], [4, 4, 4], [1, 4, 4, 1], seed=1)\n"
        "print(t3k.num_threads(), x.norm() > 0)\n"
    )
    lines = placement_child_lines(script)
    assert lines[0] == "True", "the pool's threads stayed after the import"
    assert lines[1] == "2 True"
    assert lines[-1] == "at exit True", "a pool thread stayed after Kokkos stopped"
    assert len(lines) > 3
    assert all(line.endswith(" True") for line in lines[2:-1]), lines


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs Linux affinity masks")
def test_the_import_loads_numpy_beside_the_pool_and_leaves_every_thread_on_the_cores_it_had():
    # Where NumPy is not loaded yet, the module imports it while the host pool starts (t3k/core/kokkos_scope.hpp's
    # start_alongside), so that its BLAS's threads start on the importing thread's core; they must get the child's
    # whole mask back with the pool's.
    script = (
        "print('numpy' in sys.modules)\n"
        "import t3k\n"
        "print('numpy' in sys.modules)\n"
    )
    lines = placement_child_lines(script)
    assert lines[:2] == ["False", "True"], "NumPy was not imported with the module"
    assert len(lines) > 2
    assert all(line.endswith(" True") for line in lines[2:]), lines


def test_the_stub_declares_every_public_name():
    stub = pathlib.Path(t3k.__file__).with_name("_t3k.pyi")
    tree = ast.parse(stub.read_text())
    declared = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            declared.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            declared.add(node.target.id)
        elif isinstance(node, ast.Assign):
            declared.update(t.id for t in node.targets if isinstance(t, ast.Name))
    # Names written in Python (t3k/__init__.py: fit, FitResult, the toolbox conversions) carry their own annotations.
    in_python = {name for name in t3k.__all__ if getattr(getattr(t3k, name), "__module__", "") == "t3k"}
    assert {"fit", "FitResult", "from_t3toolbox", "to_t3toolbox"} <= in_python
    assert set(t3k.__all__) - {"__version__"} - in_python <= declared


def test_the_stub_is_what_stubgen_writes_for_the_module(tmp_path):
    stubgen = pytest.importorskip("nanobind.stubgen")
    out = tmp_path / "_t3k.pyi"

    stubgen.main(["-q", "-m", "t3k._t3k", "-o", str(out)])

    committed = pathlib.Path(t3k.__file__).with_name("_t3k.pyi")
    assert out.read_text() == committed.read_text(), "regenerate python/t3k/_t3k.pyi (docs/python.md)"


_POLICY_VARIABLES = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OPENBLAS_THREAD_TIMEOUT", "GOTO_THREAD_TIMEOUT")


def _import_in_child(env_changes, before=""):
    """Imports t3k in a fresh interpreter with the waiting policies' variables removed, then `env_changes` set;
    returns what the import decided for OpenMP and the OMP_WAIT_POLICY the process then holds, then the same for
    NumPy's OpenBLAS and OPENBLAS_THREAD_TIMEOUT."""
    env = {k: v for k, v in os.environ.items() if k not in _POLICY_VARIABLES}
    env.update(env_changes)
    script = before + (
        "import os, t3k\n"
        "print(t3k._wait_policy, os.environ.get('OMP_WAIT_POLICY'), t3k._blas_wait_policy,"
        " os.environ.get('OPENBLAS_THREAD_TIMEOUT'), sep='|')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().split("|")


def test_the_import_sets_the_passive_policy_when_none_is_set():
    assert _import_in_child({}) == ["set", "passive", "set", "4"]


def test_the_import_keeps_the_users_waiting_policy():
    assert _import_in_child({"OMP_WAIT_POLICY": "active"})[:2] == ["environment", "active"]
    assert _import_in_child({"GOMP_SPINCOUNT": "123"})[:2] == ["environment", "None"]
    assert _import_in_child({"OPENBLAS_THREAD_TIMEOUT": "28"})[2:] == ["environment", "28"]
    assert _import_in_child({"GOTO_THREAD_TIMEOUT": "20"})[2:] == ["environment", "None"]


def test_the_import_leaves_the_environment_alone_when_libgomp_is_already_loaded():
    preload = "import ctypes, ctypes.util\nctypes.CDLL(ctypes.util.find_library('gomp') or 'libgomp.so.1')\n"
    assert _import_in_child({}, before=preload)[:2] == ["already loaded", "None"]


def test_the_import_leaves_openblas_alone_when_numpy_is_already_loaded():
    assert _import_in_child({}, before="import numpy\n")[2:] == ["already loaded", "None"]
