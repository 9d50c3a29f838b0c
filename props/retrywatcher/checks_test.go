package retrywatcher_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kverify/kverify/impl/retrywatcher"
	"github.com/kverify/kverify/props/checkkit"
	prw "github.com/kverify/kverify/props/retrywatcher"
	spec "github.com/kverify/kverify/spec/retrywatcher"
	"github.com/kverify/kverify/traces"
	"go.uber.org/goleak"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// ours is impl/retrywatcher as a subject, its Watcher rewritten by wrap.
func ours(wrap func(prw.Watcher) prw.Watcher) prw.Subject {
	return prw.Subject{New: func(ctx context.Context, rv string, w prw.Watcher) (prw.Watch, error) {
		return retrywatcher.New(ctx, retrywatcher.Config{InitialRV: rv, Watcher: retrywatcher.WatchFunc(wrap(w))})
	}}
}

func same(w prw.Watcher) prw.Watcher { return w }

func TestOursPasses(t *testing.T) {
	checkkit.Run(t, prw.Checks(ours(same)))
}

// Broken subjects: the check must name the guarantee each breaks.
func TestBrokenSubjectsFail(t *testing.T) {
	for name, c := range map[string]struct {
		wrap func(prw.Watcher) prw.Watcher
		g    string
	}{
		"resumes from the initial version": {func(w prw.Watcher) prw.Watcher {
			first := ""
			return func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				if first == "" {
					first = o.ResourceVersion
				}
				o.ResourceVersion = first
				return w(ctx, o)
			}
		}, prw.GResume},
		"asks for no bookmarks": {func(w prw.Watcher) prw.Watcher {
			return func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				o.AllowWatchBookmarks = false
				return w(ctx, o)
			}
		}, prw.GResume},
		"ends on a refused watch": {func(w prw.Watcher) prw.Watcher {
			return func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				wi, err := w(ctx, o)
				if err != nil {
					return nil, errForbidden
				}
				return wi, nil
			}
		}, prw.GEnd},
	} {
		for _, check := range prw.Checks(ours(c.wrap)) {
			if check.Name == prw.CheckBadInput {
				continue // its wrapped servers take no part in New's validation
			}
			t.Run(name+"/"+check.Name, func(t *testing.T) {
				err := check.Run(t, checkkit.Config{TraceDir: t.TempDir()})
				var v *checkkit.Violation
				if !errors.As(err, &v) || v.Guarantee != c.g {
					t.Fatalf("%s: %v, want a violation of %q", name, err, c.g)
				}
				t.Logf("killed: %s", strings.SplitN(err.Error(), "\n", 2)[0])
				// The saved trace is the script: replayed, it breaks the
				// same guarantee on the broken subject, and passes on ours.
				tr, rerr := traces.Read(v.TracePath)
				if rerr != nil {
					t.Fatal(rerr)
				}
				if err := prw.Replay(t, ours(c.wrap), tr); !errors.As(err, &v) || v.Guarantee != c.g {
					t.Errorf("replayed on the broken subject: %v, want a violation of %q\n%s", err, c.g, tr)
				}
				if err := prw.Replay(t, ours(same), tr); err != nil {
					t.Errorf("replayed on ours: %v", err)
				}
			})
		}
	}
}

// errForbidden is what the broken server's refusals become.
var errForbidden = apierrors.NewForbidden(schema.GroupResource{Resource: "things"}, "", errors.New("no"))

// TestScriptRoundTrip: every step's operation parses back to the step, so
// a saved trace is its script.
func TestScriptRoundTrip(t *testing.T) {
	steps := []spec.Step{
		{Kind: spec.Event, Type: spec.Added, RV: "6"},
		{Kind: spec.Event, Type: spec.Bookmark, RV: ""},
		{Kind: spec.Event, Type: "SURPRISE", RV: "7"},
		{Kind: spec.Event, Type: spec.Error, Code: 410},
		{Kind: spec.Event, Type: spec.Error, Code: 429, RetryAfter: 3 * time.Second},
		{Kind: spec.Event, Type: spec.Error, NotStatus: true},
		{Kind: spec.Closed},
		{Kind: spec.Refused, Code: 0},
		{Kind: spec.Refused, Code: 401},
		{Kind: spec.StopCalled},
		{Kind: spec.StopCalled, RV: "9"},
	}
	tr := []traces.Step{{Op: `New(rv="5")`}, {Op: "Watch", Want: "x", Got: "y"}}
	for _, s := range steps {
		tr = append(tr, traces.Step{Op: prw.Op(s)})
	}
	sc, err := prw.ParseScript(tr)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Initial != "5" || !reflect.DeepEqual(sc.Steps, steps) {
		t.Errorf("parsed %+v, want initial 5 and %+v", sc, steps)
	}
	for _, bad := range [][]traces.Step{nil, {{Op: "Close"}}, {{Op: `New(rv="5")`}, {Op: "Event(ADDED)"}}, {{Op: `New(rv="5")`}, {Op: "Error(410, retry-after=soon)"}}} {
		if _, err := prw.ParseScript(bad); err == nil {
			t.Errorf("ParseScript(%v) accepted it", bad)
		}
	}
}

// TestBadInputFails: a subject that resumes from "0" is refused by
// retrywatcher/bad-input.
func TestBadInputFails(t *testing.T) {
	accepting := prw.Subject{New: func(ctx context.Context, rv string, w prw.Watcher) (prw.Watch, error) {
		if rv == "0" {
			rv = "1"
		}
		return retrywatcher.New(ctx, retrywatcher.Config{InitialRV: rv, Watcher: retrywatcher.WatchFunc(w)})
	}}
	for _, c := range prw.Checks(accepting) {
		if c.Name != prw.CheckBadInput {
			continue
		}
		var v *checkkit.Violation
		if err := c.Run(t, checkkit.Config{}); !errors.As(err, &v) || v.Guarantee != prw.GRefused {
			t.Fatalf("%v, want a violation of %q", err, prw.GRefused)
		}
	}
}
