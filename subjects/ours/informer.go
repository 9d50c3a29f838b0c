package ours

import (
	"context"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/kverify/kverify/impl/delta"
	"github.com/kverify/kverify/impl/informer"
	"github.com/kverify/kverify/linearizability"
	pinf "github.com/kverify/kverify/props/informer"
	sinf "github.com/kverify/kverify/spec/informer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
)

// Informer is impl/informer behind the suite's FanOut: a minimal
// informer whose "source" is a key store, so the suite drives our listener,
// pump and processor exactly as an informer would.
func Informer() pinf.Subject {
	return pinf.Subject{
		New:  func() pinf.FanOut { return newOursFanOut(0) },
		Pump: oursPump{},
		Linear: func() linearizability.FanOut {
			return ListenerFanOut(informer.ListenerOptions{})
		},
		NewResync: func(check time.Duration) pinf.ResyncFanOut { return newOursFanOut(check) },
		Slow:      func() (pinf.SlowFanOut, func()) { return newOursFanOut(0), func() {} },
		// Our listeners contain handler panics themselves (impl/informer's
		// package doc): nothing to set up.
		ContainPanics: func(body func() error) error { return body() },
	}
}

// oursFanOut is the minimal informer. Its events and resync rounds reach
// the processor through informer.DeltaHandler, the informer's own glue, so
// that the glue's choice between an ordinary update and a resync (the
// objects' resource versions: a resync hands the unchanged object) is
// under the checks too. emitMu plays client-go's blockDeltas
// (shared_informer.go:1042-1063,1066-1080): an event, the join of a late
// handler (its initial list, then UpstreamSynced) and a resync round never
// interleave.
type oursFanOut struct {
	emitMu sync.Mutex
	store  map[string]*metav1.ObjectMeta // each key's object, a new version per event
	rv     int
	proc   *informer.Processor
	glue   delta.Handler // informer.DeltaHandler(proc)
	clock  clock.Clock
	pre    []*informer.Listener // added before Start, not removed
	// check is the resync check period, lowered by handlers that ask for
	// less before Start; defaultPeriod is a handler's period when it does
	// not ask (client-go: both are NewSharedIndexInformer's resync argument).
	check, defaultPeriod time.Duration
	handlers             int // for listener names
	started              bool
	stopped              bool
	cancel               context.CancelFunc
	runDone, resyncDone  chan struct{}

	reportMu sync.Mutex
	slow     []pinf.SlowWarning
	panics   []any
}

func newOursFanOut(check time.Duration) *oursFanOut {
	c := clock.RealClock{} // the bubble's fake clock under synctest
	proc := informer.NewProcessor(c)
	return &oursFanOut{store: map[string]*metav1.ObjectMeta{}, proc: proc, glue: informer.DeltaHandler(proc), clock: c, check: check, defaultPeriod: check}
}

// keys is the store's content, sorted (the order of an initial list is not
// part of the contract; sorted keeps our runs reproducible).
func (f *oursFanOut) keys() []string {
	ks := make([]string, 0, len(f.store))
	for k := range f.store {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func (f *oursFanOut) initialList(l *informer.Listener) {
	for _, k := range f.keys() {
		l.Add(informer.Notification{Kind: informer.Add, New: f.store[k], InInitialList: true})
	}
	l.UpstreamSynced()
}

func (f *oursFanOut) AddHandler(h pinf.Handler) (pinf.Registration, error) {
	return f.AddHandlerWithResync(h, f.defaultPeriod)
}

// AddHandlerWithResync registers h with client-go's resync period rules
// (informer.JoinResync).
func (f *oursFanOut) AddHandlerWithResync(h pinf.Handler, period time.Duration) (pinf.Registration, error) {
	f.emitMu.Lock()
	defer f.emitMu.Unlock()
	req, eff, check, err := informer.JoinResync(period, f.check, f.started)
	if err != nil {
		return nil, err
	}
	if check != f.check {
		f.check = check
		f.proc.ResyncCheckPeriodChanged(check)
	}
	name := fmt.Sprintf("h%d", f.handlers)
	f.handlers++
	l := informer.NewListener(handlerAdapter{h}, informer.ListenerOptions{Name: name, SlowHandler: f.onSlow, OnPanic: f.onPanic})
	l.SetResync(req, eff, f.clock.Now())
	if _, err := f.proc.AddListener(l); err != nil {
		return nil, err
	}
	// The processor may not run yet right after Start; the listener then
	// starts with Run, and Add waits for it (it holds no processor lock).
	if f.started {
		f.initialList(l)
	} else {
		f.pre = append(f.pre, l)
	}
	return oursRegistration{l}, nil
}

// AddAgain adds r's listener to the processor again (pinf.Readder): the
// processor's AddListener of a listener it has, which starts it again if
// it runs.
func (f *oursFanOut) AddAgain(r pinf.Registration) error {
	reg, ok := r.(oursRegistration)
	if !ok {
		return fmt.Errorf("ours fan-out: a registration of another fan-out")
	}
	_, err := f.proc.AddListener(reg.Listener)
	return err
}

func (f *oursFanOut) RemoveHandler(r pinf.Registration) error {
	reg, ok := r.(oursRegistration)
	if !ok {
		return nil
	}
	f.emitMu.Lock()
	defer f.emitMu.Unlock()
	f.pre = slices.DeleteFunc(f.pre, func(l *informer.Listener) bool { return l == reg.Listener })
	f.proc.RemoveListener(reg.Listener)
	return nil
}

func (f *oursFanOut) Emit(kind pinf.Kind, key string) {
	f.emitMu.Lock()
	defer f.emitMu.Unlock()
	// Before Start the informer's controller is not running: the event only
	// changes the store, which handlers get as their initial list.
	live := f.started && !f.stopped
	switch kind {
	case pinf.Add, pinf.Update:
		old, existed := f.store[key]
		f.rv++
		obj := &metav1.ObjectMeta{Name: key, ResourceVersion: strconv.Itoa(f.rv)}
		f.store[key] = obj
		switch {
		case !live:
		case existed:
			f.glue.OnUpdate(old, obj)
		default:
			f.glue.OnAdd(obj, false)
		}
	case pinf.Delete:
		old := f.store[key]
		delete(f.store, key)
		if live && old != nil {
			f.glue.OnDelete(old)
		}
	}
}

func (f *oursFanOut) Start() {
	f.emitMu.Lock()
	defer f.emitMu.Unlock()
	if f.started || f.stopped {
		return
	}
	f.started = true
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel, f.runDone, f.resyncDone = cancel, make(chan struct{}), make(chan struct{})
	go func() {
		defer close(f.runDone)
		f.proc.Run(ctx)
	}()
	// The check period is fixed from here on, as client-go's reflector
	// takes it at Run.
	check := f.check
	go func() {
		defer close(f.resyncDone)
		f.proc.RunResync(ctx, check, &f.emitMu, f.resync)
	}()
	// The handlers added before Start get the store's keys as the informer
	// hands its first list to them: one distribution of each initial-list
	// add to every listener (the glue's OnAdd), then UpstreamSynced.
	for _, k := range f.keys() {
		f.glue.OnAdd(f.store[k], true)
	}
	for _, l := range f.pre {
		l.UpstreamSynced()
	}
	f.pre = nil
}

func (f *oursFanOut) Stop() {
	f.emitMu.Lock()
	if f.stopped {
		f.emitMu.Unlock()
		return
	}
	f.stopped = true
	cancel, done, resyncDone := f.cancel, f.runDone, f.resyncDone
	f.emitMu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
	<-resyncDone
}

// resync is a round for the listeners due: a sync update for every key, as
// client-go's store.Resync and OnUpdate with an unchanged object. RunResync
// calls it with emitMu held.
func (f *oursFanOut) resync() {
	for _, k := range f.keys() {
		f.glue.OnUpdate(f.store[k], f.store[k])
	}
}

func (f *oursFanOut) onSlow(_ string, pending int64, took time.Duration) {
	f.reportMu.Lock()
	defer f.reportMu.Unlock()
	f.slow = append(f.slow, pinf.SlowWarning{Pending: pending, Took: took})
}

func (f *oursFanOut) onPanic(_ string, recovered any) {
	f.reportMu.Lock()
	defer f.reportMu.Unlock()
	f.panics = append(f.panics, recovered)
}

// SlowWarnings are the listeners' slow-handler warnings so far.
func (f *oursFanOut) SlowWarnings() []pinf.SlowWarning {
	f.reportMu.Lock()
	defer f.reportMu.Unlock()
	return slices.Clone(f.slow)
}

// HandlerPanics are the handler panics the listeners contained so far.
func (f *oursFanOut) HandlerPanics() []any {
	f.reportMu.Lock()
	defer f.reportMu.Unlock()
	return slices.Clone(f.panics)
}

// handlerAdapter turns the listener's objects (keys) back into strings.
type handlerAdapter struct{ h pinf.Handler }

func (a handlerAdapter) OnAdd(obj any, isInInitialList bool) { a.h.OnAdd(keyOf(obj), isInInitialList) }
func (a handlerAdapter) OnUpdate(oldObj, newObj any)         { a.h.OnUpdate(keyOf(oldObj), keyOf(newObj)) }
func (a handlerAdapter) OnDelete(obj any)                    { a.h.OnDelete(keyOf(obj)) }

func keyOf(obj any) string {
	switch o := obj.(type) {
	case *metav1.ObjectMeta:
		return o.Name
	case string:
		return o
	}
	return ""
}

// oursRegistration is the listener, with its backlog in the suite's terms.
type oursRegistration struct{ *informer.Listener }

func (r oursRegistration) Pending() int64   { return r.Stats().Pending }
func (r oursRegistration) HighWater() int64 { return r.Stats().HighWater }

// oursPump is impl/informer's pump decision in the suite's terms.
type oursPump struct{}

func (oursPump) Step(inHand bool, buffered int, closed bool, ev sinf.Event) (bool, int, bool, string) {
	var e informer.PumpEvent
	switch ev {
	case sinf.Added:
		e = informer.EventAdded
	case sinf.Delivered:
		e = informer.EventDelivered
	case sinf.Closed:
		e = informer.EventClosed
	default:
		return inHand, buffered, closed, "Invalid"
	}
	s, act := informer.PumpState{InHand: inHand, Buffered: buffered, Closed: closed}.Step(e)
	return s.InHand, s.Buffered, s.Closed, pumpActionName(act)
}

func pumpActionName(a informer.PumpAction) string {
	switch a {
	case informer.Hold:
		return "Hold"
	case informer.Stash:
		return "Stash"
	case informer.Refill:
		return "Refill"
	case informer.Idle:
		return "Idle"
	case informer.Stop:
		return "Stop"
	}
	return "Invalid"
}

// ListenerFanOut is our processor behind the per-listener
// linearizability workload: each value becomes a notification (kinds
// mixed, so every handler method is exercised) and comes back as the
// object of the handler call. Half the values (by a hash) are distributed
// as sync notifications, which every listener takes, since each is in the
// resync round until ShouldResync (never called here), through its own
// buffer; the rest go through the processor's log. So the check holds
// each listener to both paths and to its merge of them.
func ListenerFanOut(opts informer.ListenerOptions) linearizability.FanOut {
	return &listenerFanOut{p: informer.NewProcessor(nil), opts: opts}
}

type listenerFanOut struct {
	p    *informer.Processor
	opts informer.ListenerOptions
}

func (f *listenerFanOut) AddHandler(deliver func(string)) {
	if _, err := f.p.AddListener(informer.NewListener(deliverFunc(deliver), f.opts)); err != nil {
		panic(err) // only before Run: the processor cannot have stopped
	}
}

func (f *listenerFanOut) Distribute(v string) {
	var n informer.Notification
	switch len(v) % 3 {
	case 0:
		n = informer.Notification{Kind: informer.Add, New: v}
	case 1:
		n = informer.Notification{Kind: informer.Update, Old: v, New: v}
	default:
		n = informer.Notification{Kind: informer.Delete, Old: v}
	}
	f.p.Distribute(n, crc32.ChecksumIEEE([]byte(v))%2 == 1)
}

func (f *listenerFanOut) Run(ctx context.Context) { f.p.Run(ctx) }

// deliverFunc is a handler that hands every object to one function. A
// broken listener may call it with something that is not a value the
// workload added (nil, say); that arrives as "" and the check flags it.
type deliverFunc func(string)

func (d deliverFunc) OnAdd(obj any, _ bool) { d(asValue(obj)) }
func (d deliverFunc) OnUpdate(_, obj any)   { d(asValue(obj)) }
func (d deliverFunc) OnDelete(obj any)      { d(asValue(obj)) }

func asValue(obj any) string {
	v, _ := obj.(string)
	return v
}
