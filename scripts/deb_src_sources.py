#!/usr/bin/env python3
"""Prints deb-src entries (deb822) mirroring this machine's own `deb` entries for one suite.

scripts/setup.sh needs Debian's source packages. Rather than naming a mirror, it repeats the URIs, components and
keys that apt already uses for binary packages, so that set-up works wherever apt works (a local mirror, a proxy, a
snapshot). Reads /etc/apt/sources.list, *.list (one-line format) and *.sources (deb822) under /etc/apt/sources.list.d.
Exits 1 with a message when no `deb` entry names the suite.

usage: deb_src_sources.py SUITE [--skip FILE]
"""
import glob
import os
import re
import sys


def deb822_stanzas(text):
    stanza, key = {}, None
    for line in text.splitlines() + [""]:
        if line.startswith("#"):
            continue
        if not line.strip():
            if stanza:
                yield stanza
            stanza, key = {}, None
        elif line[0] in " \t" and key:
            stanza[key] += "\n " + line.strip()  # keeps an inline key block intact
        elif ":" in line:
            key, value = line.split(":", 1)
            key = key.strip().lower()
            stanza[key] = value.strip()


def one_line_entries(text):
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        m = re.match(r"^(deb(?:-src)?)\s+(?:\[([^\]]*)\]\s+)?(\S+)\s+(\S+)\s*(.*)$", line)
        if not m:
            continue
        options = dict(o.split("=", 1) for o in (m.group(2) or "").split() if "=" in o)
        yield {"types": m.group(1), "uris": m.group(3), "suites": m.group(4), "components": m.group(5),
               "signed-by": options.get("signed-by", "")}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    suite = sys.argv[1]
    skip = os.path.realpath(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--skip" else None
    entries = []
    files = ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")) + \
        sorted(glob.glob("/etc/apt/sources.list.d/*.sources"))
    for path in files:
        if not os.path.isfile(path) or os.path.realpath(path) == skip:
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        parsed = deb822_stanzas(text) if path.endswith(".sources") else one_line_entries(text)
        for e in parsed:
            if e.get("enabled", "yes").lower() == "no" or "deb" not in e.get("types", "").split():
                continue
            if suite not in e.get("suites", "").split() or "main" not in e.get("components", "").split():
                continue
            entries.append(e)
    if not entries:
        sys.exit(f"no 'deb' entry for suite {suite} (component main) in /etc/apt/sources.list or "
                 "/etc/apt/sources.list.d/: add one, or a deb-src entry for it, and run set-up again")
    seen = set()
    for e in entries:
        uris = " ".join(u for u in e["uris"].split() if u not in seen)
        if not uris:
            continue
        seen.update(uris.split())
        print("Types: deb-src")
        print(f"URIs: {uris}")
        print(f"Suites: {suite}")
        print("Components: main")
        if e.get("signed-by"):
            print(f"Signed-By: {e['signed-by']}")
        print()


if __name__ == "__main__":
    main()
