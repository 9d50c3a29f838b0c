#!/bin/bash -eu
# Runs build.sh as ClusterFuzzLite's base-builder-go image runs it, on this
# machine, without Docker; then runs every binary it built on its seed
# corpus and RUNS (default 500) more inputs, and prints libFuzzer's
# execs/s. TARGETS limits both to some targets; OUT is where the binaries
# go (default .clusterfuzzlite/out, not committed).
#
# MUTANT=ID builds the binaries with that catalogue mutant applied (see
# mutants/) and inverts the verdict: each target must find a crash within
# RUNS inputs, which shows the libFuzzer build catches a real bug.
#
# The image's compiler is clang with libFuzzer's runtime: on Debian that is
# clang-14 and libclang-rt-14-dev, installed here when missing (as root).
# The flags are the image's for SANITIZER=address.
root=$(cd "$(dirname "$0")/.." && pwd)
if ! command -v clang++-14 >/dev/null || ! ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q clang-14 libclang-rt-14-dev zip unzip >/dev/null
fi
export OUT=${OUT:-$root/.clusterfuzzlite/out}
export SRC CXX=clang++-14 CC=clang-14 LIB_FUZZING_ENGINE=-fsanitize=fuzzer SANITIZER=address
export CXXFLAGS="-O1 -fno-omit-frame-pointer -gline-tables-only -fsanitize=address -fsanitize-address-use-after-scope"
SRC=$(mktemp -d)
trap 'rm -rf "$SRC"' EXIT
mkdir -p "$OUT" "$SRC/kverify"
# The image copies the tree in; go-118-fuzz-build edits the copy.
tar -C "$root" --exclude=./.git --exclude=./.clusterfuzzlite/out --exclude=./kverify --exclude=./bench -cf - . | tar -C "$SRC/kverify" -xf -
if [ -n "${MUTANT:-}" ]; then
  (cd "$root" && go run ./mutants/cmd/apply -root "$SRC/kverify" "$MUTANT")
fi
bash "$root/.clusterfuzzlite/build.sh"

targets=${TARGETS:-$(sed -n 's/^func \(FuzzCheck[A-Za-z0-9]*\)(f \*testing\.F).*/\1/p' "$root/fuzz/libfuzzer/targets.go")}
status=0
for target in $targets; do
  corpus="$SRC/corpus/$target"
  mkdir -p "$corpus"
  [ -f "$OUT/${target}_seed_corpus.zip" ] && unzip -q -o "$OUT/${target}_seed_corpus.zip" -d "$corpus"
  log="$OUT/$target.log"
  if (cd "$OUT" && "./$target" -runs="${RUNS:-500}" -rss_limit_mb=2560 "$corpus" > "$log" 2>&1); then
    verdict=ok
    [ -n "${MUTANT:-}" ] && verdict=SURVIVED status=1
  else
    if [ -n "${MUTANT:-}" ]; then verdict=killed; else verdict=FAIL status=1; fi
  fi
  echo "$verdict $target: $(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "$log" | tail -1)$(grep -m1 -o 'kverify: .*failed on this input' "$log") (log: $log)"
done
exit $status
