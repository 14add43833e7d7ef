#!/usr/bin/env python3
"""Compare lockblame's blame for a hand-off workload with its ground truth.

Usage: check_blame.py TRUTH.json REPORT.json DB [--tol FRACTION]

TRUTH.json is what tests/workloads/handoff.h (or gt.h) writes. Optional keys:
"object_addresses" (a list: conservation is checked on the sum of those
objects' sync_object rows, e.g. one join row per joined thread),
"unattributed_s" (printed, not checked), "unplaced_s" (waiting the truth
cannot place on a site, e.g. within a wake's span between the workload's
log and the wake's return: it widens each site's tolerance),
"all_objects_of_kind" (true: conservation on all the kind's sync_object
rows, for objects the workload cannot name), "waits_partial" (true: the workload's log misses some of
those objects' waits, a runtime's own: conservation is not checked). REPORT.json is the output
of `lockblame report --by-release-site --format json DB`: an array of rows
with at least function, file, line, object, blame_s, share, count.

Checks, each with a tolerance of FRACTION (default 0.10) of the workload's
own total wait:
  1. per release site: |reported blame_s - true blame| (rows summed over
     the site's function name and the workload's object kind), within
     the tolerance plus the truth's unplaced_s
  2. conservation, from the sync_object row of the workload's lock (found by
     its address): |blame_s + handoff_s + unattributed_s - true total wait|
  3. the victims' view: |sync_object.wait_s - true total wait|
and that every site row names the workload's source file.
Prints every measured number, whether it passes or not. Exits 1 on failure.
"""
import argparse
import json
import os
import sqlite3
import sys


def bare(function):
    """A C++ name without its parameters: "record(log&, long)" -> "record".
    A C name as it is. gcc clone suffixes (".constprop.0") are not
    stripped: the report must fold them itself (docs/DESIGN.md rule 5)."""
    return function.split("(")[0] if not function.startswith("(") else function


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("truth")
    ap.add_argument("report")
    ap.add_argument("db")
    ap.add_argument("--tol", type=float, default=0.10)
    a = ap.parse_args()

    with open(a.truth) as f:
        truth = json.load(f)
    try:
        with open(a.report) as f:
            rows = json.load(f)
    except (OSError, ValueError) as e:
        print(f"cannot read the report as JSON: {e}")
        return 1
    if not isinstance(rows, list):
        print(f"report is not a JSON array: {type(rows).__name__}")
        return 1

    kind = truth["object"]
    total = truth["total_wait_s"]
    allowed = a.tol * total
    src = truth.get("source", truth["workload"] + ".c")
    failures = []

    print(f"workload {truth['workload']}: {truth['threads']} threads, "
          f"{truth['duration_s']:.3f} s, object {kind} at 0x{truth['object_address']:x}")
    print(f"truth: total wait {total:.6f} s, hand-off {truth['handoff_s']:.6f} s, "
          f"holds {truth['holds']}")
    print(f"tolerance: {a.tol:.0%} of total wait = {allowed:.6f} s")
    unplaced = truth.get("unplaced_s", 0.0)
    site_allowed = allowed + unplaced
    if "unplaced_s" in truth:
        print(f"unplaced waiting {unplaced:.6f} s: each site's tolerance {site_allowed:.6f} s")
    print("report rows:")
    for r in rows:
        print(f"  {r.get('function')!s:28} {os.path.basename(str(r.get('file'))) }:{r.get('line')}"
              f" {r.get('object')!s:7} blame_s={r.get('blame_s')} share={r.get('share')}"
              f" count={r.get('count')}")

    print(f"{'site':20} {'truth_s':>12} {'reported_s':>12} {'error_s':>12} {'error_%wait':>11}")
    for site, want in truth["sites"].items():
        mine = [r for r in rows
                if r.get("object") == kind and isinstance(r.get("function"), str)
                and bare(r["function"]) == site]
        got = sum(float(r.get("blame_s") or 0) for r in mine)
        err = abs(got - want)
        pct = 100.0 * err / total if total > 0 else 0.0
        ok = err <= site_allowed
        print(f"{site:20} {want:12.6f} {got:12.6f} {err:12.6f} {pct:10.1f}% {'ok' if ok else 'FAIL'}")
        if not ok:
            failures.append(f"{site}: reported {got:.6f} s, truth {want:.6f} s ({pct:.1f}% of wait)")
        for r in mine:
            if os.path.basename(str(r.get("file"))) != src:
                failures.append(f"{site}: row names file {r.get('file')!r}, expected .../{src}")

    con = sqlite3.connect(f"file:{a.db}?mode=ro", uri=True)
    print("sync_object rows:")
    for r in con.execute("SELECT object, address, acquisitions, contended, wait_s, "
                         "blame_s, handoff_s, unattributed_s FROM sync_object"):
        print("  ", r)
    tot = con.execute("SELECT SUM(blame_s + handoff_s + unattributed_s), SUM(wait_s) "
                      "FROM sync_object").fetchone()
    print(f"all objects: blame+handoff+unattributed {tot[0]} s, wait {tot[1]} s "
          "(includes other objects, e.g. main joining its threads; not checked)")
    # A workload may name several objects ("object_addresses", e.g. one per
    # joined thread); conservation is then checked on the sum of their rows.
    addresses = truth.get("object_addresses") or [truth["object_address"]]
    if truth.get("all_objects_of_kind"):
        # The workload cannot name its objects (a runtime's futex words):
        # conservation on all rows of the kind.
        addresses = [r[0] for r in con.execute(
            "SELECT address FROM sync_object WHERE object = ? AND address IS NOT NULL", (kind,))]
        if not addresses:
            failures.append(f"no sync_object row of kind {kind}")
    row = [0.0, 0.0, 0.0, 0.0]
    for addr in addresses:
        r = con.execute("SELECT blame_s, handoff_s, unattributed_s, wait_s FROM sync_object "
                        "WHERE object = ? AND address = ?", (kind, addr)).fetchone()
        if r is None:
            failures.append(f"no sync_object row for the {kind} at 0x{addr:x}")
            row = None
            break
        row = [a + float(b or 0) for a, b in zip(row, r)]
    if row is not None and truth.get("waits_partial"):
        print("conservation not checked: the workload logs only some of the kind's waits "
              f"(reported wait_s {row[3]:.6f} s, logged {total:.6f} s)")
    elif row is not None:
        blame, handoff, unattr, wait = row
        accrued = blame + handoff + unattr
        for name, got in (("blame+handoff+unattributed", accrued), ("wait_s", wait)):
            err = abs(got - total)
            pct = 100.0 * err / total if total > 0 else 0.0
            ok = err <= allowed
            print(f"conservation {name:28} {got:12.6f} vs truth {total:12.6f}: "
                  f"error {pct:.1f}% {'ok' if ok else 'FAIL'}")
            if not ok:
                failures.append(f"conservation: {name} {got:.6f} s vs total wait {total:.6f} s ({pct:.1f}%)")
        print(f"lock's hand-off: reported {handoff:.6f} s, truth {truth['handoff_s']:.6f} s; "
              f"unattributed {unattr:.6f} s" +
              (f", truth {truth['unattributed_s']:.6f} s" if "unattributed_s" in truth else "") +
              " (not checked)")

    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
