#!/usr/bin/env bash
# memcached under the library, compared with a native run of the same sequence:
#   start memcached -t 4 on loopback, wait until it accepts connections,
#   a bounded load from memcslap (set, get, mget; 4 client threads),
#   a round trip over the text protocol (set N keys, multi-get them back),
#   the server's counters (stats), then SIGTERM.
# Checks: same exit status as native, identical values read back, identical
# counters, a profile written at the end of the run (exit_reason as the
# native run implies: memcached catches SIGTERM itself and exits normally,
# so the library must leave its handler alone and write at exit), with
# several threads and mutex acquisitions; report --by-lock and
# --by-release-site exit 0.
# Skipped (exit 77) without memcached, memcslap or sqlite3.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI"

for p in memcached memcslap sqlite3; do
    command -v "$p" >/dev/null 2>&1 || skip "$p"
done

KEYS=200         # round-trip keys
OPS=5000         # memcslap operations per client thread and test
CONC=4           # memcslap client threads

server=
cleanup() {
    if [ -n "$server" ]; then
        kill -KILL "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
# Killed (by tests/run.sh's timeout, say): exit, so that the EXIT trap runs.
trap 'exit 143' TERM
trap 'exit 130' INT
trap 'exit 129' HUP

secs() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
# listening PORT: something accepts connections on 127.0.0.1:PORT.
listening() { timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

user=()
[ "$(id -u)" -eq 0 ] && user=(-u root)   # memcached refuses root without -u

# start_server NAME [ENV...]: start memcached on a free port in 20000-40000
# (retrying on a lost race for the port); sets server and port.
start_server() {
    local name=$1 try i; shift
    for try in 1 2 3 4 5 6 7 8; do
        port=$((20000 + RANDOM % 20001))
        listening "$port" && continue
        env "$@" memcached -t 4 -l 127.0.0.1 -p "$port" -U 0 "${user[@]}" \
            >"$tmp/$name.out" 2>"$tmp/$name.err" &
        server=$!
        for i in $(seq 100); do             # up to ~10 s
            listening "$port" && return 0
            kill -0 "$server" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
        server=
        echo "  memcached did not come up on port $port (try $try):"; sed 's/^/    /' "$tmp/$name.err"
    done
    fail "$name: memcached never accepted connections"
}

# stop_server: SIGTERM, wait up to 10 s; sets rc.
stop_server() {
    local i
    kill -TERM "$server"
    for i in $(seq 100); do
        kill -0 "$server" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$server" 2>/dev/null; then
        bad "memcached still running 10 s after SIGTERM; killing it"
        kill -KILL "$server" 2>/dev/null || true
    fi
    rc=0
    wait "$server" || rc=$?
    server=
}

# The round-trip keys and values, "key flags value" a line (lengths 2..~1500,
# spaces included), and the set commands that store them, in one stream:
# pipelined, so a reply's delayed ACK is paid once, not once per key.
for ((i = 1; i <= KEYS; i++)); do
    v="v$i:"; n=$(( (i * 37) % 1500 ))
    while [ ${#v} -lt "$n" ]; do v+=" chunk-$i-${#v}"; done
    printf 'rt:%d %d %s\n' "$i" "$i" "$v" >>"$tmp/expected"
    printf 'set rt:%d %d 0 %d\r\n%s\r\n' "$i" "$i" "${#v}" "$v" >>"$tmp/sets"
done

# roundtrip OUT: send the sets, check KEYS replies STORED, read the keys back
# with one multi-get; writes "key flags value" lines to OUT. Every read has
# a timeout.
roundtrip() {
    local out=$1 i line k key flags len data
    exec 3<>"/dev/tcp/127.0.0.1/$port"
    cat "$tmp/sets" >&3
    for ((i = 1; i <= KEYS; i++)); do
        IFS= read -r -t 5 line <&3 || { echo "no reply to set $i"; exec 3>&-; return 1; }
        [ "${line%$'\r'}" = STORED ] || { echo "set $i: ${line%$'\r'}"; exec 3>&-; return 1; }
    done
    line="get"
    for ((i = 1; i <= KEYS; i++)); do line+=" rt:$i"; done
    printf '%s\r\n' "$line" >&3
    : >"$out"
    while IFS= read -r -t 5 line <&3; do
        line=${line%$'\r'}
        [ "$line" = END ] && break
        read -r k key flags len <<<"$line"
        [ "$k" = VALUE ] || { echo "unexpected reply: $line"; exec 3>&-; return 1; }
        IFS= read -r -t 5 data <&3 || { echo "no data for $key"; exec 3>&-; return 1; }
        printf '%s %s %s\n' "$key" "$flags" "${data%$'\r'}" >>"$out"
    done
    [ "$line" = END ] || { echo "multi-get did not end"; exec 3>&-; return 1; }
    printf 'quit\r\n' >&3
    exec 3>&-
}

# stats OUT: the counters that the sequence determines.
stats() {
    timeout 5 bash -c '
        exec 3<>/dev/tcp/127.0.0.1/'"$port"'
        printf "stats\r\n" >&3
        while IFS= read -r -t 5 line <&3; do
            line=${line%$'"'"'\r'"'"'}
            [ "$line" = END ] && break
            echo "$line"
        done
        printf "quit\r\n" >&3' |
        grep -E '^STAT (cmd_get|cmd_set|get_hits|get_misses|curr_items|total_items|threads) ' >"$1"
}

# sequence NAME [ENV...]: the whole run; sets rc (memcached's exit status).
sequence() {
    local name=$1 t start
    start=$(date +%s.%N)
    start_server "$@"
    for t in set get mget; do
        timeout 30 memcslap -s "127.0.0.1:$port" -c "$CONC" -e "$OPS" -t "$t" >"$tmp/$name.slap.$t" 2>&1 ||
            bad "$name: memcslap -t $t exited $?: $(tail -3 "$tmp/$name.slap.$t")"
        grep -E "^Time to $t " "$tmp/$name.slap.$t" | sed "s/^/  $name: /" || true
    done
    roundtrip "$tmp/$name.values" || bad "$name: round trip failed"
    stats "$tmp/$name.stats" || bad "$name: stats failed"
    stop_server
    echo "  $name: port $port, $(wc -l <"$tmp/$name.values") keys read back, exit $rc after SIGTERM; took $(secs "$start") s"
}

echo "== memcached native"
sequence native
rc_nat=$rc

echo "== memcached preloaded"
sequence pre LD_PRELOAD="$LOCKBLAME_LIB" LOCKBLAME_OUTPUT="$tmp/mc.db"
rc_pre=$rc

# The values written, native and preloaded.
cmp -s "$tmp/expected" "$tmp/native.values" || bad "native: values read back differ from those written"
cmp -s "$tmp/native.values" "$tmp/pre.values" || bad "preloaded: values read back differ from the native run"
[ "$rc_nat" = "$rc_pre" ] || bad "exit $rc_pre preloaded vs $rc_nat native"
sed 's/^/  stdout: /' "$tmp/pre.out"
cmp -s "$tmp/native.out" "$tmp/pre.out" || bad "memcached's stdout differs from the native run"
sed 's/^/  stats: /' "$tmp/pre.stats"
cmp -s "$tmp/native.stats" "$tmp/pre.stats" || { bad "server counters differ"; diff "$tmp/native.stats" "$tmp/pre.stats" || true; }
grep -v '^lockblame:' "$tmp/pre.err" | sed 's/^/  stderr: /' || true
grep '^lockblame:' "$tmp/pre.err" | sed 's/^/  /' || true

db=$tmp/mc.db
if [ ! -s "$db" ]; then
    bad "no profile written"
else
    # Natively memcached handles SIGTERM itself and exits (status 0): the
    # profile is then written at exit. Killed by the signal (143) it would
    # be written by the library's handler.
    want=exit
    [ "$rc_nat" = 143 ] && want="signal SIGTERM"
    IFS='|' read -r reason threads rows acq contended <<<"$(sqlite3 "$db" \
        "SELECT exit_reason, threads, (SELECT count(*) FROM thread),
                (SELECT coalesce(sum(acquisitions), 0) FROM sync_object WHERE object = 'mutex'),
                (SELECT coalesce(sum(contended), 0) FROM sync_object WHERE object = 'mutex')
         FROM run")"
    echo "  profile: exit_reason '$reason', $threads threads ($rows thread rows), $acq mutex acquisitions ($contended contended)"
    [ "$reason" = "$want" ] || bad "exit_reason '$reason', expected '$want'"
    [ "${threads:-0}" -ge 5 ] || bad "only ${threads:-0} threads in the profile"
    [ "${acq:-0}" -ge "$((CONC * OPS))" ] || bad "only ${acq:-0} mutex acquisitions"
    # Work is CPU time, user and kernel (docs/DESIGN.md "Metrics"): the workers'
    # time in the kernel (sockets, epoll) counts. Every CPU second shows in
    # the profile: work + overhead (CPU time in synchronization code, in
    # lockblame, or while in a wrapped wait) >= 90% of the threads' CPU
    # clocks; work alone >= 80%: the rest is samples in libc's and
    # lockblame's lock code (5-16% here, the more the busier the machine;
    # lockblame's part shrinks as its contended paths get cheaper).
    IFS='|' read -r work over cpu <<<"$(sqlite3 "$db" \
        "SELECT (SELECT coalesce(sum(work_s), 0) FROM metric), (SELECT coalesce(sum(overhead_s), 0) FROM metric),
                (SELECT sum(cpu_s) FROM thread)")"
    echo "  work $work s + overhead $over s of $cpu s CPU"
    awk -v w="$work" -v o="$over" -v c="$cpu" 'BEGIN { exit !(c > 0 && w + o >= 0.9 * c && w >= 0.8 * c) }' ||
        bad "work $work s + overhead $over s does not account for the threads' CPU time $cpu s"
    for view in --by-lock --by-release-site; do
        if "$LOCKBLAME_CLI" report "$view" "$db" >"$tmp/report" 2>&1; then
            echo "  report $view:"; head -12 "$tmp/report" | sed 's/^/    /'
        else
            bad "report $view exited $?"; head -20 "$tmp/report"
        fi
    done
fi

echo "memcached: $errors problem(s)"
[ $errors -eq 0 ]
