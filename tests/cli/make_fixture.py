#!/usr/bin/env python3
"""Build lockblame databases with known contents for the CLI tests.

    make_fixture.py OUTDIR            the fixture set (below)
    make_fixture.py --big N OUT.db    a synthetic DB with N nodes (performance)

Every database follows docs/SCHEMA.md (version 1) exactly. The fixture set:

  base.db       "queue_bench 2": main -> worker -> {queue_push, queue_pop, ...},
                three threads (main + 2 workers), two contended objects.
  more.db       the same program with 4 workers: more idleness at queue_push.
                Ids, frame addresses and module bases all differ from base.db,
                so compare must match contexts by frame path.
  most.db       8 workers, for the 3-run scaling table.
  fixed.db      base.db's program (2 workers) after a fix: queue_push:12 gains
                0.45 s (0.60 -> 0.15), compute loses 0.30 s (1.80 -> 2.10),
                duration 1.50 -> 1.20 s (speedup 1.25x). For compare both ways.
  other.db      fixed.db's contents, but the run is of another program
                ("./other_bench 2"): compare must warn.
  v2.db         base.db with meta.schema_version = '99' (newer than the CLI reads).
  truncated.db  the first half of base.db's bytes.
  corrupt.db    base.db with a page in the middle overwritten.
  notable.db    a SQLite file with only the meta table.
  empty.db      zero bytes.
  text.db       a text file.

The known numbers (seconds) the tests check are in KNOWN below and in the
comments of CONTEXTS.
"""
import os
import random
import shutil
import sqlite3
import sys

SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE run(
  id INTEGER PRIMARY KEY CHECK (id = 1), command TEXT, executable TEXT, pid INTEGER,
  event TEXT, event_requested TEXT, period INTEGER, period_unit TEXT, ns_per_sample REAL,
  start_unix REAL, duration_s REAL, threads INTEGER, samples INTEGER,
  samples_dropped INTEGER, exit_reason TEXT);
CREATE TABLE module(id INTEGER PRIMARY KEY, path TEXT, base INTEGER);
CREATE TABLE frame(id INTEGER PRIMARY KEY, module_id INTEGER, offset INTEGER,
  function TEXT, file TEXT, line INTEGER);
CREATE TABLE node(id INTEGER PRIMARY KEY, parent_id INTEGER, frame_id INTEGER, depth INTEGER);
CREATE TABLE thread(id INTEGER PRIMARY KEY, tid INTEGER, start_frame_id INTEGER,
  creator_node_id INTEGER, start_s REAL, end_s REAL, cpu_s REAL, samples INTEGER,
  samples_dropped INTEGER);
CREATE TABLE metric(node_id INTEGER, thread_id INTEGER, work_s REAL, overhead_s REAL,
  wait_s REAL, idle_mutex_s REAL, idle_spin_s REAL, idle_rwlock_s REAL, idle_cond_s REAL,
  idle_barrier_s REAL, idle_sem_s REAL, idle_join_s REAL, blamed_count INTEGER,
  PRIMARY KEY (node_id, thread_id));
CREATE TABLE site(frame_id INTEGER, thread_id INTEGER, object TEXT, acquisitions INTEGER,
  contended INTEGER, releases INTEGER, PRIMARY KEY (frame_id, thread_id, object));
CREATE TABLE sync_object(id INTEGER PRIMARY KEY, object TEXT, address INTEGER,
  first_node_id INTEGER, acquisitions INTEGER, contended INTEGER, wait_s REAL,
  blame_s REAL, handoff_s REAL, unattributed_s REAL);
CREATE TABLE object_blame(object_id INTEGER, node_id INTEGER, thread_id INTEGER,
  blame_s REAL, count INTEGER, PRIMARY KEY (object_id, node_id, thread_id));
"""

KINDS = ["mutex", "spin", "rwlock", "cond", "barrier", "sem", "join"]

# name -> (module, offset, function, file, line); module 'exe' or 'libc'
FRAMES = {
    "main": ("exe", 0x1160, "main", "queue_bench.c", 60),
    "worker": ("exe", 0x1240, "worker", "queue_bench.c", 40),
    "push_unlock": ("exe", 0x1012, "queue_push", "queue_bench.c", 12),
    "push_signal": ("exe", 0x1030, "queue_push", "queue_bench.c", 14),
    "push_lock": ("exe", 0x1008, "queue_push", "queue_bench.c", 10),
    "pop_unlock": ("exe", 0x1082, "queue_pop", "queue_bench.c", 22),
    "pop_wait": ("exe", 0x1070, "queue_pop", "queue_bench.c", 20),
    "compute": ("exe", 0x0f05, "compute", "queue_bench.c", 5),
    "steal": ("exe", 0x1300, "steal", "queue_bench.c", 70),
    "qpush": ("exe", 0x2008, "_ZN5Queue4pushEi", "queue.cpp", 8),  # Queue::push(int)
    "libc_anon": ("libc", 0x9abc, None, None, 0),  # shown as libc.so.6+0x9abc
}

# Calling contexts (paths from the root's child) of the runs.
CONTEXTS = {
    "main": ("main",),
    "push12": ("main", "worker", "push_unlock"),
    "push14": ("main", "worker", "push_signal"),
    "push10": ("main", "worker", "push_lock"),
    "pop22": ("main", "worker", "pop_unlock"),
    "pop20": ("main", "worker", "pop_wait"),
    "compute": ("main", "worker", "compute"),
    "anon": ("main", "worker", "compute", "libc_anon"),
    "qpush": ("main", "worker", "qpush"),
    "steal": ("main", "worker", "steal"),
}

# Per run: metric rows (context, thread, field, value[, blamed_count]).
def base_metrics():
    return [
        ("main", 0, "work_s", 0.10),
        ("push12", 1, "idle_mutex_s", 0.40, 4), ("push12", 2, "idle_mutex_s", 0.20, 2),
        ("pop22", 1, "idle_mutex_s", 0.15, 3), ("pop22", 2, "idle_mutex_s", 0.05, 1),
        ("push14", 2, "idle_cond_s", 0.10, 1),
        ("compute", 1, "work_s", 1.00), ("compute", 2, "work_s", 0.80),
        ("qpush", 1, "work_s", 0.05),
        ("anon", 2, "work_s", 0.01),
        ("push10", 1, "wait_s", 0.50), ("push10", 1, "overhead_s", 0.02),
        ("push10", 2, "wait_s", 0.34), ("push10", 2, "overhead_s", 0.01),
        ("pop20", 1, "wait_s", 0.11),
    ]
# base: work 1.96, idleness 0.90 (mutex 0.80, cond 0.10), effort 2.86,
# wait 0.95, overhead 0.03.


def split(ctx, field, total, workers, blamed=0):
    """total spread evenly over threads 1..workers."""
    rows = []
    for t in range(1, workers + 1):
        rows.append((ctx, t, field, total / workers, blamed))
    return rows


def scaled_metrics(workers, push12, pop22, compute, steal, qpush):
    rows = [("main", 0, "work_s", 0.10)]
    rows += split("push12", "idle_mutex_s", push12, workers, 2)
    rows += split("pop22", "idle_mutex_s", pop22, workers, 1)
    rows += [("push14", 1, "idle_cond_s", 0.10, 1)]
    rows += split("compute", "work_s", compute, workers)
    rows += [("qpush", 1, "work_s", qpush), ("anon", 2, "work_s", 0.01)]
    rows += split("steal", "work_s", steal, workers)
    rows += split("push10", "wait_s", push12 + 0.05, workers)
    rows += [("pop20", 1, "wait_s", pop22 + 0.10 + 0.01)]
    return rows
# more (4 workers): push12 1.5, pop22 0.3, push14 0.1, compute 1.9, steal 0.1,
# qpush 0.02, anon 0.01, main 0.1 -> effort 4.03. Excess over base:
# push12 +0.9, pop22 +0.1, compute +0.1, steal +0.1, qpush -0.03 (positive 1.2).
# most (8 workers): push12 3.0, pop22 0.5, compute 2.0, steal 0.3, qpush 0.02.

KNOWN = {
    "base": dict(work=1.96, idleness=0.90, effort=2.86, wait=0.95),
}


def build(path, name, workers, metrics, id_base, shuffle_seed, schema_version="1",
          command=None, duration=None):
    rnd = random.Random(shuffle_seed)
    if os.path.exists(path):
        os.unlink(path)
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    db.executemany("INSERT INTO meta VALUES (?, ?)", [
        ("schema_version", schema_version), ("lockblame_version", "0.1.0"),
        ("writer", "liblockblame")])
    if duration is None:
        duration = {2: 1.50, 4: 1.10, 8: 0.90}.get(workers, 1.0)
    db.execute("INSERT INTO run VALUES (1,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", (
        command or "./queue_bench %d" % workers, "/usr/local/bin/queue_bench", 4242 + workers,
        "task-clock", "", 1000000, "ns", 1000000.0, 1700000000.0, duration,
        workers + 1, 3000 + workers, 0, "exit"))
    mod_ids = {"exe": id_base + 3, "libc": id_base + 7}
    db.execute("INSERT INTO module VALUES (?,?,?)",
               (mod_ids["exe"], "/usr/local/bin/queue_bench", 0x555555554000 + id_base * 0x1000))
    db.execute("INSERT INTO module VALUES (?,?,?)",
               (mod_ids["libc"], "/lib/x86_64-linux-gnu/libc.so.6", 0x7ffff7d80000 + id_base * 0x10000))
    names = list(FRAMES)
    rnd.shuffle(names)
    frame_id = {}
    for i, n in enumerate(names):
        frame_id[n] = id_base * 10 + 100 + i
        mod, off, fn, file, line = FRAMES[n]
        db.execute("INSERT INTO frame VALUES (?,?,?,?,?,?)",
                   (frame_id[n], mod_ids[mod], off, fn, file, line))
    # nodes: every prefix of every context path, ids shuffled
    paths = set()
    for p in CONTEXTS.values():
        for k in range(1, len(p) + 1):
            paths.add(p[:k])
    paths = sorted(paths, key=lambda p: (len(p), p))
    ids = list(range(1, len(paths) + 1))
    rnd.shuffle(ids)
    node_id = {(): 0}
    db.execute("INSERT INTO node VALUES (0, NULL, NULL, 0)")
    for p, i in zip(paths, ids):
        node_id[p] = id_base * 1000 + i
        db.execute("INSERT INTO node VALUES (?,?,?,?)",
                   (node_id[p], node_id[p[:-1]], frame_id[p[-1]], len(p)))
    ctx_node = {c: node_id[p] for c, p in CONTEXTS.items()}
    for t in range(workers + 1):
        db.execute("INSERT INTO thread VALUES (?,?,?,?,?,?,?,?,?)", (
            t, 1000 + t, None if t == 0 else frame_id["worker"],
            None if t == 0 else ctx_node["main"], 0.0 if t == 0 else 0.001,
            duration, 0.5, 500, 0))
    cols = ["work_s", "overhead_s", "wait_s"] + ["idle_%s_s" % k for k in KINDS]
    acc = {}
    for row in metrics:
        ctx, t, field, value = row[:4]
        blamed = row[4] if len(row) > 4 else 0
        key = (ctx_node[ctx], t)
        r = acc.setdefault(key, {c: 0.0 for c in cols} | {"blamed_count": 0})
        r[field] += value
        r["blamed_count"] += blamed
    for (n, t), r in acc.items():
        db.execute("INSERT INTO metric VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                   (n, t, *[r[c] for c in cols], r["blamed_count"]))
    # site counts: releases at unlock/signal sites, acquisitions at lock sites
    site_rows = []
    for t in range(1, workers + 1):
        site_rows += [
            (frame_id["push_unlock"], t, "mutex", 0, 0, 1000 // workers),
            (frame_id["pop_unlock"], t, "mutex", 0, 0, 1000 // workers),
            (frame_id["push_lock"], t, "mutex", 1000 // workers, 100 // workers, 0),
        ]
    site_rows += [(frame_id["push_signal"], 2, "cond", 0, 0, 10),
                  (frame_id["pop_wait"], 1, "cond", 10, 5, 0)]
    db.executemany("INSERT INTO site VALUES (?,?,?,?,?,?)", site_rows)
    # sync objects: the queue mutex, the queue cond, and the aggregate row
    by_ctx = {}
    for row in metrics:
        by_ctx[(row[0], row[2])] = by_ctx.get((row[0], row[2]), 0.0) + row[3]
    mutex_blame = by_ctx.get(("push12", "idle_mutex_s"), 0) + by_ctx.get(("pop22", "idle_mutex_s"), 0)
    cond_blame = by_ctx.get(("push14", "idle_cond_s"), 0)
    mutex_wait = by_ctx.get(("push10", "wait_s"), 0)
    cond_wait = by_ctx.get(("pop20", "wait_s"), 0)
    handoff = round(mutex_wait - mutex_blame - 0.01, 6)
    db.execute("INSERT INTO sync_object VALUES (?,?,?,?,?,?,?,?,?,?)", (
        id_base + 1, "mutex", 0x55550000a000 + id_base, ctx_node["push10"], 1000, 100 // workers * workers,
        mutex_wait, mutex_blame, handoff, 0.01))
    db.execute("INSERT INTO sync_object VALUES (?,?,?,?,?,?,?,?,?,?)", (
        id_base + 2, "cond", 0x55550000a040 + id_base, ctx_node["pop20"], 10, 5,
        cond_wait, cond_blame, 0.0, round(cond_wait - cond_blame, 6)))
    db.execute("INSERT INTO sync_object VALUES (?,?,?,?,?,?,?,?,?,?)", (
        id_base + 3, "mutex", None, None, 500, 0, 0.0, 0.0, 0.0, 0.0))
    ob = {}
    for (n, t), r in acc.items():
        for ctx, obj in (("push12", 1), ("pop22", 1), ("push14", 2)):
            if n == ctx_node[ctx]:
                v = r["idle_mutex_s"] + r["idle_cond_s"]
                ob[(id_base + obj, n, t)] = (v, r["blamed_count"])
    for (o, n, t), (v, c) in ob.items():
        db.execute("INSERT INTO object_blame VALUES (?,?,?,?,?)", (o, n, t, v, c))
    db.commit()
    db.close()
    return ctx_node


def fixture_set(out):
    os.makedirs(out, exist_ok=True)
    p = lambda n: os.path.join(out, n)
    build(p("base.db"), "base", 2, base_metrics(), 0, 1)
    build(p("more.db"), "more", 4,
          scaled_metrics(4, push12=1.5, pop22=0.3, compute=1.9, steal=0.1, qpush=0.02), 5, 2)
    build(p("most.db"), "most", 8,
          scaled_metrics(8, push12=3.0, pop22=0.5, compute=2.0, steal=0.3, qpush=0.02), 9, 3)
    fixed = scaled_metrics(2, push12=0.15, pop22=0.20, compute=2.10, steal=0.0, qpush=0.05)
    build(p("fixed.db"), "fixed", 2, fixed, 4, 5, duration=1.20)
    build(p("other.db"), "fixed", 2, fixed, 4, 5, duration=1.20, command="./other_bench 2")
    build(p("v2.db"), "base", 2, base_metrics(), 0, 1, schema_version="99")
    data = open(p("base.db"), "rb").read()
    with open(p("truncated.db"), "wb") as f:
        f.write(data[: len(data) // 2])
    page = int.from_bytes(data[16:18], "big")
    bad = bytearray(data)
    mid = (len(data) // page // 2) * page
    bad[mid:mid + page] = bytes((i * 37 + 11) & 0xff for i in range(page))
    with open(p("corrupt.db"), "wb") as f:
        f.write(bad)
    if os.path.exists(p("notable.db")):
        os.unlink(p("notable.db"))
    db = sqlite3.connect(p("notable.db"))
    db.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)")
    db.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    db.commit()
    db.close()
    open(p("empty.db"), "wb").close()
    with open(p("text.db"), "w") as f:
        f.write("this is not a database\n" * 10)


def big(n, path):
    """n nodes: a random tree of depth <= 24 over 20000 frames, one metric
    row per node for one of 8 threads, a few hundred objects."""
    rnd = random.Random(7)
    if os.path.exists(path):
        os.unlink(path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    db.executescript(SCHEMA)
    db.executemany("INSERT INTO meta VALUES (?, ?)", [("schema_version", "1"),
                   ("lockblame_version", "0.1.0"), ("writer", "liblockblame")])
    db.execute("INSERT INTO run VALUES (1,'./big','/bin/big',1,'task-clock','',1000000,'ns',"
               "1e6,0,10.0,8,1000000,0,'exit')")
    db.execute("INSERT INTO module VALUES (1,'/bin/big',4194304)")
    nframes = 20000
    db.executemany("INSERT INTO frame VALUES (?,?,?,?,?,?)",
                   ((i, 1, i * 16, "fn_%d" % (i % 5000), "big.c", i % 900) for i in range(1, nframes + 1)))
    depth = [0] * n

    def nodes():
        yield (0, None, None, 0)
        for i in range(1, n):
            par = 0 if i < 64 else rnd.randrange(max(1, i - 5000), i)
            if depth[par] >= 24:
                par = rnd.randrange(1, 64)
            depth[i] = depth[par] + 1
            yield (i, par, rnd.randrange(1, nframes + 1), depth[i])
    db.executemany("INSERT INTO node VALUES (?,?,?,?)", nodes())
    db.executemany("INSERT INTO thread VALUES (?,?,?,?,?,?,?,?,?)",
                   ((t, 100 + t, None if t == 0 else 1, None, 0, 10, 1, 1000, 0) for t in range(8)))

    def metrics():
        for i in range(1, n):
            k = i % 10
            idle = [0.0] * 7
            if k < 7:
                idle[k] = 1e-5
            yield (i, i % 8, 1e-4, 0.0, 2e-5 if k == 9 else 0.0, *idle, 1 if k < 7 else 0)
    db.executemany("INSERT INTO metric VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", metrics())
    db.executemany("INSERT INTO site VALUES (?,?,?,?,?,?)",
                   ((f, 1, KINDS[f % 7], 10, 1, 10) for f in range(1, nframes + 1, 7)))
    db.executemany("INSERT INTO sync_object VALUES (?,?,?,?,?,?,?,?,?,?)",
                   ((o, KINDS[o % 7], 0x1000 + o * 64, o, 100, 10, 0.1, 0.08, 0.01, 0.01) for o in range(1, 300)))
    db.executemany("INSERT INTO object_blame VALUES (?,?,?,?,?)",
                   ((o, o * 100 + j, j % 8, 0.01, 1) for o in range(1, 300) for j in range(8)))
    db.commit()
    db.close()


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--big":
        big(int(sys.argv[2]), sys.argv[3])
    elif len(sys.argv) == 2:
        fixture_set(sys.argv[1])
    else:
        sys.exit("usage: make_fixture.py OUTDIR | --big N OUT.db")
