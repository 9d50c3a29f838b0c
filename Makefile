# kverify: `make gate` and `make test` run the README's two setup commands.
GO        ?= go
KVERIFY   := $(GO) run ./cmd/kverify
# Deeper exploration for `make verify`: extra time per randomized check,
# rapid cases per round, and fuzzing time per target.
BUDGET    ?= 30s
CHECKS    ?= 1000
FUZZTIME  ?= 60s
# Runs per mutant in make verify: the kill rate and time to kill.
REPEAT    ?= 3
# make gate-loaded: CPU-bound processes beside the gate, and where the
# two runs' reports and the kverify binary go.
LOAD_PROCS ?= 8
# LOADED_RACE=false builds the loaded run without the race detector, as CI
# does (11 minutes on 2 cores instead of 33).
LOADED_RACE ?= true
REPORTS    ?= $(or $(TMPDIR),/tmp)/kverify-gate-loaded
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
# benchstat, run like staticcheck through go run (built on first use, then
# cached); kverify bench runs the same version (cmd/kverify's benchstatPkg).
BENCHSTAT   := golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da

.PHONY: gate gate-loaded test verify matrix mutants mutants-loaded vectors fuzz clusterfuzzlite gremlins controller-runtime knative lasso cilium gitops kubectl python matrix-node matrix-fluent matrix-controller-runtime node realapi realapi-record realapi-bench bench bench-controller bench-table lint tools

## gate: the verification gate on our implementation (fast)
gate:
	$(KVERIFY) verify --subject ours

## gate-loaded: the gate quiet, then again beside LOAD_PROCS CPU-bound processes (kverify load),
## then kverify compare of the two reports (in REPORTS): every verdict must be the same
# One binary for the three steps, so that nothing is compiled under load.
# The comparison runs even when the loaded gate fails, to name the checks
# that load changed; then the loaded gate's own status counts.
gate-loaded:
	mkdir -p $(REPORTS)
	$(GO) build -o $(REPORTS)/kverify ./cmd/kverify
	$(REPORTS)/kverify verify --subject ours --json $(REPORTS)/quiet.json
	$(REPORTS)/kverify load --procs $(LOAD_PROCS) -- $(REPORTS)/kverify verify --subject ours --race=$(LOADED_RACE) --json $(REPORTS)/loaded.json; \
	  rc=$$?; $(REPORTS)/kverify compare $(REPORTS)/quiet.json $(REPORTS)/loaded.json && exit $$rc

## test: every test, with the race detector
test:
	$(GO) test -race ./...

## verify: ours and upstream with a budget, every mutant REPEAT times, and fuzzing
verify:
	$(KVERIFY) verify --subject ours --budget $(BUDGET) --checks $(CHECKS)
	$(KVERIFY) verify --subject upstream --budget $(BUDGET) --checks $(CHECKS)
	$(KVERIFY) mutants --repeat $(REPEAT) --save-matrix mutants/matrix.tsv
	$(MAKE) fuzz FUZZTIME=$(FUZZTIME)
	$(MAKE) controller-runtime FUZZTIME=$(FUZZTIME)
	$(MAKE) knative
	$(MAKE) lasso
	$(MAKE) cilium
	$(MAKE) gitops
	$(MAKE) node

## matrix: every check and every finding's reproducer on every client-go release from v0.20
## (docs/matrix.md, with the summary tables the README links to, and docs/matrix.json;
## 6m31s on 2 cores with a warm build cache, longer the first time: see docs/releases.md)
matrix:
	$(KVERIFY) matrix

## controller-runtime: the priority queue (nested module) under its profile, its tests and a fuzz run
controller-runtime:
	$(KVERIFY) verify --subject controller-runtime
	cd subjects/controllerruntime && $(GO) vet ./... && $(GO) test -race ./... && \
	  $(GO) test -run '^$$' -fuzz '^FuzzPriorityQueueOps$$' -fuzztime $(FUZZTIME) .

## knative: knative.dev/pkg's two-lane queue (nested module subjects/knative) under the work
## queue family, its tests (findings, the seam copy's mutants) and its benchmark beside ours
knative:
	$(KVERIFY) verify --subject knative
	cd subjects/knative && $(GO) vet ./... && $(GO) test -race -count=1 ./... && \
	  $(GO) test -run '^$$' -bench Queue -benchmem -count 6 .
	cd traces/findings/knative && $(GO) vet ./... && $(GO) test -count=1 ./...

## lasso: rancher/lasso's shared controller and its cache (nested module subjects/lasso) under the
## controller and wire checks, its tests (findings pinned to the declarations, the adapter's mutants),
## its benchmark beside ours and client-go, and its reproducer
lasso:
	$(KVERIFY) verify --subject lasso
	cd subjects/lasso && $(GO) vet ./... && $(GO) test -race -count=1 -skip TestAdapterMutantsKilled ./... && \
	  $(GO) test -count=1 -run TestAdapterMutantsKilled ./... && \
	  $(GO) test -run '^$$' -bench Controller -benchmem -count 3 .
	cd traces/findings/lasso && $(GO) vet ./... && $(GO) test -count=1 ./...

## cilium: cilium's pkg/k8s/resource (nested module subjects/cilium, client-go v0.36.4) under the
## wire checks, and its module's tests: resource/level on it and on three broken subscribers,
## findings pinned to the declarations, and the WithTransform reproducer
cilium:
	$(KVERIFY) verify --subject cilium
	cd subjects/cilium && $(GO) vet ./... && $(GO) test -race -count=1 -short ./...
	cd traces/findings/cilium && $(GO) vet ./... && $(GO) test -count=1 ./...

## gitops: argoproj/gitops-engine's cluster cache (nested module subjects/gitops; its adapter
## subjects/gitops/client is a module of its own on k8s.io/* v0.23.1) under the wire checks, its
## finding pinned, its reproducer (module traces/findings/gitops), and its first sync of 100,000
## objects beside ours and client-go's (BenchmarkSync100k, each a process of its own)
gitops:
	cd subjects/gitops/client && $(GO) vet ./...
	cd traces/findings/gitops && $(GO) vet ./...
	cd subjects/gitops && $(GO) vet ./... && $(GO) test -count=1 -run 'TestFindings|TestReproducers' .
	$(KVERIFY) verify --subject gitops --component wire
	cd subjects/gitops && $(GO) test -run '^$$' -bench Sync100k -benchtime 1x -count 6 . > gitops-bench.out
	$(GO) run $(BENCHSTAT) -col /impl subjects/gitops/gitops-bench.out

## kubectl: kubectl get -w (nested module subjects/kubectl; KVERIFY_KUBECTL, else kubectl on PATH)
## under the wire checks as a single-shot client, its finding pinned and its reproducer; then the
## same on kubectl built from k8s.io/kubectl's newest source (subjects/kubectl/source, v0.37.2)
KUBECTL_SOURCE ?= $(or $(TMPDIR),/tmp)/kverify-kubectl-source
kubectl:
	cd subjects/kubectl && $(GO) vet ./... && $(GO) test -count=1 -run 'TestFindings|TestReproducers' .
	$(KVERIFY) verify --subject kubectl --component wire
	cd subjects/kubectl/source && $(GO) vet ./... && $(GO) build -o $(KUBECTL_SOURCE) .
	KUBECTL=$(KUBECTL_SOURCE) python3 traces/findings/kubectl/get-watch-prints-list-pages-as-events/repro.py; test $$? -eq 1
	KVERIFY_KUBECTL=$(KUBECTL_SOURCE) $(KVERIFY) verify --subject kubectl --component wire

## python: the Kubernetes Python client (nested module subjects/python; needs Debian's
## python3-kubernetes: apt-get install python3-kubernetes) under the wire checks, and its finding
python:
	cd subjects/python && $(GO) vet ./... && $(GO) test -count=1 -run 'TestFindings|TestReproducers' .
	$(KVERIFY) verify --subject python --component wire

## matrix-node: the JavaScript clients' behaviour matrix, a column per release judged
## (@kubernetes/client-node's last 0.x, 1.0.0-rc6, last 1.x and pinned 2.x, and kubernetes-fluent-client):
## docs/matrix-client-node.{md,json}; 21 minutes beside a CI run
matrix-node:
	cd subjects/node/js && npm ci --no-audit --no-fund
	$(KVERIFY) matrix --subjects client-node@0.22.3,client-node@1.0.0-rc6,client-node@1.4.0,client-node,fluent --out docs/matrix-client-node

## matrix-fluent: kubernetes-fluent-client's behaviour matrix, a column per release judged
## (its last 1.x and last 2.x, under npm aliases, and the pinned 3.x): docs/matrix-fluent.{md,json}
matrix-fluent:
	cd subjects/node/js && npm ci --no-audit --no-fund
	$(KVERIFY) matrix --subjects fluent@1.10.0,fluent@2.6.5,fluent --out docs/matrix-fluent

## matrix-controller-runtime: controller-runtime's behaviour matrix, a column per minor release
## from v0.12 (subjects/releases.CRMatrix; each a generated module): docs/matrix-controller-runtime.{md,json},
## and each column's traces in traces/findings/<column> (subjects/controllerruntime TestFindings holds them
## to that release's declarations; kverify replay FILE replays one on its release)
matrix-controller-runtime:
	$(KVERIFY) matrix --subjects controller-runtime@matrix --out docs/matrix-controller-runtime --traces traces/findings

## node: the JavaScript informers (nested module subjects/node) under the wire checks, and their findings
node:
	cd subjects/node/js && npm ci --no-audit --no-fund
	cd subjects/node && $(GO) vet ./... && $(GO) test -count=1 -run 'TestFindings|TestReproducers' .
	$(KVERIFY) verify --subject client-node --component wire
	$(KVERIFY) verify --subject fluent --component wire

## realapi: our reflector and client-go's against kube-apiserver's storage over embedded etcd,
## and the real stack's answers against the recorded fidelity traces (nested module; a cold
## build takes about 6 minutes on 2 cores)
realapi:
	cd realapi && $(GO) vet ./... && REALAPI_MUTANTS=1 $(GO) test -count=1 ./...

## realapi-record: record the fidelity scenarios from the real stack again
## (into spec/apiserver/testdata/realapi, which spec/apiserver's TestFidelity replays on the model)
realapi-record:
	cd realapi && REALAPI_RECORD=1 $(GO) test -count=1 -run TestFidelityRecordings .

## realapi-bench: a 100,000-object sync through the real stack, ours and client-go's side by side
realapi-bench:
	cd realapi && $(GO) test -run '^$$' -bench Sync100k -benchtime 2x -count 6 . > realapi-bench.out
	$(GO) run $(BENCHSTAT) -col /impl realapi/realapi-bench.out

## mutants: the kill matrix of the whole catalogue, saved to mutants/matrix.tsv
## (CI runs kverify mutants --cover: the two mutants that killed each check fastest in that file)
mutants:
	$(KVERIFY) mutants --save-matrix mutants/matrix.tsv

## mutants-loaded: the whole catalogue beside LOAD_PROCS CPU-bound processes (kverify load), with
## the kill-time bars multiplied by BAR_SCALE: every mutant must still be killed and every check kill one
# BAR_SCALE is the inverse of the CPU share a suite gets: kverify mutants runs 2 suites at once, so
# beside 8 hogs 10 processes share 2 cores, a fifth of a core each where a quiet run gets one.
BAR_SCALE ?= 5
mutants-loaded:
	mkdir -p $(REPORTS)
	$(GO) build -o $(REPORTS)/kverify ./cmd/kverify
	$(REPORTS)/kverify load --procs $(LOAD_PROCS) -- $(REPORTS)/kverify mutants --bar-scale $(BAR_SCALE) --json $(REPORTS)/mutants-loaded.json

## gremlins: go-gremlins' operator mutants of impl/, each judged by the conformance checks of
## the components built on its package (impl/*/gremlins_test.go, build tag gremlins); writes
## mutants/gremlins.md and fails on a survivor that mutants/gremlins.tsv does not explain
GREMLINS := github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0
gremlins:
	$(GO) install $(GREMLINS)
	KVERIFY_BUDGET=100ms KVERIFY_CHECKS=20 $$($(GO) env GOPATH)/bin/gremlins unleash --tags gremlins \
	  --workers 2 --timeout-coefficient 3 --output $(CURDIR)/gremlins.json $(CURDIR)/impl
	$(GO) run ./mutants/cmd/gremlins -report gremlins.json -explained mutants/gremlins.tsv -out mutants/gremlins.md

## clusterfuzzlite: .clusterfuzzlite/build.sh run here without Docker (clang-14 and libFuzzer's
## runtime from Debian), then every libFuzzer binary on its seeds and RUNS more inputs;
## MUTANT=ID builds them on a catalogue mutant and wants each to find a crash
clusterfuzzlite:
	.clusterfuzzlite/local.sh

## vectors: regenerate the golden vectors (traces/vectors/data) from the spec models,
## then replay them in Python (examples/python)
vectors:
	$(GO) test ./traces/vectors -run TestCurrent -update
	python3 examples/python/replay.py

## fuzz: each fuzz target for FUZZTIME (the -fuzz flag takes one target at a time)
fuzz:
	@for p in ./fuzz ./traces; do \
	  for f in $$($(GO) test -list '^Fuzz' $$p | grep '^Fuzz'); do \
	    echo "== $$p $$f"; \
	    $(GO) test $$p -run '^$$' -fuzz "^$${f}\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 100x || exit 1; \
	  done; \
	done

## bench-controller: 100,000 keys changed once and reconciled by 8 workers: ours, client-go's sample composition and controller-runtime's controller in one run
bench-controller:
	cd subjects/controllerruntime && $(GO) test -run '^$$' -bench Controller100k -benchmem -benchtime 2x -count 6 . > controller-bench.out
	$(GO) run $(BENCHSTAT) -col /impl subjects/controllerruntime/controller-bench.out

## bench: ours and upstream side by side (benchstat)
bench:
	$(KVERIFY) bench

## bench-table: the benchmarks, six runs each, into the table in docs/performance.md
bench-table:
	$(KVERIFY) bench --count 6 --readme docs/performance.md

## lint: gofmt, vet, staticcheck
lint:
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt needed"; exit 1; }
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

## tools: install the pinned benchstat into GOBIN, for running it by hand (the bench
## targets and kverify bench do not need it: they go run it)
tools:
	$(GO) install $(BENCHSTAT)
