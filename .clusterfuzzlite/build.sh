#!/bin/bash -eu
# Builds kverify's libFuzzer binaries: one per state-machine target of
# fuzz/libfuzzer (the same checks as fuzz/'s FuzzCheck* targets), each with
# its committed seed corpus as <target>_seed_corpus.zip.
#
# ClusterFuzzLite's base-builder-go image sets SRC, OUT, CXX, CXXFLAGS and
# LIB_FUZZING_ENGINE; .clusterfuzzlite/local.sh sets them on a machine
# without Docker and runs this script there. Go is go.mod's version: when
# the image's Go is older, GOTOOLCHAIN fetches it from the module proxy.
#
# go-118-fuzz-build (the tool behind the image's compile_native_go_fuzzer)
# is called directly and pinned: it rewrites the harness file while it
# builds, which is why the tree it builds is a copy (the image's, or
# local.sh's).
cd "$SRC/kverify"
GO118FUZZBUILD=v0.0.0-20250520111509-a70c2aa677fa
go install "github.com/AdamKorcz/go-118-fuzz-build@$GO118FUZZBUILD"
# The main package the tool generates imports its testing stand-in.
go get "github.com/AdamKorcz/go-118-fuzz-build/testing@$GO118FUZZBUILD"
gobin=$(go env GOPATH)/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/corpus2raw" ./fuzz/cmd/corpus2raw
targets=${TARGETS:-$(sed -n 's/^func \(FuzzCheck[A-Za-z0-9]*\)(f \*testing\.F).*/\1/p' fuzz/libfuzzer/targets.go)}
for target in $targets; do
  echo "building $target"
  "$gobin/go-118-fuzz-build" -o "$work/$target.a" -func "$target" ./fuzz/libfuzzer
  # shellcheck disable=SC2086 # the flag variables are lists
  $CXX $CXXFLAGS $LIB_FUZZING_ENGINE "$work/$target.a" -o "$OUT/$target"
  seeds="fuzz/testdata/fuzz/$target"
  if [ -d "$seeds" ]; then
    # Go corpus files are "go test fuzz v1" and a []byte literal; libFuzzer
    # takes raw bytes.
    mkdir -p "$work/corpus/$target"
    for f in "$seeds"/*; do
      "$work/corpus2raw" "$f" > "$work/corpus/$target/$(basename "$f")"
    done
    rm -f "$OUT/${target}_seed_corpus.zip"
    (cd "$work/corpus/$target" && zip -q "$OUT/${target}_seed_corpus.zip" ./*)
  fi
done
