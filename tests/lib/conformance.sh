# Sourced by tests/integration/conformance_*.sh, after common.sh: run a
# conformance workload natively and preloaded and compare what the program
# shows (exit status, stdout, stderr without `lockblame:` lines).
#
#   conf_case NAME CMD [ARGS]   run one case, print its verdicts
#   conf_done                   summary line; exit 1 if any case diverged
#
# A case whose native run fails is a broken workload (the driver fails
# too). Each case's wall times are printed with their ratio, never asserted.
WORKLOADS_USER=${WORKLOADS_USER:-$BUILD/tests/workloads_user}
CONF_TIMEOUT=${CONF_TIMEOUT:-50}
conf_diverged=0
conf_cases=0

# verdict RC: PASS, FAIL(n), or the signal's name; "timeout" for 124.
conf_verdict() {
    local rc=$1
    if [ "$rc" -eq 0 ]; then echo PASS
    elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then echo "TIMEOUT"
    elif [ "$rc" -gt 128 ]; then echo "SIG$(kill -l $((rc - 128)) 2>/dev/null || echo $((rc - 128)))"
    else echo "FAIL($rc)"
    fi
}

conf_run() { # OUTPREFIX CMD...: writes .out .err .rc .secs
    local p=$1; shift
    local start rc=0
    start=$(date +%s.%N)
    timeout -k 5 "$CONF_TIMEOUT" "$@" >"$p.out" 2>"$p.err" </dev/null || rc=$?
    awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }' >"$p.secs"
    echo "$rc" >"$p.rc"
}

conf_case() {
    local name=$1; shift
    need "$1" "$LOCKBLAME_LIB"
    conf_cases=$((conf_cases + 1))
    local n=$tmp/$name.native p=$tmp/$name.pre
    conf_run "$n" "$@"
    LOCKBLAME_OUTPUT=$tmp/$name.db conf_run "$p" env LD_PRELOAD="$LOCKBLAME_LIB" "$@"
    local nv pv
    nv=$(conf_verdict "$(cat "$n.rc")")
    pv=$(conf_verdict "$(cat "$p.rc")")
    grep -v '^lockblame:' "$p.err" >"$p.err.prog" || true
    local same=yes
    [ "$nv" = "$pv" ] || same=no
    diff -q "$n.out" "$p.out" >/dev/null || same=no
    diff -q "$n.err" "$p.err.prog" >/dev/null || same=no
    printf '%-28s native %-8s preloaded %-8s same behaviour: %-3s  time %s s vs %s s (x%s)\n' \
        "$name" "$nv" "$pv" "$same" "$(cat "$n.secs")" "$(cat "$p.secs")" \
        "$(awk -v a="$(cat "$n.secs")" -v b="$(cat "$p.secs")" 'BEGIN { printf "%.1f", (a > 0 ? b / a : 0) }')"
    sed 's/^/    out: /' "$n.out"
    if [ "$nv" != PASS ]; then
        echo "    the native run failed: the workload is broken"
        sed 's/^/    native stderr: /' "$n.err"
        conf_diverged=$((conf_diverged + 1))
    elif [ $same = no ]; then
        diff "$n.out" "$p.out" | sed 's/^/    stdout diff: /' || true
        head -20 "$p.err.prog" | sed 's/^/    preloaded stderr: /'
        conf_diverged=$((conf_diverged + 1))
    fi
    grep '^lockblame:' "$p.err" | sort | uniq -c | sort -rn | head -3 | sed 's/^/    /' || true
}

conf_done() {
    echo "$conf_cases case(s), $conf_diverged diverged from native"
    [ "$conf_diverged" -eq 0 ]
}
