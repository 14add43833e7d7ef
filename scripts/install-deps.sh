#!/usr/bin/env bash
# Make sure the Debian packages lockblame needs to build and test are present.
#
# Quiet when everything is installed. When something is missing: installs it
# with apt-get if we are root, otherwise prints one line naming what to
# install and exits 1. On a system without dpkg it only prints a note.
#
# Why each package is here:
#   gcc g++ make libc6-dev   build (the CLI links -lstdc++, which comes with g++)
#   pkg-config               the Makefile asks it for cflags/libs
#   libpfm4-dev              event names (LOCKBLAME_EVENT)
#   libsqlite3-dev           the database writer and the CLI
#   libdw-dev libelf-dev     symbolization (file:line from DWARF)
#   libdebuginfod-dev        report names stripped modules from debug files that
#                            debuginfod serves (DEBUGINFOD_URLS; the CLI dlopens
#                            libdebuginfod.so.1, the header gives its prototypes)
#   debuginfod               tests/integration/debuginfod_names.sh serves a debug
#                            file from a real server on a loopback port
#   sqlite3                  tests query the database directly
#   python3                  integration tests compare reports with ground truth
#   sysbench pigz xz-utils zstd  tests/integration/real_programs.sh runs them
#                            under the library (it skips any that is missing)
#   postgresql               tests/integration/real_postgres.sh runs a PostgreSQL server
#                            under lockblame run, loaded by pgbench (blame across processes)
#   memcached libmemcached-tools  tests/integration/real_memcached.sh runs memcached
#                            under the library, loaded by memcslap (skips if missing)
#   zlib1g-dev               report --format pprof gzips the profile.proto (CLI links -lz)
#   liblzma-dev              MiniDebugInfo: .gnu_debugdata is an xz-compressed ELF
#                            (names for stripped binaries, in the library's writer)
#   golang-go                tests/integration/pprof_export.sh reads the pprof export
#                            with the real reader, `go tool pprof` (skips if missing)
#   clang-format             tests/integration/format.sh checks the tree's format
#   time                     tests/integration/process_trees.sh runs a program
#                            under /usr/bin/time as a wrapper (exec hands on)
#   chromium                 tests/integration/cli_html.sh opens the HTML report in
#                            a real headless browser (DOM check and screenshot)
#   rustc                    the futex tests build Rust std workloads (Mutex, Condvar,
#                            RwLock, Barrier, mpsc wait through syscall(SYS_futex))
#   libglib2.0-dev           the futex tests build a GLib workload (GMutex, GCond,
#                            GThreadPool wait through syscall(SYS_futex))
set -euo pipefail

PACKAGES=(gcc g++ make libc6-dev pkg-config libpfm4-dev
          libsqlite3-dev libdw-dev libelf-dev libdebuginfod-dev debuginfod sqlite3 python3 chromium
          sysbench pigz xz-utils zstd memcached libmemcached-tools
          zlib1g-dev liblzma-dev golang-go time clang-format rustc libglib2.0-dev
          postgresql)

if ! command -v dpkg >/dev/null 2>&1; then
    echo "install-deps: no dpkg here; make sure these (Debian names) are installed: ${PACKAGES[*]}" >&2
    exit 0
fi

missing=()
for p in "${PACKAGES[@]}"; do
    # dpkg -s also succeeds for removed packages that left config files behind,
    # so look at the status itself. (Not `dpkg -s | grep -q`: under pipefail,
    # grep quitting early can kill dpkg with SIGPIPE and fail the check.)
    if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]; then
        missing+=("$p")
    fi
done

[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages; run: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi

echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
