#!/usr/bin/env bash
# lockblame overhead and scale benchmarks: run by `make bench`.
#
# Every program in $BUILD/bench runs natively and under LD_PRELOAD, with the
# repetitions interleaved (native, lockblame, ... in a rotating order) so that
# a slow spell of the machine hits every variant alike; each figure is the
# median over the repetitions. Prints ONE table and writes it to
# $BUILD/bench/results.txt. It reports figures; it never fails on time. The
# exit status is non-zero only if a program could not run at all.
#
# Knobs (environment): BENCH_REPS (default 7), BENCH_QUICK=1 (small sizes,
# 3 reps: a smoke test of the script, figures meaningless).
set -u
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
B=$BUILD/bench
LIB=$(realpath "$BUILD/liblockblame.so")
FWD=$(realpath "$BUILD/bench/libforward.so")
OUT=$B/out
REPS=${BENCH_REPS:-7}
QUICK=${BENCH_QUICK:-0}

# sizes
PAIRS=20000000          # uncontended pairs per timed run
CG_N=100000             # callgrind: N and 2N pairs
MIX_OPS=10000000        # lock mix: acquisitions per thread
MIX_LOCKS=32
MIX2_OPS=2000000         # lock mix at ~3M acq/s/thread: acquisitions per thread
MIX2_WORK=150           # xorshift rounds between acquisitions
MIX9_OPS=500000         # the target lock mix: acquisitions per thread ...
MIX9_LOCKS=64           # ... on 64 mutexes ...
MIX9_WORK=640           # ... with ~1 us of work (xorshift rounds) between acquisitions
MIX9_REPS=$((REPS * 2 + 1)) # its rounds: the target is a small percentage
HANDOFF_S=1
PINGPONG_N=2000000      # mutex ping-pong: acquisitions per thread
TQ_WORKERS=4            # task queue: workers (plus one producer)
TQ_TASKS=1000000        # tasks, one lock round trip each
SB_EVENTS=300           # sysbench threads: events (1000 yields each, 4 threads, 2 locks)
CHURN_TOTAL=10000000
CHURN_LIVE=300000
CHURN_CG_N=200000       # churn under callgrind: N and 2N locks ...
CHURN_CG_LIVE=20000     # ... cycling through this many slots
CONDPP_CG_N=10000       # cond ping-pong under callgrind: N and 2N rounds
HOLD_N=2000000          # bench/hold_cost: contended holds per run
HOLD_CG_N=100000        # ... and under callgrind
CCT_TAIL=20             # cctgen: frames of its own under each leaf
CCT_SPIN_US=100         # CPU per leaf
CCT_PERIOD_NS=50000     # sampling period for cctgen (shorter loses samples, see PERFORMANCE.md)
CCT_LEAVES="400 4000 40000"   # -> about 10K, 100K, 1M CCT nodes
SAMPLE_ITERS=20000
THREADS_N=10000         # thread create+join: threads per run
THREADS_BATCH=500       # ... and alive at once in the batch variant
MMAP_N=100000           # mmap+munmap pairs of each kind per run
if [ "$QUICK" = 1 ]; then
    THREADS_N=1000 THREADS_BATCH=100 MMAP_N=5000
    REPS=3 PAIRS=1000000 CG_N=10000 MIX_OPS=200000 MIX2_OPS=100000 MIX9_OPS=50000 MIX9_REPS=3 HANDOFF_S=0.2 PINGPONG_N=100000
    TQ_TASKS=50000 SB_EVENTS=20
    CHURN_TOTAL=600000 CHURN_LIVE=30000 CHURN_CG_N=20000 CONDPP_CG_N=1000 HOLD_N=100000 HOLD_CG_N=10000
    CCT_LEAVES="40 400" SAMPLE_ITERS=2000
fi

rm -rf "$OUT"
mkdir -p "$OUT"
ROWS=$OUT/rows.tsv
ANOM=$OUT/anomalies.txt
LOG=$OUT/stderr.log
: >"$ROWS"
: >"$ANOM"
: >"$LOG"

for p in uncontended lockmix handoff pingpong taskq condpp stackuse churn cctgen spawn threads forktree mmapcost; do
    if [ ! -x "$B/$p" ]; then
        echo "bench: $B/$p missing; run 'make bench'" >&2
        exit 1
    fi
done

# human 10000000 -> 10M, 300000 -> 300K
human() { awk -v n="$1" 'BEGIN { if (n >= 1e6 && n % 1e6 == 0) printf "%dM", n / 1e6; else if (n >= 1e3 && n % 1e3 == 0) printf "%dK", n / 1e3; else printf "%d", n }'; }

row() { printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" >>"$ROWS"; }
anomaly() { echo "$*" >>"$ANOM"; }
progress() { printf 'bench: %s\n' "$*" >&2; }

. bench/lib.sh # val, median, calc
ratio() { calc '%.2fx' "$1" "$2" 'b / a'; }          # lockblame / native
overhead() { calc '%+.1f%%' "$1" "$2" '(b / a - 1) * 100'; }
fmt() { [ -z "$2" ] && echo n/a || awk -v v="$2" "BEGIN { printf \"$1\", v }"; }

# run NAME VARIANT TAG PROG ARGS...: one run through spawn; VARIANT is
# native, or lb followed by LOCKBLAME_* assignments (separated by commas or
# spaces). Output in $OUT/NAME.TAG.REP.
DB=$OUT/profile.db
run() {
    local name=$1 variant=$2 tag=$3
    shift 3
    local f=$OUT/$name.$tag.$REP
    local envs=()
    if [ "$variant" != native ]; then
        rm -f "$DB"
        envs=(LD_PRELOAD="$LIB" LOCKBLAME_OUTPUT="$DB")
        local v
        for v in ${variant//,/ }; do [ "$v" != lb ] && envs+=("$v"); done
    fi
    echo "== $name $tag rep $REP: ${envs[*]} $*" >>"$LOG"
    "$B/spawn" "${envs[@]}" "$@" >"$f" 2>>"$LOG"
    if [ "$variant" != native ] && [ -f "$DB" ]; then
        sqlite3 "$DB" 'SELECT printf("lb_samples %d", SUM(samples)), printf("lb_dropped %d", SUM(samples_dropped)) FROM thread' \
            2>/dev/null | tr '|' '\n' >>"$f"
    fi
    local st
    st=$(val spawn_status "$f")
    if [ "$st" != 0 ]; then
        anomaly "$name/$tag exited with status ${st:-?}: ${envs[*]} $*"
    fi
}

# collect NAME TAG KEY -> the values of KEY over all reps
collect() {
    local r vals=()
    for ((r = 1; r <= REPS; r++)); do
        [ -f "$OUT/$1.$2.$r" ] && vals+=("$(val "$3" "$OUT/$1.$2.$r")")
    done
    median "${vals[@]}"
}

# paired NAME TAGA TAGB KEY -> "MEDIAN MIN MAX" of the per-round ratios
# B/A. Runs of one round are seconds apart, so a ratio within a round
# cancels the slow drifts of a shared machine better than a ratio of medians.
paired() {
    local r a b
    for ((r = 1; r <= REPS; r++)); do
        a=$(val "$4" "$OUT/$1.$2.$r" 2>/dev/null)
        b=$(val "$4" "$OUT/$1.$3.$r" 2>/dev/null)
        [ -n "$a" ] && [ -n "$b" ] && awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0) printf "%.6f\n", b / a }'
    done | sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print "" ; exit }
        m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        print m, v[1], v[NR] }'
}
# pratio / poverhead NAME TAGA TAGB KEY -> "2.31x" / "+21.0%" (median);
# prange ... -> "rounds 2.10-2.77x" / "rounds +5.0..+30.1%"
pratio() { paired "$@" | awk '{ if (NF) printf "%.2fx", $1; else printf "n/a" }'; }
poverhead() { paired "$@" | awk '{ if (NF) printf "%+.1f%%", ($1 - 1) * 100; else printf "n/a" }'; }
prange() { paired "$@" | awk '{ if (NF) printf "rounds %.2f-%.2fx", $2, $3 }'; }
prange_pct() { paired "$@" | awk '{ if (NF) printf "rounds %+.0f..%+.0f%%", ($2 - 1) * 100, ($3 - 1) * 100 }'; }

# dropped_note NAME TAG -> "samples dropped 0.4% (12 of 3000)": medians of
# the preloaded runs' database counts (samples recorded + dropped)
dropped_note() {
    local s d
    s=$(collect "$1" "$2" lb_samples)
    d=$(collect "$1" "$2" lb_dropped)
    if [ -z "$s" ] || [ -z "$d" ]; then
        printf 'samples dropped n/a'
    else
        awk -v s="$s" -v d="$d" 'BEGIN { t = s + d; printf "samples dropped %.1f%% (%d of %d)", t ? 100 * d / t : 0, d, t }'
    fi
}

# handoff_rate_row LABEL NAME [VARIANT]: the fraction of successive acquisitions made
# by another thread (the program counts it under the lock), native vs
# lockblame at default settings; the change is relative (target <=20%).
# The notes add hand-offs a second: where throughput falls and hand-offs
# a second stay, the rate per acquisition rises without the lock passing
# between threads any more often. And how often threads blocked (voluntary
# context switches per 1000 acquisitions, bench.h): a profiler that makes
# waiters sleep more often pays a wake-up each time, which on a large or
# virtual machine costs more than its own work.
handoff_rate_row() {
    local a b pa pb v=${3:-lb}
    a=$(collect "$2" native handoff_rate)
    b=$(collect "$2" "$v" handoff_rate)
    pa=$(collect "$2" native handoffs_per_s)
    pb=$(collect "$2" "$v" handoffs_per_s)
    sa=$(collect "$2" native sleeps_per_kacq)
    sb=$(collect "$2" "$v" sleeps_per_kacq)
    local goal="target: change <=20%"
    [ "$v" = lb ] || goal="a reference setting, not the default: no target"
    row "$1 hand-off rate (successive acquisitions by another thread)" "$(fmt %.4f "$a")" "$(fmt %.4f "$b")" \
        "$(calc '%+.0f%%' "$a" "$b" '(a > 0 ? (b / a - 1) * 100 : 0)')" \
        "$goal; medians of the rounds; hand-offs a second $(fmt %.0f "$pa") native, $(fmt %.0f "$pb") lockblame ($(calc '%+.0f%%' "$pa" "$pb" '(a > 0 ? (b / a - 1) * 100 : 0)')); threads blocking per 1000 acquisitions $(fmt %.2f "$sa") native, $(fmt %.2f "$sb") lockblame"
}

# interleave NAME "TAG=VARIANT ..." PROG ARGS...: REPS rounds, each running
# every variant once, the starting variant rotating from round to round.
interleave() {
    local name=$1 specs=($2)
    shift 2
    local n=${#specs[@]} i
    for ((REP = 1; REP <= REPS; REP++)); do
        for ((i = 0; i < n; i++)); do
            local s=${specs[$(((i + REP) % n))]}
            run "$name" "${s#*=}" "${s%%=*}" "$@"
        done
    done
}

uname_r=$(uname -r)
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
header="lockblame bench, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($cpu), Linux $uname_r, load $(cut -d' ' -f1 /proc/loadavg) at start
$REPS interleaved rounds; native/lockblame columns: medians; ratio/overhead: median of the per-round ratios (lockblame/native), their spread in the notes"

# --- 1, 2: uncontended pairs -------------------------------------------------
have_valgrind=0
command -v valgrind >/dev/null 2>&1 && have_valgrind=1

# instructions for N pairs; preloaded when $1 = lb (sampling off: under
# valgrind a time-based sample lands every few hundred pairs and the unwind
# would swamp the count). LD_PRELOAD goes on valgrind itself: valgrind adds
# its own preloads to the client's LD_PRELOAD and keeps ours. (Putting
# `env LD_PRELOAD=...` after valgrind would profile `env`, not the program,
# unless --trace-children=yes.)
# Counted inside the pair loop only (--toggle-collect), so start-up and the
# database write at exit (whose work varies from run to run) stay out; the
# program runs N/10+1 warm-up pairs and N timed ones through that loop, so
# Ir(2N) - Ir(N) covers 1.1N pairs.
callgrind_ir() {
    local variant=$1 kind=$2 n=$3 f=$OUT/cg.$1.$2.$3 fn=mutex_pairs
    [ "$kind" = spin ] && fn=spin_pairs
    [ "$kind" = sem ] && fn=sem_pairs
    if [ "$variant" = lb ]; then
        LD_PRELOAD=$LIB LOCKBLAME_EVENT=none LOCKBLAME_OUTPUT=$OUT/cg.db \
            valgrind --tool=callgrind --toggle-collect=$fn --callgrind-out-file="$f" \
            "$B/uncontended" "$kind" "$n" >/dev/null 2>>"$LOG"
        if ! grep -q "liblockblame" "$f" 2>/dev/null; then
            anomaly "callgrind: no liblockblame frames in $f (wrappers not interposed?)"
        fi
    else
        valgrind --tool=callgrind --toggle-collect=$fn --callgrind-out-file="$f" \
            "$B/uncontended" "$kind" "$n" >/dev/null 2>>"$LOG"
    fi
    awk '/^(summary|totals):/ { print $2; exit }' "$f" 2>/dev/null
}
ir_per_pair() {
    local a b
    a=$(callgrind_ir "$1" "$2" "$CG_N")
    b=$(callgrind_ir "$1" "$2" $((2 * CG_N)))
    [ -n "$a" ] && [ -n "$b" ] && awk -v a="$a" -v b="$b" -v n="$CG_N" 'BEGIN { printf "%.1f\n", (b - a) / (1.1 * n) }'
}

# pair_target KIND: the uncontended pair's target (docs/PERFORMANCE.md "Targets").
pair_target() {
    case $1 in
    spin) echo "target <=1.3x" ;;
    *) echo "target <=1.5x (aim 1.2x)" ;;
    esac
}

for kind in mutex mutex-mt mutex-once spin sem; do
    progress "uncontended $kind pair (${REPS}x3 runs of $PAIRS pairs)"
    interleave "pair-$kind" "native=native on=lb off=lb,LOCKBLAME_EVENT=none" \
        "$B/uncontended" "$kind" "$PAIRS"
    nat=$(collect "pair-$kind" native ns_per_pair)
    on=$(collect "pair-$kind" on ns_per_pair)
    off=$(collect "pair-$kind" off ns_per_pair)
    row "$kind lock+unlock, ns/pair (sampling 1 ms)" "$(fmt %.1f "$nat")" "$(fmt %.1f "$on")" \
        "$(pratio "pair-$kind" native on ns_per_pair)" "$(pair_target "$kind"); $(prange "pair-$kind" native on ns_per_pair)"
    row "$kind lock+unlock, ns/pair (sampling off)" "$(fmt %.1f "$nat")" "$(fmt %.1f "$off")" \
        "$(pratio "pair-$kind" native off ns_per_pair)" "LOCKBLAME_EVENT=none; $(prange "pair-$kind" native off ns_per_pair)"
    if [ "$have_valgrind" = 1 ]; then
        progress "uncontended $kind pair under callgrind"
        inat=$(ir_per_pair native "$kind")
        ilb=$(ir_per_pair lb "$kind")
        row "$kind lock+unlock, instructions/pair" "$(fmt %.1f "$inat")" "$(fmt %.1f "$ilb")" \
            "$(ratio "$inat" "$ilb")" "$(if [ $kind = mutex ]; then echo 'target <=1.5x; '; elif [ $kind = mutex-once ]; then echo 'a mutex contended once before (it has an lb_mon); '; fi)callgrind inside the loop, (Ir(2N)-Ir(N))/1.1N, N=$CG_N; sampling off"
    else
        row "$kind lock+unlock, instructions/pair" "-" "-" "-" "skipped: no valgrind"
    fi
done

# --- 3: lock-heavy mix -----------------------------------------------------------
progress "lock mix (${REPS}x4 runs, 2 threads x $MIX_OPS acquisitions, $MIX_LOCKS mutexes)"
interleave mix "native=native 1k=lb,LOCKBLAME_FREQ=1000 10k=lb,LOCKBLAME_FREQ=10000 off=lb,LOCKBLAME_EVENT=none" \
    "$B/lockmix" 2 "$MIX_OPS" "$MIX_LOCKS"
nat=$(collect mix native elapsed_s)
rate=$(collect mix native acq_per_s_per_thread)
for f in 1k 10k off; do
    t=$(collect mix "$f" elapsed_s)
    label="$f""Hz"
    note="$(prange_pct mix native "$f" elapsed_s); CPU time $(poverhead mix native "$f" cpu_s); whole process $(poverhead mix native "$f" spawn_wall_s)"
    case $f in
        1k) note="stress: no work between acquisitions (the 3% target is the 32-lock row's below); $note; native $(fmt %.1f "$(calc %.6f "$rate" 1 'a / 1e6')")M acq/s/thr" ;;
        off) label="sampling off"; note="LOCKBLAME_EVENT=none: the wrappers alone; $note" ;;
    esac
    row "lock mix back-to-back, 2 thr x $(human "$MIX_OPS") acq, s ($label)" "$(fmt %.3f "$nat")" "$(fmt %.3f "$t")" \
        "$(poverhead mix native "$f" elapsed_s)" "$note"
done

# the lock mix the 2% target is defined on: 2 threads, 64 mutexes, ~1 us
# of work between acquisitions (about 1M acquisitions/s per thread). More
# rounds than the other rows: the target is 2%, the spread of one round's
# ratio about as much.
progress "the target lock mix (${MIX9_REPS}x3 runs, 2 threads x $MIX9_OPS acquisitions, $MIX9_LOCKS mutexes)"
reps_saved=$REPS
REPS=$MIX9_REPS
interleave mix9 "native=native def=lb off=lb,LOCKBLAME_EVENT=none" \
    "$B/lockmix" 2 "$MIX9_OPS" "$MIX9_LOCKS" "$MIX9_WORK"
nat=$(collect mix9 native elapsed_s)
rate=$(collect mix9 native acq_per_s_per_thread)
for f in def off; do
    t=$(collect mix9 "$f" elapsed_s)
    label="default settings"
    note="target <=2%; native $(fmt %.2f "$(calc %.6f "$rate" 1 'a / 1e6')")M acq/s/thr; $(dropped_note mix9 def)"
    [ "$f" = off ] && { label="sampling off"; note="the wrappers alone"; }
    row "lock mix 64 locks, ~1 us between acq, s ($label)" "$(fmt %.3f "$nat")" "$(fmt %.3f "$t")" \
        "$(poverhead mix9 native "$f" elapsed_s)" "$note; ${MIX9_REPS} rounds, $(prange_pct mix9 native "$f" elapsed_s); CPU time $(poverhead mix9 native "$f" cpu_s)"
done
REPS=$reps_saved

# the same mix at three times that rate and half the mutexes: a stress row
progress "lock mix at ~3M acq/s/thread (${REPS}x4 runs, 2 threads x $MIX2_OPS acquisitions)"
interleave mix2 "native=native def=lb 1k=lb,LOCKBLAME_FREQ=1000 off=lb,LOCKBLAME_EVENT=none" \
    "$B/lockmix" 2 "$MIX2_OPS" "$MIX_LOCKS" "$MIX2_WORK"
nat=$(collect mix2 native elapsed_s)
rate=$(collect mix2 native acq_per_s_per_thread)
rate_m=$(fmt %.1f "$(calc %.6f "$rate" 1 'a / 1e6')")
for f in def 1k off; do
    t=$(collect mix2 "$f" elapsed_s)
    label="1kHz"; note="target <=3% (aim 2%)"
    [ "$f" = def ] && { label="default settings"; note="stress: $MIX_LOCKS locks, ${rate_m}M acq/s/thr native; $(dropped_note mix2 def)"; }
    [ "$f" = off ] && { label="sampling off"; note="the wrappers alone"; }
    row "lock mix 32 locks, ${rate_m}M acq/s/thr, s ($label)" "$(fmt %.3f "$nat")" "$(fmt %.3f "$t")" \
        "$(poverhead mix2 native "$f" elapsed_s)" "$note; $(prange_pct mix2 native "$f" elapsed_s); CPU time $(poverhead mix2 native "$f" cpu_s)"
done

# what one sample costs in place: the extra CPU time of the 10 kHz runs over
# the sampling-off runs, per recorded sample (paired by round)
in_situ=$(for ((r = 1; r <= REPS; r++)); do
    a=$(val cpu_s "$OUT/mix.off.$r"); b=$(val cpu_s "$OUT/mix.10k.$r"); n=$(val lb_samples "$OUT/mix.10k.$r")
    [ -n "$a" ] && [ -n "$b" ] && [ -n "$n" ] && awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN { if (n > 0) printf "%.3f\n", (b - a) * 1e6 / n }'
done)
samples10k=$(collect mix 10k lb_samples)
dropped10k=$(collect mix 10k lb_dropped)
row "one sample in place (lock mix 10kHz), us CPU" "-" "$(fmt %.1f "$(median $in_situ)")" "-" \
    "(CPU(10kHz) - CPU(off)) / samples, median of rounds; ${samples10k:-?} samples (+${dropped10k:-?} dropped) a run; shallow stacks (~5 frames)"

# --- 4: contended hand-off -------------------------------------------------------
# By default a hot mutex turns sampled (its blame measured by CPU samples of
# the holders, nothing inside the holds: docs/INTERNALS.md);
# LOCKBLAME_MUTEX=exact accounts every hold with waiters by timestamps, as
# does sampling off (no samples to measure by).
progress "contended hand-off (${REPS}x5 runs of ${HANDOFF_S}s)"
interleave handoff "native=native lb=lb exact=lb,LOCKBLAME_MUTEX=exact off=lb,LOCKBLAME_EVENT=none fwd=lb,LD_PRELOAD=$FWD" \
    "$B/handoff" 2 "$HANDOFF_S"
# handoff_row LABEL NAME VARIANT NOTE: a hand-off throughput row, Mops/s
# native vs VARIANT, with the ratio of the rounds.
handoff_row() {
    local nat lb
    nat=$(collect "$2" native ops_per_s)
    lb=$(collect "$2" "$3" ops_per_s)
    row "$1" "$(fmt %.2f "$(calc %.6f "$nat" 1 'a / 1e6')")" \
        "$(fmt %.2f "$(calc %.6f "$lb" 1 'a / 1e6')")" "$(pratio "$2" native "$3" ops_per_s)" \
        "$4; throughput ratio (higher is better); $(prange "$2" native "$3" ops_per_s); ${HANDOFF_S}s runs"
}
handoff_row "hand-off, 2 thr 1 mutex, Mops/s (default settings)" handoff lb "target >=0.5x"
handoff_row "hand-off, 2 thr 1 mutex, Mops/s (LOCKBLAME_MUTEX=exact)" handoff exact "every hold with waiters timed"
handoff_row "hand-off, 2 thr 1 mutex, Mops/s (sampling off)" handoff off "LOCKBLAME_EVENT=none (exact)"
handoff_rate_row "hand-off" handoff
handoff_rate_row "hand-off (LOCKBLAME_MUTEX=exact)" handoff exact
handoff_row "hand-off, 2 thr 1 mutex, Mops/s (forwarding-only interposer)" handoff fwd "reference: bench/forward.c, no lockblame"
handoff_rate_row "hand-off (forwarding-only interposer)" handoff fwd

# The same on a spin lock: spinning waiters, no futex. By default the lock
# turns sampled once hot (its waits measured by CPU samples, nothing inside
# the holds: docs/INTERNALS.md); LOCKBLAME_SPIN=exact times every wait.
progress "contended spin hand-off (${REPS}x3 runs of ${HANDOFF_S}s)"
interleave handoff_spin "native=native lb=lb exact=lb,LOCKBLAME_SPIN=exact" "$B/handoff" 2 "$HANDOFF_S" spin
handoff_row "hand-off, 2 thr 1 spin lock, Mops/s (default settings)" handoff_spin lb "the waiter spins (no futex); waits sampled once the lock is hot"
handoff_row "hand-off, 2 thr 1 spin lock, Mops/s (LOCKBLAME_SPIN=exact)" handoff_spin exact "every spin wait timed"
handoff_rate_row "spin hand-off" handoff_spin
handoff_rate_row "spin hand-off (LOCKBLAME_SPIN=exact)" handoff_spin exact

# The same loop for a fixed count (bench/pingpong.c), which glibc runs in
# the other regime: both threads awake, the lock passing at every few
# acquisitions through futex waits that return at once. Sampled waits that
# never slept are timed inside the new holder's hold, and that is enough
# to let the holder keep the lock (docs/PERFORMANCE.md, "Two threads
# trading a mutex"): these
# rows show it.
progress "mutex ping-pong (${REPS}x3 runs of 2x$PINGPONG_N acquisitions)"
interleave pingpong "native=native lb=lb fwd=lb,LD_PRELOAD=$FWD" "$B/pingpong" "$PINGPONG_N"
row "mutex ping-pong, 2 thr x $PINGPONG_N acq, s" "$(fmt %.3f "$(collect pingpong native elapsed_s)")" \
    "$(fmt %.3f "$(collect pingpong lb elapsed_s)")" "$(pratio pingpong native lb elapsed_s)" \
    "a ratio below 1 is the lock changing hands less than natively; $(prange pingpong native lb elapsed_s)"
handoff_rate_row "mutex ping-pong" pingpong
handoff_rate_row "mutex ping-pong (forwarding-only interposer)" pingpong fwd

# --- 4b: contended task queue ----------------------------------------------------
# One producer, TQ_WORKERS workers, one task per lock round trip, built -O2.
progress "contended task queue (${REPS}x6 runs, 1 producer + $TQ_WORKERS workers, $(human "$TQ_TASKS") tasks)"
interleave taskq "native=native lb=lb exact=lb,LOCKBLAME_MUTEX=exact cexact=lb,LOCKBLAME_COND=exact off=lb,LOCKBLAME_EVENT=none fwd=lb,LD_PRELOAD=$FWD" \
    "$B/taskq" "$TQ_WORKERS" "$TQ_TASKS"
nat=$(collect taskq native elapsed_s)
for f in lb exact cexact off fwd; do
    t=$(collect taskq "$f" elapsed_s)
    case $f in
        lb) label="default settings"; note="target <=1.3x; $(dropped_note taskq lb)" ;;
        exact) label="LOCKBLAME_MUTEX=exact"; note="every mutex hold with waiters timed" ;;
        cexact) label="LOCKBLAME_COND=exact"; note="every cond signal with waiters timed (an earlier build's default)" ;;
        off) label="sampling off"; note="LOCKBLAME_EVENT=none: mutexes exact, hot conds still sampled" ;;
        fwd) label="forwarding-only interposer"; note="reference: bench/forward.c, no lockblame" ;;
    esac
    row "task queue 1+$TQ_WORKERS thr, $(human "$TQ_TASKS") tasks, s ($label)" "$(fmt %.3f "$nat")" "$(fmt %.3f "$t")" \
        "$(pratio taskq native "$f" elapsed_s)" "$note; $(prange taskq native "$f" elapsed_s); CPU time $(pratio taskq native "$f" cpu_s)"
done
handoff_rate_row "task queue" taskq
handoff_rate_row "task queue (LOCKBLAME_MUTEX=exact)" taskq exact
handoff_rate_row "task queue (LOCKBLAME_COND=exact)" taskq cexact
handoff_rate_row "task queue (forwarding-only interposer)" taskq fwd

# The same queue with small tasks (5 rounds of work each, ~0.2 us): a
# hold that grows by tens of nanoseconds shows here first.
progress "task queue, small tasks (${REPS}x2 runs, WORK=5)"
interleave taskq5 "native=native lb=lb" "$B/taskq" "$TQ_WORKERS" "$TQ_TASKS" 5
row "task queue 1+$TQ_WORKERS thr, $(human "$TQ_TASKS") tasks, WORK=5, s" \
    "$(fmt %.3f "$(collect taskq5 native elapsed_s)")" "$(fmt %.3f "$(collect taskq5 lb elapsed_s)")" \
    "$(pratio taskq5 native lb elapsed_s)" "target <=1.3x; $(prange taskq5 native lb elapsed_s); CPU time $(pratio taskq5 native lb cpu_s)"
handoff_rate_row "task queue, WORK=5" taskq5

# --- 4d: stack footprint of the contended paths ---------------------------------
progress "stack use of contended release/wait/signal paths (${REPS}x2 runs)"
interleave stackuse "native=native off=lb,LOCKBLAME_EVENT=none" "$B/stackuse" 200
nat=$(collect stackuse native stack_used_bytes)
lb=$(collect stackuse off stack_used_bytes)
row "contended paths, peak stack bytes of a thread" "$nat" "$lb" "$(calc '%+d B' "$nat" "$lb" 'b - a')" \
    "sampling off (a signal frame adds ~12 KB with AVX-512); painted 256 KiB stack, TCB and static TLS included in both; release-site walk with libunwind took +6,944 B"

# --- 4c: sysbench threads ----------------------------------------------------------
if command -v sysbench >/dev/null 2>&1; then
    progress "sysbench threads (${REPS}x3 runs, 4 threads, 2 locks, $SB_EVENTS events)"
    interleave sysbench "native=native lb=lb off=lb,LOCKBLAME_EVENT=none" \
        sysbench threads --threads=4 --thread-locks=2 --events="$SB_EVENTS" --time=0 run
    nat=$(collect sysbench native spawn_wall_s)
    for f in lb off; do
        t=$(collect sysbench "$f" spawn_wall_s)
        label="default settings"; note="target <=1.2x; $(dropped_note sysbench lb)"
        [ "$f" = off ] && { label="sampling off"; note="LOCKBLAME_EVENT=none"; }
        row "sysbench threads --threads=4 --thread-locks=2, s ($label)" "$(fmt %.3f "$nat")" "$(fmt %.3f "$t")" \
            "$(pratio sysbench native "$f" spawn_wall_s)" "$note; whole process; $(prange sysbench native "$f" spawn_wall_s)"
    done
else
    row "sysbench threads --threads=4 --thread-locks=2" "-" "-" "-" "skipped: sysbench not installed"
fi

# --- 5: lock churn ----------------------------------------------------------------
for mode in destroy reuse; do
    progress "lock churn, $mode (${REPS}x2 runs, $CHURN_TOTAL mutexes, $CHURN_LIVE live)"
    interleave "churn-$mode" "native=native lb=lb" "$B/churn" "$CHURN_TOTAL" "$CHURN_LIVE" "$mode"
    nat=$(collect "churn-$mode" native elapsed_s)
    lb=$(collect "churn-$mode" lb elapsed_s)
    what="init+lock+unlock+destroy"
    [ "$mode" = reuse ] && what="init (no destroy)+lock+unlock"
    row "churn $(human "$CHURN_TOTAL"), $what, s" "$(fmt %.3f "$nat")" "$(fmt %.3f "$lb")" \
        "$(pratio "churn-$mode" native lb elapsed_s)" "$(if [ $mode = destroy ]; then echo 'target <=2x; '; fi)$(prange "churn-$mode" native lb elapsed_s); $(human "$CHURN_LIVE") live at once"
    for v in native lb; do
        eval "hwm_$v=\$(collect churn-$mode $v hwm_end)"
        eval "live_$v=\$(collect churn-$mode $v rss_live)"
        eval "base_$v=\$(collect churn-$mode $v rss_base)"
    done
    # per live lock: (a) the process's peak RSS beyond the native run's;
    # (b) only what the 300K locks themselves added (RSS with all live minus
    # RSS before the first lock), beyond the native run's growth
    tot=$(awk -v l="$hwm_lb" -v n="$hwm_native" -v k="$CHURN_LIVE" 'BEGIN { printf "%.0f", (l - n) * 1024 / k }')
    own_nat=$(awk -v l="$live_native" -v b="$base_native" -v k="$CHURN_LIVE" 'BEGIN { printf "%.0f", (l - b) * 1024 / k }')
    own_lb=$(awk -v l="$live_lb" -v b="$base_lb" -v k="$CHURN_LIVE" 'BEGIN { printf "%.0f", (l - b) * 1024 / k }')
    own=$((own_lb - own_nat))
    end_growth=$(awk -v e="$hwm_lb" -v l="$live_lb" 'BEGIN { printf "%+.1f", (e - l) / 1024 }')
    row "churn ($mode), bytes per live lock" "-" "$own" \
        "$tot total" "growth/lock ${own_lb}B vs native ${own_nat}B; total = VmHWM-VmHWM(native); peak grew ${end_growth} MB after all $(human "$CHURN_LIVE") were live"
done

# cg_per VARIANT N ENV -- PROG ARGS...: instructions per unit of a whole
# program under callgrind, (Ir(2N) - Ir(N)) / N, start-up and exit
# cancelling; an argument "@N" is replaced by the count. VARIANT lb
# preloads the library with sampling off and the environment ENV (space
# separated assignments, or "-").
cg_per() {
    local v=$1 n=$2 envs=$3 f ir=() k
    shift 4
    for k in "$n" $((2 * n)); do
        f=$OUT/cg.$(basename "$1").$v.$k
        if [ "$v" = lb ]; then
            rm -f "$OUT/cg.db" # (a profile already there is merged into: more work at exit)
            env LD_PRELOAD="$LIB" LOCKBLAME_EVENT=none LOCKBLAME_OUTPUT="$OUT/cg.db" \
                $([ "$envs" = - ] || echo "$envs") \
                valgrind --tool=callgrind --callgrind-out-file="$f" "${@//@N/$k}" >/dev/null 2>>"$LOG"
        else
            valgrind --tool=callgrind --callgrind-out-file="$f" "${@//@N/$k}" >/dev/null 2>>"$LOG"
        fi
        ir+=("$(awk '/^(summary|totals):/ { print $2; exit }' "$f" 2>/dev/null)")
    done
    awk -v a="${ir[0]}" -v b="${ir[1]}" -v n="$n" 'BEGIN { if (a != "" && b != "") printf "%.1f", (b - a) / n }'
}

if [ "$have_valgrind" = 1 ]; then
    progress "lock churn under callgrind"
    ichurn_native=$(cg_per native "$CHURN_CG_N" - -- "$B/churn" @N "$CHURN_CG_LIVE" destroy)
    ichurn_lb=$(cg_per lb "$CHURN_CG_N" - -- "$B/churn" @N "$CHURN_CG_LIVE" destroy)
    row "churn, instructions per lock (init+lock+unlock+destroy)" "$(fmt %.1f "$ichurn_native")" \
        "$(fmt %.1f "$ichurn_lb")" "$(ratio "$ichurn_native" "$ichurn_lb")" \
        "callgrind, (Ir(2N)-Ir(N))/N, N=$CHURN_CG_N, $(human "$CHURN_CG_LIVE") live; sampling off"

    progress "cond ping-pong under callgrind"
    icond_native=$(cg_per native "$CONDPP_CG_N" - -- "$B/condpp" @N)
    icond_lb=$(cg_per lb "$CONDPP_CG_N" LOCKBLAME_COND=sampled -- "$B/condpp" @N)
    row "cond ping-pong round (2 waits, 2 signals, 2 locks, 2 unlocks), instructions" \
        "$(fmt %.1f "$icond_native")" "$(fmt %.1f "$icond_lb")" "$(ratio "$icond_native" "$icond_lb")" \
        "bench/condpp under callgrind, (Ir(2N)-Ir(N))/N, N=$CONDPP_CG_N; LOCKBLAME_COND=sampled (a hot cond's paths: one signal interval in 16 measured), sampling off; every wait sleeps; all of it inside the holds but the sleep and a hot wait's end, which runs after the mutex's release (blame/wait_deferred.h)"
fi

# --- 5b: one contended hold, on one thread ------------------------------------------
if [ -x "$B/hold_cost" ]; then
    progress "contended hold cost (${REPS} runs of $HOLD_N holds)"
    hc=()
    for REP in $(seq "$REPS"); do
        hc+=("$("$B/hold_cost" "$HOLD_N" 2>>"$LOG" | awk '$1 == "ns_per_hold" { print $2 }')")
    done
    hns=$(median "${hc[@]}")
    ihold=""
    if [ "$have_valgrind" = 1 ]; then
        ha=$(valgrind --tool=callgrind --toggle-collect="holds*" --callgrind-out-file="$OUT/cg.hold.1" \
            "$B/hold_cost" "$HOLD_CG_N" >/dev/null 2>>"$LOG"; awk '/^(summary|totals):/ { print $2; exit }' "$OUT/cg.hold.1")
        hb=$(valgrind --tool=callgrind --toggle-collect="holds*" --callgrind-out-file="$OUT/cg.hold.2" \
            "$B/hold_cost" $((2 * HOLD_CG_N)) >/dev/null 2>>"$LOG"; awk '/^(summary|totals):/ { print $2; exit }' "$OUT/cg.hold.2")
        ihold=$(awk -v a="$ha" -v b="$hb" -v n="$HOLD_CG_N" 'BEGIN { if (a != "" && b != "") printf "%.0f", (b - a) / (1.1 * n) }')
    fi
    row "contended hold on one thread (barging lock + accounted unlock), ns" "-" "$(fmt %.1f "$hns")" "-" \
        "bench/hold_cost: a waiter recorded, none running; lockblame's whole per-hold work; ${ihold:-?} instructions a hold (callgrind); median of ${REPS}"
fi

# --- 5c: a whatif progress point's breakpoint hit ------------------------------------
if [ -x "$B/progress_cost" ]; then
    progress "whatif progress point cost (${REPS} runs of 20000 calls)"
    pc=() pn=()
    for REP in $(seq "$REPS"); do
        out=$("$B/progress_cost" 20000 2>>"$LOG")
        pc+=("$(awk '$1 == "ns_per_hit" { print $2 }' <<< "$out")")
        pn+=("$(awk '$1 == "ns_per_call" { print $2 }' <<< "$out")")
    done
    row "call of a whatif --progress function (breakpoint or uprobe hit), ns" \
        "$(fmt %.1f "$(median "${pn[@]}")")" "$(fmt %.1f "$(median "${pc[@]}")")" "-" \
        "bench/progress_cost: an empty function, without and with the counting breakpoint, or uprobe where breakpoints do not count (its hit less the call); median of ${REPS}"
fi

# --- 6: exit cost -----------------------------------------------------------------
progress "exit cost (database write) for ~10K/100K/1M CCT nodes"
interleave exit "native=native empty=lb,LOCKBLAME_EVENT=none" "$B/cctgen" 1 0 0
nat_exit=$(collect exit native spawn_exit_ms)
e=$(collect exit empty spawn_exit_ms)
n=$(sqlite3 "$DB" 'SELECT COUNT(*) FROM node' 2>/dev/null)
REP=1
row "exit cost, empty profile, ms" "$(fmt %.2f "$nat_exit")" "$(fmt %.2f "$e")" "-" \
    "${n:-?} nodes; sampling off: the fixed cost of an almost empty database"
for leaves in $CCT_LEAVES; do
    run exit "lb LOCKBLAME_EVENT=task-clock@$CCT_PERIOD_NS" "$leaves" \
        "$B/cctgen" "$leaves" "$CCT_TAIL" "$CCT_SPIN_US"
    f=$OUT/exit.$leaves.1
    e=$(val spawn_exit_ms "$f")
    n=$(sqlite3 "$DB" 'SELECT COUNT(*) FROM node' 2>/dev/null)
    samples=$(sqlite3 "$DB" 'SELECT SUM(samples) FROM thread' 2>/dev/null)
    cover=$(sqlite3 "$DB" "SELECT printf('%.0f', 100.0 * SUM(samples) * $CCT_PERIOD_NS / 1e9 / SUM(cpu_s)) FROM thread" 2>/dev/null)
    size=$(du -k "$DB" 2>/dev/null | awk '{ printf "%.1f MB", $1 / 1024 }')
    per=$(calc '%.2f' "$n" "$e" 'b * 1000 / a')
    target=""
    [ "$leaves" = 4000 ] && target="target <=1 s for 100K; "
    row "exit cost, ${n:-?} CCT nodes, ms" "$(fmt %.2f "$nat_exit")" "$(fmt %.1f "$e")" "${per} us/node" \
        "${target}1 run; $leaves leaves, depth $(val depth "$f"), $samples samples (x period = ${cover:-?}% of CPU time), db $size"
done

# --- 7: sample cost ---------------------------------------------------------------
if [ -x "$B/sample_cost" ]; then
    progress "sample cost ($SAMPLE_ITERS iterations)"
    "$B/sample_cost" "$SAMPLE_ITERS" >"$OUT/sample_cost.out" 2>>"$LOG"
    # rows: depth frames signal-ns here-ns first-sig-ns first-here-ns handler-ns
    for d in 10 30; do
        line=$(awk -v d="$d" '$1 == d && NF >= 7 { print; exit }' "$OUT/sample_cost.out")
        if [ -n "$line" ]; then
            set -- $line
            note="unwind+insert ${3} ns (in place); release-site unwind ${4} ns; first (cold) ${5} ns"
            [ "$d" = 30 ] && note="target <=2000 ns; $note"
            row "one sample at depth $d, ns" "-" "$7" "-" "$note; whole handler incl. delivery"
        else
            row "one sample at depth $d, ns" "-" "n/a" "-" "unparsed; see $OUT/sample_cost.out"
        fi
    done
else
    row "one sample, ns" "-" "-" "-" "skipped: bench/sample_cost.c not present"
fi

# --- 8: thread creation -------------------------------------------------------------
for batch in 1 "$THREADS_BATCH"; do
    progress "thread create+join (${REPS}x3 runs, $THREADS_N threads, $batch at once)"
    interleave "threads-$batch" "native=native lb=lb off=lb,LOCKBLAME_EVENT=none" \
        "$B/threads" "$THREADS_N" "$batch"
    nat=$(collect "threads-$batch" native create_us)
    lb=$(collect "threads-$batch" lb create_us)
    off=$(collect "threads-$batch" off create_us)
    row "thread create+join, $batch at once, us/thread" "$(fmt %.1f "$nat")" "$(fmt %.1f "$lb")" \
        "$(pratio "threads-$batch" native lb create_us)" \
        "target <=2x; sampling off $(fmt %.1f "$off") us ($(pratio "threads-$batch" native off create_us)); $(prange "threads-$batch" native lb create_us)"
done

# --- 8b: mmap and munmap (src/interpose/mmap.c) ------------------------------------
progress "mmap+munmap pairs (${REPS}x2 runs, $MMAP_N pairs of each kind)"
interleave mmap "native=native lb=lb" "$B/mmapcost" "$MMAP_N" "$OUT"
for kind in anon shared; do
    case $kind in
    anon) what="a private anonymous page (forwarded; the munmap looks for shared files' objects)" ;;
    shared) what="a shared page of a file (the mmap notes the file, for process-shared objects)" ;;
    esac
    nat=$(collect mmap native "${kind}_ns_per_pair")
    lb=$(collect mmap lb "${kind}_ns_per_pair")
    row "mmap+munmap pair, $kind, ns" "$(fmt %.0f "$nat")" "$(fmt %.0f "$lb")" \
        "$(calc '%+.0f ns' "$nat" "$lb" 'b - a')" \
        "$what; $(pratio mmap native lb "${kind}_ns_per_pair"), $(prange mmap native lb "${kind}_ns_per_pair")"
done

# --- 9: process trees (bench/trees.sh) -------------------------------------------
. bench/trees.sh

# --- the table ------------------------------------------------------------------
{
    echo "$header"
    echo
    {
        printf 'benchmark\tnative\tlockblame\tratio/overhead\tnotes\n'
        cat "$ROWS"
    } | awk -F'\t' '
        { for (i = 1; i <= NF; i++) { cell[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) } n = NR }
        END {
            for (r = 1; r <= n; r++) {
                printf "%-*s | %*s | %*s | %*s | %s\n", w[1], cell[r, 1], w[2], cell[r, 2],
                       w[3], cell[r, 3], w[4], cell[r, 4], cell[r, 5]
                if (r == 1) {
                    line = ""
                    for (i = 1; i <= 4; i++) { s = sprintf("%*s", w[i], ""); gsub(/ /, "-", s); line = line s (i < 4 ? "-|-" : "-|-") }
                    print line "-----"
                }
            }
        }'
    echo
    echo "targets: the rows above whose notes state one"
    grep -F 'target' "$ROWS" | awk -F'\t' '
        { for (i = 1; i <= NF; i++) { cell[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) } n = NR }
        END { for (r = 1; r <= n; r++) printf "  %-*s | %*s | %*s | %*s\n", w[1], cell[r, 1], w[2], cell[r, 2], w[3], cell[r, 3], w[4], cell[r, 4] }'
    if [ -s "$ANOM" ]; then
        echo
        echo "anomalies:"
        sed 's/^/  /' "$ANOM"
    fi
    echo
    echo "raw outputs and lockblame's stderr: $OUT/"
} | tee "$B/results.txt"
exit 0
