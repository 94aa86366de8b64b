#!/bin/bash
# tests/fuzz/build.sh: build the libFuzzer targets (tests/fuzz/fuzz_*.c).
#
#   tests/fuzz/build.sh [TARGET...]      default: every target
#
# Each target is linked with `clang -g -O1 -fsanitize=fuzzer,address,undefined`
# against an instrumented copy of libkist (the libkist_a_SOURCES of
# Makefile.am, compiled with -fsanitize=fuzzer-no-link,address,undefined into
# a static archive, so a target pulls in only the objects it needs; main.c
# and the cmd_*.c files are not part of it).
#
# Outputs go to $KIST_FUZZ_BUILDDIR/fuzz (default _build-fuzz/fuzz), never into
# the source tree.  The generated runtime/seccomp_builtin.c comes from
# `make runtime/seccomp_builtin.c` in $KIST_FUZZ_BUILDDIR, which is
# configured (../configure) first if it is not yet.  Objects are rebuilt only
# when their source, a runtime/ header or this script is newer.
#
# Exit status: 0 built; 77 clang or its libFuzzer runtime is missing (the
# caller reports that as skipped); anything else is a build failure.
# Environment: CLANG (default clang), JOBS (default 2), KIST_FUZZ_BUILDDIR.
set -u -o pipefail
export LC_ALL=C

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FUZZ_SRC=$REPO/tests/fuzz
BUILDDIR=${KIST_FUZZ_BUILDDIR:-$REPO/_build-fuzz}
OUT=$BUILDDIR/fuzz
CLANG=${CLANG:-clang}
JOBS=${JOBS:-2}

say ()
{
  printf 'fuzz build: %s\n' "$*" >&2
}

# ---- toolchain ---------------------------------------------------------------
if ! command -v "$CLANG" > /dev/null 2>&1; then
  say "$CLANG not found: cannot build the fuzz targets"
  exit 77
fi
mkdir -p "$OUT/obj" || exit 1
probe=$OUT/probe
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
  'int LLVMFuzzerTestOneInput (const uint8_t *d, size_t n) { (void) d; (void) n; return 0; }' \
  > "$probe.c" || exit 1
if ! "$CLANG" -fsanitize=fuzzer,address,undefined -o "$probe" "$probe.c" > "$probe.log" 2>&1; then
  say "$CLANG cannot link -fsanitize=fuzzer,address,undefined: no libFuzzer runtime?"
  say "(on Debian: apt-get install clang libclang-rt-14-dev)"
  sed 's/^/  /' "$probe.log" >&2
  exit 77
fi

# ---- generated sources (a configured build dir) -------------------------------------
if [ ! -f "$BUILDDIR/Makefile" ]; then
  if [ ! -x "$REPO/configure" ]; then
    say "no $REPO/configure (run autoreconf -fi first)"
    exit 1
  fi
  say "configuring $BUILDDIR (log: $OUT/configure.log)"
  if ! (cd "$BUILDDIR" && "$REPO/configure") > "$OUT/configure.log" 2>&1; then
    tail -n 20 "$OUT/configure.log" >&2
    exit 1
  fi
fi
if ! make -s -C "$BUILDDIR" runtime/seccomp_builtin.c > "$OUT/make.log" 2>&1; then
  say "make runtime/seccomp_builtin.c failed in $BUILDDIR:"
  cat "$OUT/make.log" >&2
  exit 1
fi
version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$BUILDDIR/config.h")

# ---- flags -------------------------------------------------------------------------------
read -r -a dep_cflags <<< "$(pkg-config --cflags libseccomp yajl libmnl 2> /dev/null)"
read -r -a dep_libs <<< "$(pkg-config --libs libseccomp yajl libmnl 2> /dev/null || echo -lseccomp -lyajl -lmnl)"
SAN=("-fsanitize=address,undefined" -fno-sanitize-recover=all -fno-omit-frame-pointer)
CFLAGS=(-std=gnu11 -g -O1 "${SAN[@]}" -Wall -Wextra -Wno-unused-parameter
  -Wno-missing-field-initializers -DHAVE_CONFIG_H -I"$BUILDDIR" "${dep_cflags[@]}"
  -DKIST_DATADIR="\"$REPO\"" -DKIST_VERSION="\"${version:-0}\"")

# ---- the instrumented library ----------------------------------------------------------------
# libkist_a_SOURCES (the .c files) from Makefile.am, plus the generated file.
mapfile -t lib_srcs < <(sed -n '/^libkist_a_SOURCES *=/,/^[^\t ]/p' "$REPO/Makefile.am" \
  | grep -o 'runtime/[A-Za-z0-9_]*\.c' | sort -u)
if [ "${#lib_srcs[@]}" = 0 ]; then
  say "no libkist_a_SOURCES found in Makefile.am"
  exit 1
fi
newest_dep=${BASH_SOURCE[0]}
for h in "$REPO"/runtime/*.h; do
  [ "$h" -nt "$newest_dep" ] && newest_dep=$h
done

jobs_list=()
objs=()
for src in "${lib_srcs[@]}" runtime/seccomp_builtin.c; do
  if [ "$src" = runtime/seccomp_builtin.c ]; then
    path=$BUILDDIR/$src
  else
    path=$REPO/$src
  fi
  obj=$OUT/obj/$(basename "$src" .c).o
  objs+=("$obj")
  if [ ! -f "$obj" ] || [ "$path" -nt "$obj" ] || [ "$newest_dep" -nt "$obj" ]; then
    jobs_list+=("$path")
  fi
done

if [ "${#jobs_list[@]}" -gt 0 ]; then
  say "compiling ${#jobs_list[@]} runtime file(s) with -fsanitize=fuzzer-no-link,address,undefined"
  export CLANG OUT
  # shellcheck disable=SC2016 # the script is expanded by the inner bash
  printf '%s\0' "${jobs_list[@]}" \
    | xargs -0 -n 1 -P "$JOBS" bash -c \
      '
        set -u
        src=${!#}
        obj=$OUT/obj/$(basename "$src" .c).o
        "$CLANG" "${@:1:$#-1}" -fsanitize=fuzzer-no-link -c "$src" -o "$obj.tmp" 2> "$obj.log" \
          && mv -f "$obj.tmp" "$obj" || { echo "FAILED: $src" >&2; cat "$obj.log" >&2; exit 1; }
        exit 0' _ "${CFLAGS[@]}" -iquote "$REPO/runtime" || exit 1
fi
lib=$OUT/libkist-fuzz.a
rebuild_lib=
[ -f "$lib" ] || rebuild_lib=1
for o in "${objs[@]}"; do
  [ "$o" -nt "$lib" ] && rebuild_lib=1
done
if [ -n "$rebuild_lib" ]; then
  rm -f "$lib"
  ar rcs "$lib" "${objs[@]}" || exit 1
fi

# ---- the targets -----------------------------------------------------------------------------
if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  targets=()
  for f in "$FUZZ_SRC"/fuzz_*.c; do
    [ -e "$f" ] || continue
    f=${f##*/fuzz_}
    targets+=("${f%.c}")
  done
fi
rc=0
for t in "${targets[@]}"; do
  src=$FUZZ_SRC/fuzz_$t.c
  bin=$OUT/fuzz_$t
  if [ ! -f "$src" ]; then
    say "no target $t ($src)"
    rc=1
    continue
  fi
  if [ -x "$bin" ] && [ ! "$src" -nt "$bin" ] && [ ! "$lib" -nt "$bin" ] \
     && [ ! "$FUZZ_SRC/fuzz.h" -nt "$bin" ] && [ ! "${BASH_SOURCE[0]}" -nt "$bin" ]; then
    continue
  fi
  say "linking fuzz_$t"
  if ! "$CLANG" "${CFLAGS[@]}" -Werror -fsanitize=fuzzer -iquote "$REPO/runtime" -iquote "$FUZZ_SRC" \
       -o "$bin.tmp" "$src" "$lib" "${dep_libs[@]}"; then
    say "FAILED: fuzz_$t"
    rc=1
    continue
  fi
  mv -f "$bin.tmp" "$bin" || rc=1
done
exit "$rc"
