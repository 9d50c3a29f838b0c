package mutants

// upstreamFIFOGo is client-go's FIFO adapter: a change there is a second
// bug in a subject (cache.DeltaFIFO, cache.RealFIFO) that has declared
// divergences.
const (
	upstreamFIFOGo      = "subjects/upstream/fifo.go"
	upstreamReflectorGo = "subjects/upstream/reflector.go"
)

// declaredMutants add a second bug to client-go, whose declared divergences
// cover some violations of the same checks (issue 27, class 4): each must
// be reported, not excused, because it breaks another scenario of a check
// that has a declared one, or the same guarantee in another shape.
var declaredMutants = []Mutant{
	{ID: "up-fifo-delete-swallows-error", Component: "deltafifo", File: upstreamFIFOGo, Subject: "upstream",
		Bug: "the adapter's Delete drops the FIFO's error: Delete of an object no key can be computed for returns nil (deltafifo/bad-input declares other violations of Bad input rejected: nameless objects accepted, typed nils panicking, partial Replaces)",
		Old: "func (c cacheFIFO) Delete(obj any) error                { return c.f.Delete(obj) }",
		New: "func (c cacheFIFO) Delete(obj any) error                { _ = c.f.Delete(obj); return nil }"},
	{ID: "up-fifo-update-swallows-error", Component: "realfifo", File: upstreamFIFOGo, Subject: "upstream",
		Bug: "the adapter's Update drops the FIFO's error: Update of an object no key can be computed for returns nil (realfifo/bad-input declares other violations of Bad input rejected)",
		Old: "func (c cacheFIFO) Update(obj any) error                { return c.f.Update(obj) }",
		New: "func (c cacheFIFO) Update(obj any) error                { _ = c.f.Update(obj); return nil }"},
	{ID: "up-dfifo-pop-keeps-last", Component: "deltafifo", File: upstreamFIFOGo, Subject: "upstream",
		Bug: "the adapter keeps the last popped deltas in a variable, so a popped object stays referenced (deltafifo/retention declares that the popped key stays referenced, not the object)",
		Old: "func (c cacheFIFO) Pop(process func([]pfifo.Delta, bool) error) ([]pfifo.Delta, error) {\n\titem, err := c.f.Pop(func(obj any, initial bool) error {\n\t\treturn process(fromDeltas(obj.(cache.Deltas)), initial)\n\t})\n\tif ds, ok := item.(cache.Deltas); ok {\n",
		New: "var lastPopped cache.Deltas\n\nfunc (c cacheFIFO) Pop(process func([]pfifo.Delta, bool) error) ([]pfifo.Delta, error) {\n\titem, err := c.f.Pop(func(obj any, initial bool) error {\n\t\treturn process(fromDeltas(obj.(cache.Deltas)), initial)\n\t})\n\tif ds, ok := item.(cache.Deltas); ok {\n\t\tlastPopped = ds\n"},
	{ID: "up-reflector-run-returns-early", Component: "reflector", File: upstreamReflectorGo, Subject: "upstream",
		Bug: "the adapter's Run returns when its context is cancelled without waiting for the reflector to stop, so watches are stopped after Run returned (reflector/stops declares only a stream stopped twice or left open while relisting)",
		Old: "func (r reflector) Run(ctx context.Context)         { runReflector(ctx, r.r) }",
		New: "func (r reflector) Run(ctx context.Context)         { go runReflector(ctx, r.r); <-ctx.Done() }"},
	{ID: "up-reflector-no-expected-type", Component: "reflector", File: upstreamReflectorGo, Subject: "upstream",
		Bug: "the adapter makes client-go's reflector without its expected type, so watch events whose object is of another type reach the store (reflector/malformed declares only objects stored with an empty or non-numeric version: issue 41, item 9)",
		Old: "r := cache.NewReflectorWithOptions(lw, &metav1.PartialObjectMetadata{}, reflectorStore(s.Store),",
		New: "_ = metav1.Now // the expected type is gone\n\t\tr := cache.NewReflectorWithOptions(lw, nil, reflectorStore(s.Store),"},
}
