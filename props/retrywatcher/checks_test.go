package retrywatcher_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kverify/kverify/impl/retrywatcher"
	"github.com/kverify/kverify/props/checkkit"
	prw "github.com/kverify/kverify/props/retrywatcher"
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
		t.Run(name, func(t *testing.T) {
			err := prw.Checks(ours(c.wrap))[0].Run(t, checkkit.Config{})
			var v *checkkit.Violation
			if !errors.As(err, &v) || v.Guarantee != c.g {
				t.Fatalf("%s: %v, want a violation of %q", name, err, c.g)
			}
			t.Logf("killed: %s", strings.SplitN(err.Error(), "\n", 2)[0])
		})
	}
}

// errForbidden is what the broken server's refusals become.
var errForbidden = apierrors.NewForbidden(schema.GroupResource{Resource: "things"}, "", errors.New("no"))
