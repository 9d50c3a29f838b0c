package wire

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
)

// Informer is what GoClient needs of an in-process informer (client-go's
// SharedIndexInformer and ours both have it, through small adapters).
type Informer struct {
	// List returns the informer's store; LastSyncResourceVersion the
	// version its reflector reports; Synced whether the handler reports
	// synced (a registration's HasSynced).
	List                    func() []any
	LastSyncResourceVersion func() string
	Synced                  func() bool
	// Tombstone unwraps a delete's DeletedFinalStateUnknown, if obj is one.
	Tombstone func(obj any) (any, bool)
}

// GoClient is the protocol side of an in-process informer: register it as
// the informer's event handler (OnAdd, OnUpdate, OnDelete), set its
// Informer, then Run the informer through it.
type GoClient struct {
	Informer Informer
	stop     func()
	mu       sync.Mutex
	lines    []Line
	synced   bool
}

// NewGoClient returns a client whose hello names client.
func NewGoClient(client string) *GoClient {
	return &GoClient{lines: []Line{{Type: LineHello, Protocol: Protocol, Client: client}}}
}

func (c *GoClient) add(l Line) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines = append(c.lines, l)
}

// object is obj's key and version (a non-object: "?").
func object(obj any) (key, rv string) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "?", "?"
	}
	key = m.GetName()
	if ns := m.GetNamespace(); ns != "" {
		key = ns + "/" + key
	}
	return key, m.GetResourceVersion()
}

// OnAdd records an add.
func (c *GoClient) OnAdd(obj any, _ bool) {
	k, rv := object(obj)
	c.add(Line{Type: LineAdd, Key: k, RV: rv})
}

// OnUpdate records an update.
func (c *GoClient) OnUpdate(oldObj, newObj any) {
	k, rv := object(newObj)
	_, old := object(oldObj)
	c.add(Line{Type: LineUpdate, Key: k, RV: rv, OldRV: old})
}

// OnDelete records a delete.
func (c *GoClient) OnDelete(obj any) {
	tomb := false
	if c.Informer.Tombstone != nil {
		if o, ok := c.Informer.Tombstone(obj); ok {
			obj, tomb = o, true
		}
	}
	k, rv := object(obj)
	c.add(Line{Type: LineDelete, Key: k, RV: rv, Tombstone: tomb})
}

// Lines returns the lines so far; a synced line is added the first time
// the informer reports synced when asked (no goroutine polls it).
func (c *GoClient) Lines() []Line {
	if synced := c.Informer.Synced(); synced {
		c.mu.Lock()
		if !c.synced {
			c.synced = true
			c.lines = append(c.lines, Line{Type: LineSynced})
		}
		c.mu.Unlock()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Line(nil), c.lines...)
}

// State reports the store and the reflector's version.
func (c *GoClient) State() (Line, error) {
	st := Line{Type: LineState, RV: c.Informer.LastSyncResourceVersion(), Cache: []Object{}}
	for _, o := range c.Informer.List() {
		k, rv := object(o)
		st.Cache = append(st.Cache, Object{Key: k, RV: rv})
	}
	return st, nil
}

// Run runs the informer (its Run method) on a goroutine of its own until
// Stop, which cancels its context and waits for it to return.
func (c *GoClient) Run(run func(context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	c.stop = func() { cancel(); <-done }
	go func() {
		defer close(done)
		run(ctx)
	}()
}

// Stop stops the informer and waits for it.
func (c *GoClient) Stop() error {
	c.stop()
	return nil
}
