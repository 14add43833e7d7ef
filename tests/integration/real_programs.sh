#!/usr/bin/env bash
# Real threaded programs under the library: same output and exit code as
# native runs, and a readable profile (report --by-release-site exits 0).
#   sysbench mutex / threads (timings differ: exit code + report only; the
#     top default release-site row of sysbench mutex is a mutex)
#   pigz -p 2 compress + decompress (byte-identical .gz and round trip)
#   CPython threads on threading.Lock and a Condition (identical output)
#   xz -T2 and zstd -T2 round trips (identical compressed output)
#   pigz and xz: the profile's work is >= 90% of the threads' CPU time
# A missing program skips its part; the others run, and the test is then a
# skip (exit 77) unless one of them failed.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI"
have() { command -v "$1" >/dev/null 2>&1 || { skip_part "$1"; return 1; }; }
secs() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
n=0

# under NAME CMD...: run CMD preloaded with its own database; sets rc_pre.
under() {
    local name=$1; shift
    rc_pre=0
    LOCKBLAME_OUTPUT=$tmp/$name.db LD_PRELOAD=$LOCKBLAME_LIB "$@" || rc_pre=$?
}
profile_ok() {
    local db=$tmp/$1.db
    [ -s "$db" ] || { bad "$1: no profile"; return; }
    "$LOCKBLAME_CLI" report --by-release-site "$db" >"$tmp/$1.report" 2>&1 || bad "$1: report --by-release-site exited $?"
    [ -z "${2:-}" ] || "$LOCKBLAME_CLI" report --by-lock "$db" >/dev/null 2>&1 || bad "$1: report --by-lock exited $?"
    echo "  profile: $(sed -n 's/^lockblame: //p' "$tmp/$1.err" 2>/dev/null | head -1)"
}

# work_ok NAME: work is CPU time, user and kernel (docs/DESIGN.md "Metrics"), so a
# profile's work is at least 90% of its threads' own CPU clocks, signal
# blocked or not (liblzma's workers block every signal). Below 0.1 s of
# CPU (a hundred samples) sampling noise and sync-code samples (overhead)
# weigh too much for that: there work + overhead must reach 90%.
work_ok() {
    local db=$tmp/$1.db work over cpu
    [ -s "$db" ] || return 0
    IFS='|' read -r work over cpu <<<"$(sqlite3 "$db" \
        "SELECT (SELECT coalesce(sum(work_s), 0) FROM metric), (SELECT coalesce(sum(overhead_s), 0) FROM metric),
                (SELECT sum(cpu_s) FROM thread)")"
    echo "  $1: work $work s + overhead $over s of $cpu s CPU"
    awk -v w="$work" -v o="$over" -v c="$cpu" 'BEGIN { exit !(c <= 0 || (c < 0.1 ? w + o : w) >= 0.9 * c) }' ||
        bad "$1: work $work s (+ overhead $over s) is below 90% of the threads' CPU time $cpu s"
}

# Input: 8 MB of compressible, not trivially repetitive text.
python3 -c '
import random, sys
r = random.Random(7)
words = [("".join(r.choice("abcdefghij") for _ in range(r.randint(2, 9)))) for _ in range(5000)]
out = sys.stdout
for i in range(800000):
    out.write(r.choice(words) + (" " if i % 13 else "\n"))
' >"$tmp/input"

if have sysbench; then
    for t in mutex threads; do
        echo "== sysbench $t"
        case $t in
            # One mutex, no work between locks, long enough for the threads to
            # overlap on 2 CPUs: the mutex is contended. 1M locks a thread ran
            # 0.15 s natively, and once in ~10 runs the mutex's blame fell
            # below the start barrier's (~1 ms); 3M: ~0.45 s, mutex blame
            # 0.1-0.2 s against the barrier's 1 ms.
            mutex) args=(mutex --threads=4 --mutex-num=1 --mutex-locks=3000000 --mutex-loops=0 run) ;;
            # Each of its yields, beside busy processes, gives the CPU away
            # for a time slice: 200K of them (100 an event, 2000 events) took
            # 76 s natively beside two busy loops; 2000 of them take ~1 s.
            threads) args=(threads --threads=4 --thread-yields=10 --thread-locks=4 --time=0 --events=200 run) ;;
        esac
        sysbench "${args[@]}" >"$tmp/sb.nat" 2>&1; rc_nat=$?
        start=$(date +%s.%N)
        under "sb_$t" sysbench "${args[@]}" >"$tmp/sb.pre" 2>"$tmp/sb_$t.err"
        echo "  exit native $rc_nat, preloaded $rc_pre; preloaded took $(secs "$start") s"
        [ "$rc_nat" = "$rc_pre" ] || bad "sysbench $t: exit $rc_pre preloaded vs $rc_nat native"
        grep -E 'total time:|total number of events:' "$tmp/sb.pre" | sed 's/^ */  preloaded /'
        profile_ok "sb_$t" by-lock
        if [ $t = mutex ]; then
            # Structural waits (main joining the workers) are reported apart
            # (docs/DESIGN.md rule 6): the top default row is the contended mutex.
            top=$("$LOCKBLAME_CLI" report --format json "$tmp/sb_$t.db" 2>/dev/null |
                python3 -c 'import json,sys; r=json.load(sys.stdin); print(r[0]["object"] if r else "none", r[0]["function"] if r else "")')
            echo "  top default row: $top"
            [ "${top%% *}" = mutex ] || bad "sysbench mutex: top default row is '$top', not a mutex"
        fi
        n=$((n + 1))
    done
fi

if have pigz; then
    echo "== pigz -p 2"
    pigz -p 2 -c "$tmp/input" >"$tmp/nat.gz"; rc_nat=$?
    start=$(date +%s.%N)
    under pigz pigz -p 2 -c "$tmp/input" >"$tmp/pre.gz" 2>"$tmp/pigz.err"
    under pigz_d pigz -p 2 -d -c "$tmp/pre.gz" >"$tmp/pigz.out" 2>"$tmp/pigz_d.err"
    echo "  exit native $rc_nat, preloaded $rc_pre; preloaded round trip took $(secs "$start") s; $(stat -c %s "$tmp/pre.gz") bytes"
    cmp -s "$tmp/nat.gz" "$tmp/pre.gz" || bad "pigz: .gz differs from the native one"
    cmp -s "$tmp/input" "$tmp/pigz.out" || bad "pigz: round trip differs"
    profile_ok pigz; profile_ok pigz_d
    work_ok pigz; work_ok pigz_d
    n=$((n + 1))
fi

for z in "xz -T2 -3" "zstd -T2 -q -3"; do
    set -- $z
    have "$1" || continue
    echo "== $z round trip"
    "$@" -c "$tmp/input" >"$tmp/nat.z"; rc_nat=$?
    start=$(date +%s.%N)
    under "$1" "$@" -c "$tmp/input" >"$tmp/pre.z" 2>"$tmp/$1.err"
    r1=$rc_pre
    under "$1_d" "$1" -T2 -q -d -c "$tmp/pre.z" >"$tmp/$1.out" 2>"$tmp/$1_d.err"
    echo "  exit native $rc_nat, preloaded $r1/$rc_pre; preloaded round trip took $(secs "$start") s"
    [ "$rc_nat" = 0 ] && [ "$r1" = 0 ] && [ "$rc_pre" = 0 ] || bad "$1: exit codes"
    cmp -s "$tmp/nat.z" "$tmp/pre.z" || bad "$1: compressed output differs from the native one"
    cmp -s "$tmp/input" "$tmp/$1.out" || bad "$1: round trip differs"
    profile_ok "$1"; profile_ok "$1_d"
    [ "$1" = xz ] && { work_ok xz; work_ok xz_d; }
    n=$((n + 1))
done

# A version manager's python3 is a shell script that execs the real one
# (and the exec'd image writes <name>.<pid>.db); use the system's if any.
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
if have "$PY"; then
    echo "== CPython: threads on threading.Lock and a Condition"
    cat >"$tmp/threads.py" <<'PY'
import threading
N, ITER = 6, 20000
lock = threading.Lock()
cond = threading.Condition()
count = 0
turn = 0
order = []
def work(i):
    global count, turn
    for k in range(ITER):
        with lock:
            count += 1
    for k in range(50):               # strict round robin through the condition
        with cond:
            while turn != i:
                cond.wait()
            order.append(i)
            turn = (turn + 1) % N
            cond.notify_all()
ts = [threading.Thread(target=work, args=(i,)) for i in range(N)]
for t in ts: t.start()
for t in ts: t.join()
print("count", count, "expected", N * ITER)
print("order ok", order == [i % N for i in range(50 * N)])
PY
    "$PY" "$tmp/threads.py" >"$tmp/py.nat" 2>&1; rc_nat=$?
    start=$(date +%s.%N)
    under py "$PY" "$tmp/threads.py" >"$tmp/py.pre" 2>"$tmp/py.err"
    echo "  exit native $rc_nat, preloaded $rc_pre; preloaded took $(secs "$start") s"
    sed 's/^/  /' "$tmp/py.pre"
    [ "$rc_nat" = "$rc_pre" ] || bad "python: exit $rc_pre preloaded vs $rc_nat native"
    cmp -s "$tmp/py.nat" "$tmp/py.pre" || bad "python: output differs"
    grep -v '^lockblame:' "$tmp/py.err" | sed 's/^/  stderr: /' || true
    profile_ok py
    n=$((n + 1))
fi

echo "$n program(s) run, $errors problem(s)"
finish
