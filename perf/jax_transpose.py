#!/usr/bin/env python3
"""T3K's summed J^T against the same operation written in JAX.

For each shape (or each given `t3k jtr` input file) this script

1. writes a `t3k jtr` input: a random T3 (`/t3`), its orthogonal frame from `t3k frame`, random probes `w`, `p` and
   random residual jets (docs/file-format.md), or reads an input given with --input;
2. runs `t3k jtr` on it and reads T3K's gradient `/grad`;
3. computes J^T r in JAX: the forward Jacobian J(v) (the probe jets of the tangent tensor of v at the frame, by the
   bond sweeps of docs/math.md, batched over the probe axis with einsum, jets as truncated polynomials) and its
   transpose from `jax.linear_transpose`, jitted, in float64;
4. checks that the two agree to 1e-10 relative (exit 1 if not) and times both: JAX's jitted call (after a warm-up,
   best of --repeats), the whole `t3k jtr` process (best of --repeats) and, with --bench, the library call alone
   (t3k_bench's BM_JT row of the same shape);
5. prints one line per shape, or JSON with --json.

Runs wherever `import jax` works: on the CPU, or on a GPU that JAX sees (then pass a GPU build of t3k). Without jax
it prints "skipped: jax not importable" and exits 0.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

try:
    import jax
    import jax.numpy as jnp
except ImportError:
    print("skipped: jax not importable")
    sys.exit(0)
try:
    import h5py
    import numpy as np
except ImportError as e:
    print(f"skipped: {e.name} not importable")
    sys.exit(0)

jax.config.update("jax_enable_x64", True)

TOLERANCE = 1e-10
DEFAULT_SHAPES = ["6,32,8,16,2,2000", "6,32,8,16,2,20000", "8,64,16,32,2,4096"]


# ------------------------------------------------------------------------------------------------ inputs (h5py)


def parse_shape(text):
    """'d,N,n,r,K,W' -> dict (uniform modes N, Tucker ranks n, interior TT ranks r, boundary ranks 1)."""
    d, big_n, n, r, k, w = (int(x) for x in text.split(","))
    return {"d": d, "N": big_n, "n": n, "r": r, "K": k, "W": w}


def shape_label(s):
    return f"d={s['d']} N={s['N']} n={s['n']} r={s['r']} K={s['K']} W={s['W']}"


def write_input(t3k, s, path, seed):
    """A `t3k jtr` input for shape s: random T3 -> `t3k frame` -> /frame, plus random /probes and /residual."""
    rng = np.random.default_rng(seed)
    d, big_n, n, r, k, w = s["d"], s["N"], s["n"], s["r"], s["K"], s["W"]
    ranks = [1] + [r] * (d - 1) + [1]
    t3_path = path + ".t3.h5"
    frame_path = path + ".frame.h5"
    with h5py.File(t3_path, "w") as f:
        for i in range(d):
            f[f"t3/tucker_cores/{i}"] = rng.standard_normal((n, big_n))
            f[f"t3/tt_cores/{i}"] = rng.standard_normal((ranks[i], n, ranks[i + 1]))
    run_checked([t3k, "frame", "--in", t3_path, "--out", frame_path])
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


def read_input(path):
    """Frame, probes and residual jets of a `t3k jtr` input, as numpy arrays (lists over modes)."""
    with h5py.File(path, "r") as f:
        d = len(f["frame/up_tucker"])
        get = lambda name: [np.asarray(f[f"{name}/{i}"][()], dtype=np.float64) for i in range(d)]
        data = {
            "U": get("frame/up_tucker"),
            "L": get("frame/left_tt"),
            "R": get("frame/right_tt"),
            "O": get("frame/outer_tt"),
            "w": get("probes/w"),
            "p": get("probes/p"),
            "r": get("residual"),
        }
    return data


def read_grad(path, d):
    with h5py.File(path, "r") as f:
        return ([np.asarray(f[f"grad/tucker/{i}"][()]) for i in range(d)],
                [np.asarray(f[f"grad/tt/{i}"][()]) for i in range(d)])


def run_checked(cmd, env=None):
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"jax_transpose: {' '.join(cmd)} failed with code {done.returncode}:\n{done.stdout}")
    return done.stdout


# -------------------------------------------------------------------------------------------------- J in JAX


def fused_product(spec, x, y):
    """jnp.einsum(spec, x, y) for the probe-batched contractions ('sub,su->sb'), written as a broadcast product and
    a sum that XLA fuses into one loop instead of a batched dot_general of one-row matrices."""
    inputs, out = spec.split("->")
    xs, ys = inputs.split(",")
    union = xs + "".join(c for c in ys if c not in xs)

    def expand(a, letters):
        a = jnp.transpose(a, [letters.index(c) for c in union if c in letters])
        return a.reshape([a.shape[[c for c in union if c in letters].index(c)] if c in letters else 1 for c in union])

    product = expand(x, xs) * expand(y, ys)
    summed = [c for c in union if c not in out]
    product = jnp.sum(product, axis=tuple(union.index(c) for c in summed))
    kept = [c for c in union if c in out]
    return jnp.transpose(product, [kept.index(c) for c in out])


def jet_mul(x, y, spec, k1):
    """Truncated product of two jets with a contraction: out[k] = sum_{l<=k} einsum(spec, x[:, l], y[:, k-l]) for
    k < k1. The jets carry the probe axis first and the order second; y may have fewer orders (the probe vectors
    w + t p have two)."""
    out = []
    for k in range(k1):
        terms = [fused_product(spec, x[:, l], y[:, k - l]) for l in range(k + 1)
                 if l < x.shape[1] and k - l < y.shape[1]]
        out.append(sum(terms[1:], terms[0]))
    return jnp.stack(out, axis=1)


def jet_one(w, k1):
    """The constant jet 1 on a bond of rank 1, for every probe."""
    return jnp.zeros((w, k1, 1)).at[:, 0, :].set(1.0)


def make_jt(d, k1, chunk):
    """J^T r summed over probes: jax.linear_transpose of the forward J v, jitted. With chunk > 0 the probes are
    taken `chunk` at a time by lax.scan (the last slice padded with zero residuals, which add nothing) and the slice
    results summed, so that the sweeps' intermediates stay small."""

    def jt_slice(frame, w, p, r):
        U, L, R, O = frame
        n_probes = w[0].shape[0]
        omega = [jnp.stack([w[i], p[i]], axis=1)[:, :min(2, k1)] for i in range(d)]  # w + t p
        # Frame bond quantities: independent of v, so constants of the linear map.
        xi = [jnp.einsum("uj,skj->sku", U[i], omega[i]) for i in range(d)]
        mu = [jet_one(n_probes, k1)]
        for i in range(d - 1):
            mu.append(jet_mul(jnp.einsum("ska,aub->skub", mu[i], L[i]), xi[i], "sub,su->sb", k1))
        nu = [None] * (d + 1)
        nu[d] = jet_one(n_probes, k1)
        for i in range(d - 1, 0, -1):
            nu[i] = jet_mul(jnp.einsum("aub,skb->skau", R[i], nu[i + 1]), xi[i], "sau,su->sa", k1)
        E = [jnp.einsum("ska,aob->skob", mu[i], O[i]) for i in range(d)]
        eta = [jet_mul(E[i], nu[i + 1], "sob,sb->so", k1) for i in range(d)]

        def forward(v):
            """J v: the jets z_i (W x K1 x N_i) of the tangent tensor of v = (V, H)."""
            V, H = v
            dxi = [jnp.einsum("oj,skj->sko", V[i], omega[i]) for i in range(d)]
            tau = [None] * (d + 1)  # variation strictly right of the bond; tau[d] = 0
            for i in range(d - 1, 0, -1):
                B = jnp.einsum("aub,skb->skau", H[i], nu[i + 1])
                if i <= d - 2:
                    B = B + jnp.einsum("aub,skb->skau", L[i], tau[i + 1])
                F = jnp.einsum("aob,skb->skao", O[i], nu[i + 1])
                tau[i] = jet_mul(B, xi[i], "sau,su->sa", k1) + jet_mul(F, dxi[i], "sao,so->sa", k1)
            z = []
            sigma = None  # variation strictly left of the bond; sigma[0] = 0
            for i in range(d):
                A = jnp.einsum("ska,aub->skub", mu[i], H[i])
                if i >= 1:
                    A = A + jnp.einsum("ska,aub->skub", sigma, R[i])
                deta = jet_mul(A, nu[i + 1], "sub,sb->su", k1)
                if i <= d - 2:
                    C = jnp.einsum("ska,aub->skub", mu[i], L[i])
                    deta = deta + jet_mul(C, tau[i + 1], "sub,sb->su", k1)
                    sigma = jet_mul(A, xi[i], "sub,su->sb", k1) + jet_mul(E[i], dxi[i], "sob,so->sb", k1)
                z.append(jnp.einsum("uj,sku->skj", U[i], deta) + jnp.einsum("oj,sko->skj", V[i], eta[i]))
            return z

        v_shape = ([jax.ShapeDtypeStruct((O[i].shape[1], U[i].shape[1]), jnp.float64) for i in range(d)],
                   [jax.ShapeDtypeStruct((L[i].shape[0], U[i].shape[0], R[i].shape[2]), jnp.float64)
                    for i in range(d)])
        (grad,) = jax.linear_transpose(forward, v_shape)([r[i][:, :k1] for i in range(d)])
        return grad

    def jt(frame, w, p, r):
        n_probes = w[0].shape[0]
        if chunk <= 0 or chunk >= n_probes:
            return jt_slice(frame, w, p, r)
        n_slices = -(-n_probes // chunk)
        pad = n_slices * chunk - n_probes

        def slices(x):
            x = jnp.pad(x, [(0, pad)] + [(0, 0)] * (x.ndim - 1))
            return x.reshape((n_slices, chunk) + x.shape[1:])

        U, L, R, O = frame
        zero = ([jnp.zeros((O[i].shape[1], U[i].shape[1])) for i in range(d)],
                [jnp.zeros((L[i].shape[0], U[i].shape[0], R[i].shape[2])) for i in range(d)])

        def step(total, xs):
            grad = jt_slice(frame, *xs)
            return jax.tree_util.tree_map(jnp.add, total, grad), None

        total, _ = jax.lax.scan(step, zero, ([slices(x) for x in w], [slices(x) for x in p], [slices(x) for x in r]))
        return total

    return jax.jit(jt)


def best_time(call, repeats):
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - t0)
    return best


def jax_jt(data, repeats, chunk):
    d = len(data["U"])
    k1 = min(data["r"][0].shape[1] - 1, d - 1) + 1
    jt = make_jt(d, k1, chunk)
    put = lambda xs: [jax.device_put(x) for x in xs]
    args = ((put(data["U"]), put(data["L"]), put(data["R"]), put(data["O"])), put(data["w"]), put(data["p"]),
            put(data["r"]))
    t0 = time.perf_counter()
    grad = jax.block_until_ready(jt(*args))  # compile + first call
    first = time.perf_counter() - t0
    seconds = best_time(lambda: jax.block_until_ready(jt(*args)), repeats)
    grad = ([np.asarray(g) for g in grad[0]], [np.asarray(g) for g in grad[1]])
    return grad, seconds, first


# ------------------------------------------------------------------------------------------------------ T3K runs


def t3k_process(t3k, in_path, out_path, repeats, chunk):
    def call():
        if os.path.exists(out_path):
            os.remove(out_path)
        run_checked([t3k, "jtr", "--in", in_path, "--out", out_path, "--chunk-size", chunk])

    return best_time(call, repeats)


def bench_row(bench, s):
    """The t3k_bench J^T row of shape s (double, summed, one residual stack, the default space): chunk auto where
    registered, else chunk none. Returns (milliseconds, row name) or None."""
    listed = run_checked([bench, "--benchmark_list_tests", "--benchmark_filter=BM_JT"]).split()
    prefix = f"/d:{s['d']}/N:{s['N']}/n:{s['n']}/r:{s['r']}/K:{s['K']}/W:{s['W']}/chunk:"
    for chunk in ("-1", "0"):
        for family in ("BM_JT<double>", "BM_JT_Target", "BM_JT_Target_Optin"):
            base = f"{family}{prefix}{chunk}/sum:1/nt:1"
            for name in listed:  # listed names may end in /iterations:n/manual_time
                if name != base and not name.startswith(base + "/"):
                    continue
                out = run_checked([bench, f"--benchmark_filter=^{re.escape(base)}", "--benchmark_format=json"])
                rows = json.loads(out[out.index("{"):])["benchmarks"]
                row = [b for b in rows if b.get("run_type", "iteration") == "iteration"][0]
                scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[row.get("time_unit", "ns")]
                return row["real_time"] * scale, base
    return None


def max_relative_difference(ours, theirs):
    """max over blocks of max|ours - theirs| / max|theirs|."""
    worst = 0.0
    for a, b in zip(ours[0] + ours[1], theirs[0] + theirs[1]):
        if a.shape != b.shape:
            return float("inf")
        scale = np.max(np.abs(b)) if b.size else 0.0
        diff = np.max(np.abs(a - b)) if b.size else 0.0
        worst = max(worst, diff / scale if scale > 0 else diff)
    return worst


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("t3k", help="path to the t3k executable")
    parser.add_argument("--bench", help="path to t3k_bench: also time the library call alone (BM_JT)")
    parser.add_argument("--shapes", nargs="*", default=DEFAULT_SHAPES, metavar="d,N,n,r,K,W",
                        help=f"shapes to generate (default: {' '.join(DEFAULT_SHAPES)})")
    parser.add_argument("--input", nargs="*", default=[], help="existing `t3k jtr` inputs to use instead of shapes")
    parser.add_argument("--repeats", type=int, default=3, help="timed calls per measurement (best is kept)")
    parser.add_argument("--chunk-size", default="auto", help="t3k jtr --chunk-size (default auto)")
    parser.add_argument("--jax-chunk", type=int, default=0,
                        help="probes per JAX slice (lax.scan over slices; 0: all probes in one pass, the default)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir", help="where inputs and outputs go (default: a temporary folder, removed)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args()

    workdir = args.workdir or tempfile.mkdtemp(prefix="t3k-jax-")
    os.makedirs(workdir, exist_ok=True)
    cases = [(path, None) for path in args.input]
    if not args.input:
        for index, text in enumerate(args.shapes):
            s = parse_shape(text)
            path = os.path.join(workdir, "jtr_" + text.replace(",", "_") + ".h5")
            write_input(args.t3k, s, path, args.seed + index)
            cases.append((path, s))

    results, failed = [], False
    try:
        for path, s in cases:
            data = read_input(path)
            d = len(data["U"])
            if s is None:
                s = {"d": d, "N": data["U"][0].shape[1], "n": data["U"][0].shape[0],
                     "r": max(x.shape[2] for x in data["L"]), "K": data["r"][0].shape[1] - 1,
                     "W": data["w"][0].shape[0]}
            out_path = path + ".grad.h5"
            t3k_seconds = t3k_process(args.t3k, path, out_path, args.repeats, args.chunk_size)
            t3k_grad = read_grad(out_path, d)
            grad, jax_seconds, jax_first = jax_jt(data, args.repeats, args.jax_chunk)
            diff = max_relative_difference(grad, t3k_grad)
            row = {"shape": shape_label(s), **s, "t3k_process_s": t3k_seconds, "jax_s": jax_seconds,
                   "jax_first_call_s": jax_first, "max_relative_difference": diff,
                   "agree": bool(diff <= TOLERANCE), "jax_backend": jax.default_backend(),
                   "jax_chunk": args.jax_chunk, "t3k_chunk_size": args.chunk_size}
            if args.bench:
                found = bench_row(args.bench, s)
                if found:
                    row["t3k_library_s"], row["bench_row"] = found[0] * 1e-3, found[1]
            t3k_s = row.get("t3k_library_s", t3k_seconds)
            row["jax_over_t3k"] = jax_seconds / t3k_s
            failed = failed or not row["agree"]
            results.append(row)
            if not args.json:
                lib = f"library {row['t3k_library_s'] * 1e3:.1f} ms, " if "t3k_library_s" in row else ""
                print(f"{row['shape']}: T3K {lib}process {t3k_seconds * 1e3:.1f} ms; JAX ({row['jax_backend']}) "
                      f"{jax_seconds * 1e3:.1f} ms (first call {jax_first:.1f} s); JAX / T3K "
                      f"{row['jax_over_t3k']:.2f}; max relative difference {diff:.1e}"
                      f"{'' if row['agree'] else ' > 1e-10: DISAGREE'}", flush=True)
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    if args.json:
        print(json.dumps({"tolerance": TOLERANCE, "jax_version": jax.__version__, "results": results}, indent=1))
    if failed:
        print(f"jax_transpose: JAX and T3K disagree beyond {TOLERANCE:g} relative", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
