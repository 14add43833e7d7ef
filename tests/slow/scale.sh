#!/usr/bin/env bash
# Scale: (a) 10M distinct mutexes, 300K live at once, destroyed before
# free; (a2) the same set up by calloc and freed without destroy; (b) 1,000
# threads alive at once on a contended mutex; (c) 100K short-lived threads
# in turn. Prints time ratios and peak RSS (VmHWM) natively and preloaded,
# and the peak RSS per live lock. Asserts that every run finishes with exact
# counts, within its stated time (30-120 s each, several times the native
# run's on the 2-core VM), and that peak RSS for the lock runs stays within
# 300 MB of native. In the slow tier (make check-slow): its limits hold on
# a quiet machine, not beside other work.
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS/scale
need "$W" "$LOCKBLAME_LIB"
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" "$2"; }
LIMIT_MB=300

# run NAME SECONDS ARGS...: native then preloaded; leaves $tmp/NAME.{nat,pre}
run() {
    local name=$1 secs=$2; shift 2
    timeout "$secs" "$W" "$@" >"$tmp/$name.nat" 2>&1 || bad "$name: native run exited $?"
    local rc=0
    LOCKBLAME_OUTPUT=$tmp/$name.db timeout "$secs" env LD_PRELOAD="$LOCKBLAME_LIB" "$W" "$@" \
        >"$tmp/$name.pre" 2>"$tmp/$name.err" || rc=$?
    [ $rc -eq 124 ] && bad "$name: preloaded run did not finish in $secs s (native: $(field time_s "$tmp/$name.nat") s)"
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && bad "$name: preloaded run exited $rc"
    echo "  native:    $(grep '^result' "$tmp/$name.nat")"
    echo "  preloaded: $(grep '^result' "$tmp/$name.pre" || echo '(no result)')"
    rm -f "$tmp/$name.db"
}

ratio() { # NAME: time ratio and HWM figures
    awk -v tn="$(field time_s "$tmp/$1.nat")" -v tp="$(field time_s "$tmp/$1.pre")" \
        -v hn="$(field vmhwm_kb "$tmp/$1.nat")" -v hp="$(field vmhwm_kb "$tmp/$1.pre")" \
        'BEGIN { if (tp == "") exit; printf "  time x%.2f; peak RSS native %.1f MB, preloaded %.1f MB (+%.1f MB)\n", tp / (tn > 0 ? tn : 1e-3), hn / 1024, hp / 1024, (hp - hn) / 1024 }'
}

echo "== baseline: 1000 mutexes"
run base 60 locks 1000 1000 init 0
ratio base
for cfg in "init 0" "init 64" "calloc 64"; do
    set -- $cfg
    name=locks_$1_$2
    echo "== (a) 10M mutexes, 300K live, $1, every ${2}th contended (0: none)"
    run "$name" 120 locks 10000000 300000 "$1" "$2"
    ratio "$name"
    hn=$(field vmhwm_kb "$tmp/$name.nat"); hp=$(field vmhwm_kb "$tmp/$name.pre")
    bn=$(field vmhwm_kb "$tmp/base.nat"); bp=$(field vmhwm_kb "$tmp/base.pre")
    if [ -n "$hp" ]; then
        awk -v hn="$hn" -v hp="$hp" -v bn="$bn" -v bp="$bp" 'BEGIN {
            printf "  peak RSS per live lock beyond the library baseline: %.0f bytes\n", ((hp - hn) - (bp - bn)) * 1024 / 300000 }'
        [ $(( (hp - hn) / 1024 )) -lt $LIMIT_MB ] || bad "$name: peak RSS $(( (hp - hn) / 1024 )) MB above native (limit $LIMIT_MB MB)"
        [ "$(field errors "$tmp/$name.pre")" = 0 ] || bad "$name: errors under the preload"
    fi
done

echo "== (b) 1000 threads alive at once, contended mutex"
run threads 30 threads 1000
ratio threads
[ "$(field count "$tmp/threads.pre")" = 1000 ] || bad "threads: count under the preload is not 1000"

echo "== (c) 100K short-lived threads in turn"
run churn 90 churn 100000
ratio churn
[ "$(field count "$tmp/churn.pre")" = 200000 ] || bad "churn: count under the preload is not 200000"
hn=$(field vmhwm_kb "$tmp/churn.nat"); hp=$(field vmhwm_kb "$tmp/churn.pre")
[ -n "$hp" ] && awk -v hn="$hn" -v hp="$hp" 'BEGIN { printf "  peak RSS per thread ever created: %.0f bytes\n", (hp - hn) * 1024 / 100000 }'

echo "$errors problem(s)"
[ $errors -eq 0 ]
