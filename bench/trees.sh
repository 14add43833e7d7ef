# Process trees, sourced by bench/run.sh (its helpers: row, progress,
# interleave, collect, pratio, prange, fmt, calc). What a profiled process
# costs beyond its own work: the library's start in each process, its fork
# and exit, and the write of each recording process's profile.
#   fork-heavy  200 children one after another, each with 2 threads waiting
#               ~1 ms on a cond (a test harness, a prefork server)
#   LTP-like    1,600 children one after another, each creating 8 threads
#               (LTP's pthread_cond_broadcast/1-2 has this shape)
#   make -j4    31 C files compiled under `lockblame run` (about 70 processes,
#               exec'd, most of them recording)
#   pgbench -C  PostgreSQL with a new backend process per transaction, where
#               PostgreSQL is installed and the bench runs as root
# Figures only; nothing here fails.

CLI=$(realpath "$BUILD/lockblame")
TREE_FORK_N=200
TREE_LTP_N=1600
TREE_MAKE_FILES=31
# pgbench: single rounds' ratios range 0.73-1.24x on 2 vCPUs, so 6
# rounds of 5 s, whose median is steadier than that of 3 of 10 s
PG_SECONDS=5
PG_ROUNDS=6
if [ "$QUICK" = 1 ]; then
    TREE_FORK_N=40 TREE_LTP_N=200 TREE_MAKE_FILES=8 PG_SECONDS=2 PG_ROUNDS=1
fi

# per_process_ms NAME N -> lockblame's added milliseconds a process (medians)
per_process_ms() {
    calc '%.2f' "$(collect "$1" native elapsed_s)" "$(collect "$1" lb elapsed_s)" "(b - a) * 1000 / $2"
}

# lines_of_last NAME TAG -> the lockblame: lines the last such run printed
lines_of_last() {
    awk -v head="== $1 $2 rep $REPS:" 'index($0, head) == 1 { on = 1; n = 0; next }
        /^== / { on = 0 } on && /^lockblame:/ { n++ } END { print n + 0 }' "$LOG"
}

progress "fork-heavy tree (${REPS}x2 runs of $TREE_FORK_N children)"
interleave forkheavy "native=native lb=lb" "$B/forktree" "$TREE_FORK_N" 2 1000
row "fork-heavy: $TREE_FORK_N children, each 2 threads waiting ~1 ms on a cond, s" \
    "$(fmt %.3f "$(collect forkheavy native elapsed_s)")" "$(fmt %.3f "$(collect forkheavy lb elapsed_s)")" \
    "$(pratio forkheavy native lb elapsed_s)" \
    "target <=1.5x and <=1 ms a process; lockblame adds $(per_process_ms forkheavy "$TREE_FORK_N") ms a process; $(prange forkheavy native lb elapsed_s)"

progress "LTP-like tree (${REPS}x2 runs of $TREE_LTP_N children)"
interleave ltplike "native=native lb=lb" "$B/forktree" "$TREE_LTP_N" 8 0
row "LTP-like: $TREE_LTP_N children one after another, each creating 8 threads, s" \
    "$(fmt %.3f "$(collect ltplike native elapsed_s)")" "$(fmt %.3f "$(collect ltplike lb elapsed_s)")" \
    "$(pratio ltplike native lb elapsed_s)" \
    "target <=2x; lockblame adds $(per_process_ms ltplike "$TREE_LTP_N") ms a process; $(lines_of_last ltplike lb) lockblame: lines on stderr in its last run; $(prange ltplike native lb elapsed_s)"

# make -j4 of generated C files: natively and under `lockblame run`.
make_project() {
    local dir=$OUT/mkproj i
    mkdir -p "$dir"
    for ((i = 0; i < TREE_MAKE_FILES; i++)); do
        cat >"$dir/f$i.c" <<C
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct item$i { int key; double value; char name[32]; struct item$i *next; };
static int cmp$i(const void *a, const void *b)
{
    const struct item$i *x = a, *y = b;
    return (x->key > y->key) - (x->key < y->key);
}
double work$i(int n)
{
    struct item$i *items = calloc((size_t)n, sizeof *items);
    double sum = 0;
    for (int j = 0; j < n; j++) {
        items[j].key = (j * 7919 + $i) % n;
        items[j].value = j * 0.5;
        snprintf(items[j].name, sizeof items[j].name, "item-%d-%d", $i, j);
    }
    qsort(items, (size_t)n, sizeof *items, cmp$i);
    for (int j = 0; j < n; j++)
        sum += items[j].value * (double)strlen(items[j].name);
    free(items);
    return sum;
}
C
    done
    {
        printf 'OBJS := %s\n' "$(for ((i = 0; i < TREE_MAKE_FILES; i++)); do printf 'f%d.o ' "$i"; done)"
        printf 'all: $(OBJS)\n%%.o: %%.c\n\t$(CC) -O2 -g -c -o $@ $<\n'
    } >"$dir/Makefile"
    echo "$dir"
}
mkdir_p=$(make_project)
progress "make -j4 of $TREE_MAKE_FILES C files (${REPS}x2 runs)"
for ((REP = 1; REP <= REPS; REP++)); do
    for v in $([ $((REP % 2)) = 1 ] && echo "native lb" || echo "lb native"); do
        rm -f "$mkdir_p"/*.o "$OUT/make.db"
        if [ "$v" = native ]; then
            "$B/spawn" make -s -j4 -C "$mkdir_p" >"$OUT/make.$v.$REP" 2>>"$LOG"
        else
            "$B/spawn" "$CLI" run -o "$OUT/make.db" -- make -s -j4 -C "$mkdir_p" >"$OUT/make.$v.$REP" 2>>"$LOG"
        fi
    done
done
mk_procs=$(sqlite3 "$OUT/make.db" 'SELECT COUNT(*) FROM run' 2>/dev/null)
row "make -j4 of $TREE_MAKE_FILES C files under lockblame run, s" \
    "$(fmt %.3f "$(collect make native spawn_wall_s)")" "$(fmt %.3f "$(collect make lb spawn_wall_s)")" \
    "$(pratio make native lb spawn_wall_s)" \
    "target <=1.1x; ${mk_procs:-?} processes wrote a profile; $(prange make native lb spawn_wall_s)"

# PostgreSQL, a backend forked per connection: pgbench -C -S, one server
# native and one under `lockblame run`, side by side, rounds alternating.
pgbench_row() {
    local label="pgbench -C -S -c 4 -T $PG_SECONDS (a backend per transaction), tps"
    local pgbin
    pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    if [ -z "$pgbin" ] || ! command -v pgbench >/dev/null; then
        row "$label" - - - "skipped: PostgreSQL not installed (scripts/install-deps.sh installs it)"
        return
    fi
    if [ "$(id -u)" != 0 ] || ! id postgres >/dev/null 2>&1; then
        row "$label" - - - "skipped: needs root and the postgres user"
        return
    fi
    local d port_n=$((20000 + RANDOM % 20000)) port_l r v tps
    port_l=$((port_n + 1))
    d=$(mktemp -d /tmp/lockblame-bench-pg.XXXXXX)
    chmod 755 "$d"
    cp "$CLI" "$LIB" "$d/"
    chown -R postgres "$d"
    as_pg() { runuser -u postgres -- env -i PATH=/usr/bin:/bin HOME="$d" "$@"; }
    as_pg "$pgbin/initdb" -D "$d/native" -A trust >>"$LOG" 2>&1 && as_pg cp -a "$d/native" "$d/lb" || {
        row "$label" - - - "skipped: initdb failed (see $LOG)"
        rm -rf "$d"
        return
    }
    local opts=(-k "$d" -c listen_addresses= -c fsync=off)
    as_pg "$pgbin/postgres" -D "$d/native" -p "$port_n" "${opts[@]}" >>"$LOG" 2>&1 &
    as_pg "$d/lockblame" run -o "$d/pg.db" -- "$pgbin/postgres" -D "$d/lb" -p "$port_l" "${opts[@]}" \
        >>"$LOG" 2>&1 &
    local p ready
    for p in "$port_n" "$port_l"; do
        ready=0
        for _ in $(seq 1 300); do
            as_pg "$pgbin/pg_isready" -h "$d" -p "$p" >/dev/null 2>&1 && { ready=1; break; }
            sleep 0.2
        done
        [ $ready = 1 ] && as_pg pgbench -h "$d" -p "$p" -i -s 2 postgres >>"$LOG" 2>&1
    done
    for ((r = 1; r <= PG_ROUNDS; r++)); do
        for v in $([ $((r % 2)) = 1 ] && echo "native lb" || echo "lb native"); do
            p=$port_n
            [ "$v" = lb ] && p=$port_l
            tps=$(as_pg pgbench -h "$d" -p "$p" -C -S -c 4 -T "$PG_SECONDS" postgres 2>>"$LOG" |
                awk '/^tps = / { print $3; exit }')
            echo "tps ${tps:-}" >"$OUT/pgbench.$v.$r"
            # the profiled server's sealed logs merged before the next
            # round (up to 10 s): its run's merge would otherwise run in
            # that round, the native one's half the time
            if [ "$v" = lb ]; then
                for _ in $(seq 1 100); do
                    ls "$d/pg.db-spool" 2>/dev/null | grep -q '\.lbframes' || break
                    sleep 0.1
                done
            fi
        done
    done
    as_pg "$pgbin/pg_ctl" -D "$d/native" -m fast stop >>"$LOG" 2>&1
    kill -INT "$(pgrep -u postgres -f "^$d/lockblame run" | head -n 1)" 2>/dev/null
    wait
    local procs
    procs=$(sqlite3 "$d/pg.db" 'SELECT COUNT(*) FROM run' 2>/dev/null)
    local saved=$REPS
    REPS=$PG_ROUNDS
    row "$label" "$(fmt %.1f "$(collect pgbench native tps)")" "$(fmt %.1f "$(collect pgbench lb tps)")" \
        "$(pratio pgbench native lb tps)" \
        "target >=0.9x; ${procs:-?} processes wrote a profile; fsync=off; $PG_ROUNDS rounds, $(prange pgbench native lb tps)"
    REPS=$saved
    rm -rf "$d"
}
progress "PostgreSQL pgbench -C (${PG_ROUNDS}x2 runs of $PG_SECONDS s)"
pgbench_row
