#!/usr/bin/env python3
"""Runs the code blocks of README.md and docs/*.md as written, against a built tree (the main leg's build/).

Every fenced block whose language is sh, python, cpp or yaml carries a marker on the line before it, an HTML comment
that the rendered page does not show:

  <!-- docs-check: run -->              sh: run with bash (-e, -o pipefail); python: run with the Python of --python
  <!-- docs-check: config DIR -->       yaml: a complete configuration, run with `t3k fit` as a file placed in DIR
  <!-- docs-check: excerpt FILE -->     every non-blank line of the block appears in FILE, in the same order (runs of
                                        spaces aside)
  <!-- docs-check: skip REASON -->      not run here, for the reason given (builds T3K, needs mpirun or a GPU, ...)

A block of one of those languages without a marker fails the check, so a new block is classified when it is written.
Blocks without a language (output, formulas, file layouts) are text and not checked.

The blocks run in a scratch directory laid out like the repository (build/, tests/, python/ and scripts/ linked,
examples/ copied), so what they write never lands in the tree. Files run in order: README.md, docs/your-data.md
(which write the data other pages read), then the other pages by name; the blocks of a page run top to bottom.

Usage: scripts/check_docs.py [--build build] [--python PYTHON]; exit 0 when every block passes, 1 otherwise.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

LANGUAGES = {"sh", "python", "cpp", "yaml"}
MARKER = re.compile(r"^\s*<!--\s*docs-check:\s*(run|config|excerpt|skip)\b\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)```(\S*)")


def blocks(path):
    """(line number, language, marker kind, marker argument, text) of each fenced block of a Markdown file."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, language = m.group(1), m.group(2)
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith("```"):
            j += 1
        body = [l[len(indent):] if l.startswith(indent) else l.lstrip() for l in lines[i + 1:j]]
        marker = MARKER.match(lines[i - 1]) if i > 0 else None
        out.append((i + 1, language, marker.group(1) if marker else None, marker.group(2) if marker else "",
                    "\n".join(body) + "\n"))
        i = j + 1
    return out


def is_excerpt(text, path):
    """Whether the non-blank lines of `text` appear in the file at `path` in order (runs of spaces ignored, so that
    comments may be aligned differently)."""
    wanted = [" ".join(l.split()) for l in text.split("\n") if l.strip()]
    have = [" ".join(l.split()) for l in open(path, encoding="utf-8").read().split("\n")]
    k = 0
    for line in have:
        if k < len(wanted) and line == wanted[k]:
            k += 1
    return k == len(wanted)


def scratch_tree(repo, build):
    root = tempfile.mkdtemp(prefix="t3k-docs-check-")
    for name in ("tests", "python", "scripts"):
        os.symlink(os.path.join(repo, name), os.path.join(root, name))
    os.symlink(os.path.abspath(build), os.path.join(root, "build"))
    shutil.copytree(os.path.join(repo, "examples"), os.path.join(root, "examples"),
                    ignore=shutil.ignore_patterns("runs", "data.h5", "data.tensor.npy", "__pycache__"))
    return root


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build", help="the build directory (default: build)")
    parser.add_argument("--python", default=sys.executable,
                        help="the Python for python blocks (needs numpy, h5py and the t3k module of BUILD/python)")
    args = parser.parse_args()
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    build = os.path.join(repo, args.build) if not os.path.isabs(args.build) else args.build
    t3k = os.path.join(build, "drivers", "t3k")
    if not os.access(t3k, os.X_OK):
        sys.exit(f"check_docs: no {t3k}: build the main leg first")

    pages = ["README.md", "docs/your-data.md"]
    docs = os.path.join(repo, "docs")
    pages += sorted("docs/" + f for f in os.listdir(docs) if f.endswith(".md") and "docs/" + f not in pages)

    root = scratch_tree(repo, build)
    # One OpenMP thread unless the environment says otherwise: the blocks are small, and two spinning threads on a
    # busy two-core runner made them ten times slower. `python3` and `python` in sh blocks are the Python of
    # --python too.
    shims = os.path.join(root, ".bin")
    os.makedirs(shims)
    for name in ("python3", "python"):
        os.symlink(args.python, os.path.join(shims, name))
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"), OMP_PROC_BIND="false",
               PYTHONPATH=os.path.join(build, "python"), PYTHONDONTWRITEBYTECODE="1",
               PATH=shims + os.pathsep + os.environ.get("PATH", ""))
    failures, counts = [], {"run": 0, "config": 0, "excerpt": 0, "skip": 0}
    try:
        for page in pages:
            for line, language, kind, argument, text in blocks(os.path.join(repo, page)):
                where = f"{page}:{line}"
                if language not in LANGUAGES:
                    continue
                if kind is None:
                    failures.append(f"{where}: a {language} block without a <!-- docs-check: ... --> marker")
                    continue
                counts[kind] += 1
                if kind == "skip":
                    if not argument:
                        failures.append(f"{where}: docs-check: skip needs a reason")
                    continue
                if kind == "excerpt":
                    source = os.path.join(repo, argument)
                    if not os.path.isfile(source):
                        failures.append(f"{where}: docs-check: excerpt of a missing file '{argument}'")
                    elif not is_excerpt(text, source):
                        failures.append(f"{where}: the block is not an excerpt of {argument} (a line differs or "
                                        "is out of order)")
                    continue
                if kind == "config":
                    if language != "yaml":
                        failures.append(f"{where}: docs-check: config is for yaml blocks")
                        continue
                    directory = os.path.join(root, argument)
                    os.makedirs(directory, exist_ok=True)
                    config = os.path.join(directory, f"docs_block_{line}.yaml")
                    with open(config, "w", encoding="utf-8") as f:
                        f.write(text)
                    command = [t3k, "fit", config, "--quiet"]
                elif language == "sh":
                    command = ["bash", "-e", "-o", "pipefail", "-c", text]
                elif language == "python":
                    command = [args.python, "-c", text]
                else:
                    failures.append(f"{where}: docs-check: run is for sh and python blocks (a {language} block "
                                    "is an excerpt of a file CI builds, or skipped)")
                    continue
                start = time.monotonic()
                r = subprocess.run(command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True, timeout=300)
                seconds = time.monotonic() - start
                print(f"[check_docs] {where} ({kind}, {language}): exit {r.returncode}, {seconds:.1f} s")
                if r.returncode != 0:
                    tail = "\n".join(r.stdout.rstrip().split("\n")[-15:])
                    failures.append(f"{where}: exit {r.returncode}\n{tail}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    summary = ", ".join(f"{n} {k}" for k, n in counts.items())
    if failures:
        print("[check_docs] FAILED:\n" + "\n".join(failures))
        print(f"[check_docs] blocks: {summary}")
        return 1
    print(f"[check_docs] every block passed ({summary})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
