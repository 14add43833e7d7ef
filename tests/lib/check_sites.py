#!/usr/bin/env python3
"""Release sites as the user wrote them (docs/DESIGN.md rule 5), on top of
check_blame.py's blame checks.

Usage: check_sites.py TRUTH.json REPORT.json DB

For every site of the workload's ground truth, the report's rows of the
workload's object kind that carry its blame must be named by the bare
function (no gcc clone suffix such as .constprop.0, .isra.0, .part.0,
.cold), name the workload's source file and a line > 0. Every site must
have a row. The frame table must still hold the raw symbol of any clone
the binary has (given as --clones NAME...). Exits 1 on failure.
"""
import argparse
import json
import os
import re
import sqlite3
import sys

CLONE = re.compile(r"\.(constprop|isra|part|cold|localalias|lto_priv)(\.\d+)?")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("truth")
    ap.add_argument("report")
    ap.add_argument("db")
    ap.add_argument("--clones", nargs="*", default=[])
    a = ap.parse_args()
    truth = json.load(open(a.truth))
    rows = json.load(open(a.report))
    src = truth.get("source", truth["workload"] + ".c")
    failures = []
    for r in rows:
        fn = str(r.get("function"))
        if CLONE.search(fn):
            failures.append(f"row names a gcc clone: {fn}")
    for site in truth["sites"]:
        mine = [r for r in rows if r.get("object") == truth["object"]
                and str(r.get("function")).split("(")[0] == site]
        print(f"site {site}: " + ", ".join(
            f"{r['function']} ({os.path.basename(str(r.get('file')))}:{r.get('line')}) "
            f"{r.get('blame_s')} s count {r.get('count')}" for r in mine))
        if not mine:
            failures.append(f"no row for site {site}")
        for r in mine:
            if os.path.basename(str(r.get("file"))) != src or not r.get("line"):
                failures.append(f"{site}: row at {r.get('file')}:{r.get('line')}, "
                                f"expected .../{src}:LINE")
    con = sqlite3.connect(f"file:{a.db}?mode=ro", uri=True)
    for raw in a.clones:
        n = con.execute("SELECT COUNT(*) FROM frame WHERE function = ?", (raw,)).fetchone()[0]
        print(f"frame table rows with raw symbol {raw}: {n}")
        if n == 0:
            failures.append(f"frame table lost the raw symbol {raw}")
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
