#!/usr/bin/env bash
# Packs what a bigger machine needs to run bench/scale.sh and bench/field.sh
# without building anything there: the library, the CLI, the contended
# bench programs, the reference preloads, sysbench/pigz/xz when installed,
# and the shared libraries they need beyond glibc. Into .devpack/ (ignored
# by git), to be carried to the machine with the working tree; run
# bench/device_run.sh there.
#
#   bench/pack.sh [NAME=LIBRARY.so ...]
#
# Each NAME=LIBRARY.so adds another build of liblockblame as
# .devpack/lib-NAME.so, for a before/after column: device_run.sh makes it a
# variant NAME. glibc itself is not packed: the machine's own is used
# (device_run.sh prints its version).
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
P=.devpack
for f in "$BUILD/liblockblame.so" "$BUILD/lockblame" "$BUILD/bench/taskq" "$BUILD/bench/libmechanism.so"; do
    [ -e "$f" ] || { echo "pack: $f missing; run 'make all bench-progs'" >&2; exit 1; }
done
rm -rf "$P"
mkdir -p "$P/bench" "$P/bin" "$P/lib"
cp "$BUILD/liblockblame.so" "$BUILD/lockblame" "$P/"
for p in taskq handoff lockmix pingpong libforward.so libmechanism.so; do cp "$BUILD/bench/$p" "$P/bench/"; done
for spec in "$@"; do
    case $spec in
        *=*) cp "${spec#*=}" "$P/lib-${spec%%=*}.so" ;;
        *) echo "pack: '$spec' is not NAME=LIBRARY.so" >&2; exit 1 ;;
    esac
done
for tool in sysbench pigz xz; do
    path=$(command -v "$tool" 2>/dev/null) && cp "$path" "$P/bin/"
done
# the non-glibc libraries of the CLI and the tools (glibc's own stay: the
# machine's loader and libc must match)
for bin in "$P/lockblame" "$P"/bin/*; do
    [ -e "$bin" ] && ldd "$bin" | awk '$3 ~ /^\// { print $3 }'
done | sort -u |
    grep -vE '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux-x86-64|libstdc\+\+|libgcc_s)\.so' |
    while read -r lib; do cp -L "$lib" "$P/lib/"; done
du -sh "$P" | awk '{ print "pack: .devpack, " $1 }'
