#!/usr/bin/env python3
"""Check whether waits were measured by CPU samples or timed exactly.

Usage: check_sampled_wait.py DB (--object ADDRESS | --context FUNCTION) [--exact]

A spin wait measured by samples (src/blame/spin_sampled.h) is a whole
number of sampling periods: each sample taken in it adds run.ns_per_sample
to the wait. A timed wait is a difference of two timestamps, which is a
whole number of periods (1 ms, to the ns) only by a one-in-a-million chance.

--object ADDRESS: the wait_s of the sync_object row at ADDRESS.
--context FUNCTION: the wait_s of each thread's metric row whose calling
  context ends in FUNCTION (gcc clones such as FUNCTION.constprop.0
  included), rows with wait_s > 0; there must be one at least.
Sampled (default): every figure is a whole number of periods and > 0.
--exact: none is.
Prints each figure; exits 1 on failure, 3 where there is no such wait.
"""
import argparse
import sqlite3
import sys


def figures(con, args):
    """[(label, wait_s)] for the object or the context asked for."""
    if args.object is not None:
        address = int(args.object, 0)
        return [(f"lock 0x{address:x}", r[0]) for r in con.execute(
            "SELECT wait_s FROM sync_object WHERE address = ?", (address,))]
    rows = con.execute(
        "SELECT m.thread_id, f.function, m.wait_s FROM metric m"
        " JOIN node n ON n.id = m.node_id JOIN frame f ON f.id = n.frame_id"
        " WHERE m.wait_s > 0 AND (f.function = ? OR f.function LIKE ? || '.%')"
        " ORDER BY m.thread_id", (args.context, args.context))
    return [(f"{fn} in thread {tid}", w) for tid, fn, w in rows]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    which = ap.add_mutually_exclusive_group(required=True)
    which.add_argument("--object")
    which.add_argument("--context")
    ap.add_argument("--exact", action="store_true")
    args = ap.parse_args()

    con = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
    period_ns = round(con.execute("SELECT ns_per_sample FROM run").fetchone()[0])
    found = figures(con, args)
    if not found:
        print(f"FAILED: no wait for {args.object or args.context} in {args.db}")
        return 3
    failures = 0
    for label, wait_s in found:
        wait_ns = round(wait_s * 1e9)
        periods, rest_ns = divmod(wait_ns, period_ns)
        sampled = rest_ns == 0 and wait_ns > 0
        print(f"{label}: wait {wait_s:.9f} s = {periods} periods of {period_ns} ns"
              f" + {rest_ns} ns: {'measured by samples' if sampled else 'timed'}")
        if sampled == args.exact:
            failures += 1
    if failures:
        print(f"FAILED: {failures} of {len(found)} wait figure(s) "
              + ("measured by samples; expected timed waits" if args.exact
                 else "timed; expected waits measured by samples"))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
