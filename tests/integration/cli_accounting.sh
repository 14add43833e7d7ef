#!/usr/bin/env bash
# The report header's "accounting:" line: its counts are the database's
# (releases and signals that carried blame, completed waits other than
# joins; spin waits measured by CPU samples apart, with their count), its
# rate is their sum over the process's duration, and the
# warning that lockblame's own accounting lengthens critical sections
# appears exactly when that rate is above 500K a second: on a lock
# hammered by 2 threads (mutex_stress with every lock timed exactly), not
# on 2 ms holds (handoff_mutex). How fast mutex_stress's events come
# depends on how much its two threads overlap, which a busy machine
# decides (1.7M a second on a quiet one, 50 a second beside two busy
# loops), and under the default settings its hot locks turn sampled after
# a time that varies from run to run: each run checks the counts, the
# sampled waits per kind and that the warning follows the rate, whichever
# side of 500K it falls. Both sides are then checked on copies of the
# exact run's database whose duration is set to put its rate at 2M and at
# 100K a second. The HTML report's run header shows the same.
source "$(dirname "$0")/../lib/common.sh"
need "$WORKLOADS/mutex_stress" "$WORKLOADS/handoff_mutex" "$LOCKBLAME_LIB" "$LOCKBLAME_CLI"

# A header count as printed: "12345" or "2.35M".
value() { awk -v v="$1" 'BEGIN { if (v ~ /M$/) { sub(/M$/, "", v); printf "%.0f", v * 1e6 } else printf "%.0f", v }'; }
# |a - b| within max(1, a * rel)?
close_to() { awk -v a="$1" -v b="$2" -v r="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; t = a * r; if (t < 1) t = 1; exit !(d <= t) }'; }

check_run() { # NAME HIGH(1|0|-: either) PROGRAM ARGS...
    local name=$1 high=$2
    shift 2
    LOCKBLAME_OUTPUT=$tmp/$name.db preloaded "$@" >/dev/null 2>"$tmp/$name.err" ||
        { cat "$tmp/$name.err"; fail "$name: the preloaded run exited $?"; }
    check_db "$name" "$high"
}

check_db() { # NAME HIGH(1|0|-: either): the header of $tmp/NAME.db against its contents
    local name=$1 high=$2
    local db=$tmp/$name.db
    "$LOCKBLAME_CLI" report "$db" >"$tmp/$name.out" 2>&1 || fail "$name: report exited $?"
    local blamed waits dur
    blamed=$(rows "$db" "SELECT COALESCE(SUM(blamed_count), 0) FROM metric")
    # Waits accounted by samples are counted apart (nothing of theirs runs
    # inside a critical section).
    local sampled
    sampled=$(rows "$db" "SELECT COALESCE(SUM(sampled_waits), 0) FROM sync_object")
    waits=$(rows "$db" "SELECT COALESCE(SUM(contended), 0) - $sampled FROM site WHERE object <> 'join'")
    # the rate is over the one process's duration (a header of several
    # processes gives the busiest's)
    [ "$(rows "$db" "SELECT COUNT(*) FROM run")" = 1 ] ||
        fail "$name: $(rows "$db" "SELECT COUNT(*) FROM run") processes in the profile, want 1"
    dur=$(rows "$db" "SELECT duration_s FROM run")
    local line
    line=$(grep '^accounting: ' "$tmp/$name.out") || { cat "$tmp/$name.out"; fail "$name: no accounting line"; }
    echo "  $name: $line"
    echo "  $name: database: $blamed blamed releases/signals, $waits completed waits, $dur s"
    local got_b got_w got_r want_r
    got_b=$(value "$(sed -E 's/.*\(([0-9.M]+) releases and signals.*/\1/' <<<"$line")")
    got_w=$(value "$(sed -E 's/.*, ([0-9.M]+) completed waits.*/\1/' <<<"$line")")
    got_r=$(value "$(sed -E 's/.*\), ([0-9.M]+) a second.*/\1/' <<<"$line")")
    want_r=$(awk -v b="$blamed" -v w="$waits" -v d="$dur" 'BEGIN { printf("%.0f", (d > 0) ? (b + w) / d : 0) }')
    close_to "$blamed" "$got_b" 0.005 || bad "$name: header says $got_b blamed releases/signals, the database $blamed"
    close_to "$waits" "$got_w" 0.005 || bad "$name: header says $got_w completed waits, the database $waits"
    close_to "$want_r" "$got_r" 0.005 || bad "$name: header rate $got_r a second, the database's $want_r"
    # by kind: spin waits measured by samples, mutex waits blamed by holder samples
    local kind text got_s want_s
    for kind in spin mutex; do
        case $kind in
            spin) text="measured by CPU samples, not timed" ;;
            mutex) text="blamed by CPU samples of their holders" ;;
        esac
        want_s=$(rows "$db" "SELECT COALESCE(SUM(sampled_waits), 0) FROM sync_object WHERE object = '$kind'")
        got_s=$(value "$(sed -nE "s/.*; and ([0-9.M]+) $kind waits on [0-9]+ locks? $text(;.*)?\$/\1/p" <<<"$line")")
        if [ "$want_s" -gt 0 ]; then
            close_to "$want_s" "${got_s:-0}" 0.005 || bad "$name: header says ${got_s:-nothing} sampled $kind waits, the database $want_s"
        elif grep -q "$kind waits on" <<<"$line"; then
            bad "$name: header mentions sampled $kind waits, the database has none"
        fi
    done
    local warned=0
    grep -q "^warning:  at this rate lockblame's own accounting" "$tmp/$name.out" && warned=1
    local above
    above=$(awk -v r="$want_r" 'BEGIN { print (r > 500000) ? 1 : 0 }')
    if [ "$high" != - ] && [ "$above" != "$high" ]; then
        bad "$name: rate $want_r a second, expected it $([ "$high" = 1 ] && echo above || echo below) 500K"
    fi
    [ "$warned" = "$above" ] || bad "$name: rate $want_r a second, but the warning is $([ "$warned" = 1 ] && echo present || echo absent)"
    # The HTML report's run header carries the same line and warning.
    "$LOCKBLAME_CLI" report --format html -o "$tmp/$name.html" "$db" || fail "$name: html report failed"
    grep -qF "<th>accounting</th><td>${line#accounting: }</td>" "$tmp/$name.html" ||
        bad "$name: the HTML header lacks the accounting line of the table header"
    local html_warned=0
    grep -q '<th>warning</th>' "$tmp/$name.html" && html_warned=1
    [ "$html_warned" = "$warned" ] || bad "$name: the HTML header's warning differs from the table header's"
}

# (the settings reach mutex_stress from check_run's environment: through
# env(1), env's own image would be a second process of the profile when a
# sample lands in it before its exec, as on a busy machine)
LOCKBLAME_SPIN=exact LOCKBLAME_MUTEX=exact check_run stress - "$WORKLOADS/mutex_stress" 2 600000
events=$(rows "$tmp/stress.db" "SELECT (SELECT COALESCE(SUM(blamed_count), 0) FROM metric)
    + (SELECT COALESCE(SUM(contended), 0) FROM site WHERE object <> 'join')")
[ "${events:-0}" -gt 0 ] || fail "stress: no contended events at all"
# rate_copy NAME RATE: the exact run's database with its duration set so
# that its events come at RATE a second.
rate_copy() {
    cp "$tmp/stress.db" "$tmp/$1.db"
    sqlite3 "$tmp/$1.db" "UPDATE run SET duration_s = $events.0 / $2" || fail "$1: cannot set the duration"
}
rate_copy stress_2m 2000000
check_db stress_2m 1
rate_copy stress_100k 100000
check_db stress_100k 0
check_run stress_auto - "$WORKLOADS/mutex_stress" 2 600000
check_run holds 0 "$WORKLOADS/handoff_mutex"

echo "$errors problem(s)"
[ $errors -eq 0 ]
