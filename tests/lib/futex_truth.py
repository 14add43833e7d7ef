#!/usr/bin/env python3
"""Ground truth of the futex rule for an event log of the futex workloads.

Usage: futex_truth.py EVENTS > TRUTH.json

The workloads (tests/workloads_user/gt_futex_*) log, one per line:
  workload NAME          source FILE          threads N          duration_s S
  wait T0 T1             a thread blocked from T0 to T1 (CLOCK_MONOTONIC ns)
  signal T0 T1 SITE      the function SITE made a wake (a release, post,
                         notify, count-down, arrival or send): it logged T0
                         just before the call and T1 when the call returned
  partial 1              the runtime also waits on its own (a thread pool's
                         start and end): conservation cannot be checked
and this script applies docs/DESIGN.md rule 3 for futex words, as
tests/workloads/gt.h's gt_sweep_signal does for condition variables: the
idleness accrued (waiting threads x time) since the previous wake is
blamed on the next wake's site; what accrues after the last wake is
unattributed. A wake is placed at T0; lockblame accounts it somewhere
in [T0, T1], so the waiting within each wake's span may be blamed on
that wake where the truth gives it to the next one, or leaves it
unattributed: the sum is "unplaced_s", by which check_blame.py widens
each site's tolerance (under a millisecond's worth on a quiet machine, more
where the machine keeps the waking thread off its CPU in the span).
It writes the JSON that tests/lib/check_blame.py reads,
with object "futex" and "all_objects_of_kind": the waits of a runtime's
object span words the workload cannot name (libstdc++'s waiter pool,
a Rust Condvar's mutex), so conservation is checked on all futex rows.
"""
import json
import sys


def waiting_within(waits, t0, t1):
    """The waiting of all the waits within [t0, t1], in ns."""
    return sum(max(0, min(w1, t1) - max(w0, t0)) for w0, w1 in waits)


def main():
    head = {}
    events = []  # (t, dw, site)
    waits, spans = [], []  # (t0, t1): the waits, the wakes' spans
    total = 0.0
    counts = {}
    with open(sys.argv[1]) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "wait":
                t0, t1 = int(w[1]), int(w[2])
                if not 0 < t0 <= t1:
                    sys.exit(f"futex_truth.py: a wait from {t0} to {t1}: {line.strip()}")
                events += [(t0, +1, None), (t1, -1, None)]
                waits.append((t0, t1))
                total += t1 - t0
            elif w[0] == "signal":
                t0, t1 = int(w[1]), int(w[2])
                if not 0 < t0 <= t1:
                    sys.exit(f"futex_truth.py: a wake's span from {t0} to {t1}: {line.strip()}")
                events.append((t0, 0, w[3]))
                spans.append((t0, t1))
                counts[w[3]] = counts.get(w[3], 0) + 1
            else:
                head[w[0]] = w[1]
    events.sort(key=lambda e: (e[0], e[1] == 0))
    blame = {site: 0.0 for site in counts}
    pending, waiting, last = 0.0, 0, None
    for t, dw, site in events:
        if last is not None:
            pending += waiting * (t - last)
        last = t
        waiting += dw
        if site is not None:
            blame[site] += pending
            pending = 0.0
    truth = {
        "workload": head["workload"],
        "source": head["source"],
        "object": "futex",
        "object_address": 0,
        "all_objects_of_kind": True,
        "threads": int(head["threads"]),
        "duration_s": float(head["duration_s"]),
        "total_wait_s": total / 1e9,
        "handoff_s": 0.0,
        "unattributed_s": pending / 1e9,
        "unplaced_s": sum(waiting_within(waits, t0, t1) for t0, t1 in spans) / 1e9,
        "sites": {s: b / 1e9 for s, b in blame.items()},
        "holds": counts,
        "waits_partial": head.get("partial") == "1",
    }
    json.dump(truth, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
