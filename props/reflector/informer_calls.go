package reflector

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/kverify/kverify/spec/apiserver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// hobj is what a handler call carries of an object: its key, its version
// (-1 for a tombstone without a readable object) and whether it is a
// tombstone.
type hobj struct {
	Key  string
	RV   int64
	tomb bool
}

func (o hobj) String() string {
	if o.tomb {
		return fmt.Sprintf("tombstone(%s@%d)", o.Key, o.RV)
	}
	return fmt.Sprintf("%s@%d", o.Key, o.RV)
}

// hcall is one handler call, every field of it.
type hcall struct {
	kind     string // add, update, delete
	old, new hobj
	initial  bool
}

func (c hcall) String() string {
	switch c.kind {
	case "add":
		return fmt.Sprintf("OnAdd(%v, %v)", c.new, c.initial)
	case "update":
		return fmt.Sprintf("OnUpdate(%v, %v)", c.old, c.new)
	}
	return fmt.Sprintf("OnDelete(%v)", c.old)
}

func obj1(obj any) hobj {
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
		k, rv, _ := objKey(m)
		return hobj{Key: k, RV: rv}
	}
	k, _, _ := objKey(obj)
	o := hobj{Key: k, RV: -1, tomb: true}
	if v := reflect.ValueOf(obj); v.Kind() == reflect.Struct {
		if f := v.FieldByName("Obj"); f.IsValid() && f.CanInterface() {
			if m, ok := f.Interface().(*metav1.PartialObjectMetadata); ok && m != nil {
				_, o.RV, _ = objKey(m)
			}
		}
	}
	return o
}

// enter counts a call in progress; the returned func ends the call.
func (v *viewer) enter() func() {
	v.mu.Lock()
	v.busy++
	v.started++
	v.mu.Unlock()
	return func() {
		v.mu.Lock()
		v.busy--
		v.mu.Unlock()
	}
}

// since returns the calls from the n-th on.
func (v *viewer) since(n int) []hcall {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.calls[min(n, len(v.calls)):])
}

func (v *viewer) activity() (started, busy int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.started, v.busy
}

// endInitial records that the handler reported synced: initial-list adds
// are over for it.
func (v *viewer) endInitial() {
	v.mu.Lock()
	v.pastInitial = true
	v.mu.Unlock()
}

// markSynced ends the initial list of every handler that reports synced.
func (w *iworld) markSynced() {
	for i, r := range w.regs {
		if r.HasSynced() {
			w.viewers[i].endInitial()
		}
	}
}

// marks returns how many calls each handler got so far.
func (w *iworld) marks() []int {
	out := make([]int, len(w.viewers))
	for i, v := range w.viewers {
		v.mu.Lock()
		out[i] = len(v.calls)
		v.mu.Unlock()
	}
	return out
}

// expectCalls compares handler i's calls since mark with want, in order,
// or as sets when unordered. It returns a description of the difference.
func (w *iworld) expectCalls(i, mark int, want []hcall, unordered bool) string {
	got := w.viewers[i].since(mark)
	gs, ws := strs(got), strs(want)
	if unordered {
		slices.Sort(gs)
		slices.Sort(ws)
	}
	if slices.Equal(gs, ws) {
		return ""
	}
	return fmt.Sprintf("handler %d got [%s], want [%s]", i, strings.Join(gs, " "), strings.Join(ws, " "))
}

func strs(cs []hcall) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.String()
	}
	return out
}

// initialAdds is the initial-list adds of objs.
func initialAdds(objs []apiserver.Object) []hcall {
	out := make([]hcall, len(objs))
	for i, o := range objs {
		out[i] = hcall{kind: "add", new: hobj{Key: o.Key, RV: o.RV}, initial: true}
	}
	return out
}

func objAt(objs []apiserver.Object, key string) hobj {
	for _, o := range objs {
		if o.Key == key {
			return hobj{Key: o.Key, RV: o.RV}
		}
	}
	return hobj{Key: key, RV: -1}
}

// atReturn is what had happened when Run returned.
type atReturn struct {
	started, busy int
	requests      int
}

func (w *iworld) activity() atReturn {
	var a atReturn
	for _, v := range w.viewers {
		s, b := v.activity()
		a.started += s
		a.busy += b
	}
	a.requests = w.srv.Requests()
	return a
}
