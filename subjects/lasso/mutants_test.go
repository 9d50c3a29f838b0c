package lasso

import (
	"context"
	"fmt"
	"github.com/kverify/kverify/subjects/upstream"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	pctrl "github.com/kverify/kverify/props/controller"
	"github.com/kverify/kverify/props/wire"
	"github.com/rancher/lasso/pkg/cache"
	"github.com/rancher/lasso/pkg/controller"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
)

// The adapter's mutants: the subject with one defect each, of the kinds a
// wrangler application on lasso has (its handlers, its start, its hooks on
// lasso's informer, its cache options), which the controller checks
// (brokenControllers) or the wire checks (brokenWires) must kill, with
// lasso's declarations in force: a violation no declaration excuses.
// TestAdapterMutantsKilled runs each in a process of its own (a mutant may
// hang, and lasso's goroutines outlive a check) and requires it killed,
// and every check to kill one, but wire/fidelity, which judges the served
// model against its recordings and runs no subject. Its controls,
// "unbroken/controller" and "unbroken/wire", are the mutants' own harness
// with no defect, which must pass as the subject does.

// ctlMutant is one defect of the controller adapter; the zero value is
// the subject.
type ctlMutant struct {
	// dropDeleted: the handler returns at once for a key whose object is
	// gone (lasso hands OnChange a nil object, controller.go:248-249),
	// the wrangler handler's "if obj == nil { return nil, nil }" that
	// OnRemove exists to replace.
	dropDeleted bool
	// ignoreErrors: a reconcile's error is returned wrapped in
	// controller.ErrIgnore, which SharedHandler.OnChange drops
	// (sharedhandler.go:99): nothing retries the key.
	ignoreErrors bool
	// noRequeue: a Result.RequeueAfter is never the SharedController's
	// EnqueueAfter.
	noRequeue bool
	// oneWorker: SharedControllerFactory.Start(ctx, 1), whose workers
	// argument wins over DefaultWorkers (getWorkers,
	// sharedcontrollerfactory.go:232-248).
	oneWorker bool
	// backgroundStart: the factory is started under a context that never
	// ends (context.Background), not Run's; Run still waits for its own.
	backgroundStart bool
	// noGuards: New takes what lasso takes (a nil reconciler, a negative
	// number of workers).
	noGuards bool
	// hook replaces the adapter's hook on lasso's event handler.
	hook func(h toolscache.ResourceEventHandler, notified func(obj any, deleted bool)) toolscache.ResourceEventHandler
}

// brokenControllers are the controller adapter's mutants, by name.
var brokenControllers = map[string]ctlMutant{
	"deleted key dropped (no OnRemove)":        {dropDeleted: true},
	"handler error wrapped in ErrIgnore":       {ignoreErrors: true},
	"RequeueAfter not enqueued":                {noRequeue: true},
	"Start's workers 1, not Setup.Workers":     {oneWorker: true},
	"factory started under a background ctx":   {backgroundStart: true},
	"bad setups accepted (lasso's own checks)": {noGuards: true},
	"notified after the enqueue":               {hook: notifiedAfter},
	"first list's keys never enqueued":         {hook: initialDropped},
}

// notifiedAfter calls notified after lasso's handler has enqueued the key.
func notifiedAfter(h toolscache.ResourceEventHandler, notified func(any, bool)) toolscache.ResourceEventHandler {
	return afterHook{h, notified}
}

type afterHook struct {
	h        toolscache.ResourceEventHandler
	notified func(obj any, deleted bool)
}

func (a afterHook) OnAdd(obj any, initial bool) {
	a.h.OnAdd(obj, initial)
	a.notified(asMeta(obj), false)
}

func (a afterHook) OnUpdate(old, obj any) {
	a.h.OnUpdate(old, obj)
	a.notified(asMeta(obj), false)
}

func (a afterHook) OnDelete(obj any) {
	a.h.OnDelete(obj)
	a.notified(deletedMeta(obj), true)
}

// initialDropped notifies as the adapter does, but keeps the adds of the
// informer's first list from lasso's handler: the keys lasso's controller
// collects in startKeys before its queue exists (controller.go:299-313)
// and adds once it does (:139-149), lost.
func initialDropped(h toolscache.ResourceEventHandler, notified func(any, bool)) toolscache.ResourceEventHandler {
	return dropInitial{hooked{h, notified}}
}

type dropInitial struct{ hooked }

func (d dropInitial) OnAdd(obj any, initial bool) {
	if initial {
		d.notified(asMeta(obj), false)
		return
	}
	d.hooked.OnAdd(obj, initial)
}

// brokenController is the controller subject with mutant m.
func brokenController(m ctlMutant) pctrl.Subject {
	newC := func(s pctrl.Setup) (pctrl.Controller, error) {
		if !m.noGuards {
			switch {
			case s.Reconcile == nil:
				return nil, fmt.Errorf("lasso controller: no reconciler")
			case s.Workers < 0:
				return nil, fmt.Errorf("lasso controller: %d workers", s.Workers)
			}
		}
		c, err := build(s, variant{hook: m.hook})
		if err != nil {
			return nil, err
		}
		return &mutatedController{lassoController: c, m: m}, nil
	}
	return pctrl.Subject{New: newC, BadInput: pctrl.BadInputOf(newC), ContainPanics: upstream.ContainPanics}
}

// mutatedController is lassoController.Run with the mutant's defect.
type mutatedController struct {
	*lassoController
	m ctlMutant
}

func (c *mutatedController) Run(ctx context.Context) {
	c.sc.RegisterHandler(ctx, "kverify", controller.SharedControllerHandlerFunc(
		func(key string, obj runtime.Object) (runtime.Object, error) {
			if c.m.dropDeleted && obj == nil {
				return nil, nil
			}
			res, err := c.setup.Reconcile(ctx, key, c)
			if err != nil {
				if c.m.ignoreErrors {
					return nil, fmt.Errorf("%w: %v", controller.ErrIgnore, err)
				}
				return nil, err
			}
			if res.RequeueAfter > 0 && !c.m.noRequeue {
				c.requeue(key, res.RequeueAfter)
			}
			return nil, nil
		}))
	startCtx, workers := ctx, c.setup.Workers
	if c.m.oneWorker {
		workers = 1
	}
	if c.m.backgroundStart {
		startCtx = context.Background()
	}
	_ = c.factory.Start(startCtx, workers)
	<-ctx.Done()
}

// brokenWires are the wire adapter's mutants, by name.
var brokenWires = map[string]wireVariant{
	// lasso's OnRemove path, on the cache's handler: deletes never reach it.
	"deletes dropped": {handler: func(c *wire.GoClient) toolscache.ResourceEventHandler { return dropDeletes{c} }},
	// lasso's handleObject unwraps DeletedFinalStateUnknown
	// (controller.go:315-329); a handler that takes only objects
	// drops the deletes a relist finds.
	"tombstones dropped": {handler: func(c *wire.GoClient) toolscache.ResourceEventHandler { return dropTombstones{c} }},
	// lasso's SharedControllerFactory.Start calls WaitForCacheSync and
	// ignores the map of results it returns
	// (sharedcontrollerfactory.go:132): synced taken for granted.
	"synced taken for granted": {synced: func(toolscache.ResourceEventHandlerRegistration, toolscache.SharedIndexInformer) func() bool {
		return func() bool { return true }
	}},
	// lasso applies a TweakList to watches as well as lists (cache.go:133,148,
	// deferredListWatcher.run): a tweak that pins the version the first
	// resumed watch asked for resumes every later watch from there.
	"watches pinned by TweakList": {caches: func() *cache.SharedCacheFactoryOptions {
		return &cache.SharedCacheFactoryOptions{DefaultTweakList: pinWatches()}
	}},
}

type dropDeletes struct{ *wire.GoClient }

func (dropDeletes) OnDelete(any) {}

type dropTombstones struct{ *wire.GoClient }

func (d dropTombstones) OnDelete(obj any) {
	if _, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		return
	}
	d.GoClient.OnDelete(obj)
}

// pinWatches is a TweakList that gives every resumed watch (one that asks
// for bookmarks, from a version) the version the first one asked for.
func pinWatches() cache.TweakListOptionsFunc {
	var mu sync.Mutex
	pinned := ""
	return func(o *metav1.ListOptions) {
		if !o.AllowWatchBookmarks || o.ResourceVersion == "" || o.ResourceVersion == "0" {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if pinned == "" {
			pinned = o.ResourceVersion
		}
		o.ResourceVersion = pinned
	}
}

// mutantEnv names the mutant TestAdapterMutant runs.
const mutantEnv = "KVERIFY_LASSO_MUTANT"

// unbroken is the control: the mutants' harness with no defect.
const unbroken = "unbroken"

// TestAdapterMutant runs the checks of the mutant KVERIFY_LASSO_MUTANT
// names, with lasso's declarations, for TestAdapterMutantsKilled, in a
// process of its own: a mutant that hangs is reported by the checks'
// watchdog, and its goroutines die with the process. "unbroken/controller"
// and "unbroken/wire" run the harness without a defect.
func TestAdapterMutant(t *testing.T) {
	name := os.Getenv(mutantEnv)
	if name == "" {
		t.Skip("run by TestAdapterMutantsKilled")
	}
	var checks []checkkit.Check
	var divs []checkkit.Divergence
	var comp string
	if m, ok := brokenControllers[name]; ok || name == unbroken+"/"+pctrl.Component {
		comp, checks, divs = pctrl.Component, pctrl.Checks(brokenController(m)), ControllerDivergences
	} else if v, ok := brokenWires[name]; ok || name == unbroken+"/"+wire.Component {
		comp, checks, divs = wire.Component, wire.Checks(wireWith(v)), WireDivergences
	} else {
		t.Fatalf("%s=%q: no such mutant", mutantEnv, name)
	}
	checkkit.Run(t, checks, checkkit.WithDivergences(divs...), checkkit.WithSubject(Name+"-mutant"), checkkit.WithComponent(comp))
}

// killLine is a check's failure with a violation (checkkit.Run's "<family>
// check <name>: [scenario "...": ]broke <guarantee>: ..."), not a
// declaration's ("declared divergence ... was not observed").
var killLine = regexp.MustCompile(`\b\w+ check ((?:controller|wire)/[\w-]+): [^\n]*?(broke [^\n]+)`)

// failLine is a check's verdict line with its time.
var failLine = regexp.MustCompile(`--- FAIL: TestAdapterMutant/((?:controller|wire)/[\w-]+) \(([\d.]+)s\)`)

// TestAdapterMutantsKilled requires the controller checks to kill every
// mutant of brokenControllers, and the wire checks every one of
// brokenWires: some check fails with a violation that lasso's
// declarations do not excuse. The controls pass.
func TestAdapterMutantsKilled(t *testing.T) {
	bin, err := os.Executable()
	if err != nil {
		t.Skip("cannot run the test binary again:", err)
	}
	names := append(slices.Sorted(maps.Keys(brokenControllers)), slices.Sorted(maps.Keys(brokenWires))...)
	names = append([]string{unbroken + "/" + pctrl.Component, unbroken + "/" + wire.Component}, names...)
	killers := map[string]bool{}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "-test.run", "^TestAdapterMutant$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), mutantEnv+"="+name, "KVERIFY_TRACE_DIR="+t.TempDir())
			start := time.Now()
			out, err := cmd.CombinedOutput()
			took := time.Since(start).Round(100 * time.Millisecond)
			if strings.HasPrefix(name, unbroken+"/") {
				if err != nil {
					t.Fatalf("the harness without a defect fails (%v, %v):\n%s", err, took, out)
				}
				t.Logf("passes, in %v", took)
				return
			}
			kills := map[string]string{}
			for _, m := range killLine.FindAllStringSubmatch(string(out), -1) {
				if _, seen := kills[m[1]]; !seen {
					kills[m[1]] = m[2]
				}
			}
			times := map[string]string{}
			for _, m := range failLine.FindAllStringSubmatch(string(out), -1) {
				times[m[1]] = m[2] + "s"
			}
			if err == nil || len(kills) == 0 {
				t.Fatalf("no check killed %q (exit %v, %v):\n%s", name, err, took, out)
			}
			for _, c := range slices.Sorted(maps.Keys(kills)) {
				killers[c] = true
				t.Logf("killed by %s in %s: %.300s", c, orUnknown(times[c]), kills[c])
			}
			t.Logf("the mutant's run took %v", took)
		})
	}
	if t.Failed() {
		return
	}
	for _, c := range append(pctrl.Checks(Controller()), wire.Checks(Wire())...) {
		if !killers[c.Name] && c.Name != wire.CheckFidelity {
			t.Errorf("%s killed no mutant of the adapter: it is idle for %s", c.Name, Name)
		}
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}
