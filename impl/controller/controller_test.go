package controller

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/impl/informer"
	"github.com/kverify/kverify/impl/ratelimit"
	"github.com/kverify/kverify/impl/reflector"
	"github.com/kverify/kverify/props/modelserver"
	"github.com/kverify/kverify/spec/apiserver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func newInformer(t *testing.T, srv *modelserver.Server) *informer.Informer {
	t.Helper()
	inf, err := informer.NewInformer(srv, informer.InformerOptions{Reflector: reflector.Options{
		ExpectedType: &metav1.PartialObjectMetadata{}, WatchList: reflector.WatchListOff}})
	if err != nil {
		t.Fatal(err)
	}
	return inf
}

func TestNewRejectsBadInput(t *testing.T) {
	srv := modelserver.NewServer(apiserver.Config{}, nil)
	defer srv.Close()
	ok := ReconcilerFunc(func(context.Context, string) (Result, error) { return Result{}, nil })
	for name, f := range map[string]func() error{
		"nil informer":     func() error { _, err := New(nil, ok, Options{}); return err },
		"nil reconciler":   func() error { _, err := New(newInformer(t, srv), nil, Options{}); return err },
		"negative workers": func() error { _, err := New(newInformer(t, srv), ok, Options{Workers: -1}); return err },
	} {
		if f() == nil {
			t.Errorf("%s: New returned no error", name)
		}
	}
}

// TestReconcileRetryPanicAndStop: a key is reconciled once synced; a
// panic is reported as a PanicError and retried at the limiter's delay; a
// requeue comes after its delay; Run returns once the reconcile in flight
// returned; a second Run says so.
func TestReconcileRetryPanicAndStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := modelserver.NewServer(apiserver.Config{}, nil)
		defer srv.Close()
		if err := srv.Create("default/a"); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var starts []time.Duration
		var errs []error
		t0 := time.Now()
		rec := ReconcilerFunc(func(ctx context.Context, key string) (Result, error) {
			mu.Lock()
			n := len(starts)
			starts = append(starts, time.Since(t0))
			mu.Unlock()
			switch n {
			case 0:
				panic("boom")
			case 1:
				return Result{RequeueAfter: 7 * time.Second}, nil
			case 2:
				time.Sleep(time.Minute) // in flight when Run is cancelled
			}
			return Result{}, nil
		})
		lim, _ := ratelimit.NewItemExponential[string](time.Second, time.Minute)
		c, err := New(newInformer(t, srv), rec, Options{Limiter: lim, OnError: func(_ string, err error) {
			mu.Lock()
			defer mu.Unlock()
			errs = append(errs, err)
		}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- c.Run(ctx) }()
		time.Sleep(10 * time.Second)
		synctest.Wait()
		mu.Lock()
		if len(starts) != 3 || starts[1]-starts[0] != time.Second || starts[2]-starts[1] != 7*time.Second {
			t.Errorf("reconciles started at %v, want a retry 1s after the panic and a requeue 7s later", starts)
		}
		var pe *PanicError
		if len(errs) != 1 || !errors.As(errs[0], &pe) || pe.Key != "default/a" {
			t.Errorf("errors reported: %v, want one PanicError for default/a", errs)
		}
		mu.Unlock()
		cancel()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("Run returned with a reconcile in flight")
		default:
		}
		time.Sleep(time.Minute)
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		if err := c.Run(context.Background()); !errors.Is(err, ErrAlreadyRan) {
			t.Errorf("a second Run: %v, want ErrAlreadyRan", err)
		}
	})
}
