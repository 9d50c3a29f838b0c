#!/bin/bash -eu
# Builds every native Go fuzz target of ./fuzz as a libFuzzer binary
# (compile_native_go_fuzzer needs exactly one `func <Target>(f *testing.F)`
# per name in the package) and zips its committed seed corpus.
cd "$SRC/kverify"
for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' fuzz/*_test.go | sed 's/^func //'); do
  compile_native_go_fuzzer github.com/kverify/kverify/fuzz "$target" "$target"
  if [ -d "fuzz/testdata/fuzz/$target" ]; then
    # go-fuzz corpus files are "go test fuzz v1" + a []byte literal; libFuzzer
    # wants raw bytes, so convert them.
    mkdir -p "/tmp/corpus/$target"
    for f in fuzz/testdata/fuzz/"$target"/*; do
      go run ./fuzz/cmd/corpus2raw "$f" > "/tmp/corpus/$target/$(basename "$f")"
    done
    (cd "/tmp/corpus/$target" && zip -q "$OUT/${target}_seed_corpus.zip" ./*)
  fi
done
