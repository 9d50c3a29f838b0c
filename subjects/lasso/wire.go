package lasso

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/wire"
	"github.com/kverify/kverify/subjects/suite"
	"github.com/kverify/kverify/subjects/upstream"
	"github.com/kverify/kverify/traces"
	"github.com/rancher/lasso/pkg/cache"
	"github.com/rancher/lasso/pkg/client"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
)

// Wire is lasso's cache as a wire subject: the informer lasso's
// SharedCacheFactory makes (a client-go SharedIndexInformer behind lasso's
// deferredListWatcher, which lists and watches through lasso's REST client,
// rewrites a LIST from version "0" to a LIST from "" and waits for the
// server's health after a failed LIST), with lasso's defaults (no
// options: watch-list as client-go's gate says, a resync every 600
// minutes), started by the factory's Start, as a wrangler application
// starts its caches. The client's handler is registered on the informer
// lasso made; Stop cancels the factory's context and returns: lasso starts
// the informer with go informer.Run(ctx.Done())
// (sharedinformerfactory.go:104,121) and gives nothing to wait for it with.
func Wire() wire.Subject { return wireWith(wireVariant{}) }

// wireVariant varies the client wireWith starts; the zero value is Wire's.
// The adapter's mutants (mutants_test.go) set it.
type wireVariant struct {
	// caches makes each client's cache factory options (nil: lasso's
	// defaults).
	caches func() *cache.SharedCacheFactoryOptions
	// handler is what is registered on the informer for the client c (nil:
	// c itself).
	handler func(c *wire.GoClient) toolscache.ResourceEventHandler
	// synced is what the client reports synced by (nil: the
	// registration's HasSynced).
	synced func(reg toolscache.ResourceEventHandlerRegistration, inf toolscache.SharedIndexInformer) func() bool
}

func wireWith(v wireVariant) wire.Subject {
	return wire.Subject{Name: Name, Start: func(url string, rt http.RoundTripper) (wire.Client, error) {
		quiet()
		scheme := runtime.NewScheme()
		if err := corev1.AddToScheme(scheme); err != nil {
			return nil, err
		}
		clients, err := client.NewSharedClientFactory(&rest.Config{Host: url, Transport: rt}, &client.SharedClientFactoryOptions{Scheme: scheme})
		if err != nil {
			return nil, err
		}
		var opts *cache.SharedCacheFactoryOptions
		if v.caches != nil {
			opts = v.caches()
		}
		caches := cache.NewSharedCachedFactory(clients, opts)
		inf, err := caches.ForResourceKind(configMaps, "ConfigMap", true)
		if err != nil {
			return nil, err
		}
		c := wire.NewGoClient(Version)
		var h toolscache.ResourceEventHandler = c
		if v.handler != nil {
			h = v.handler(c)
		}
		reg, err := inf.AddEventHandler(h)
		if err != nil {
			return nil, err
		}
		synced := reg.HasSynced
		if v.synced != nil {
			synced = v.synced(reg, inf)
		}
		c.Informer = upstream.WireInformer(inf, synced)
		c.Run(func(ctx context.Context) {
			_ = caches.Start(ctx)
			<-ctx.Done()
		})
		return c, nil
	}}
}

func wireEntry() suite.Entry {
	return suite.Entry{Component: wire.Component, Subject: Name,
		Checks:      func() []checkkit.Check { return wire.Checks(Wire()) },
		Divergences: WireDivergences,
		Replay:      func(t *testing.T, tr *traces.Trace) error { return wire.Replay(t, Wire(), tr) }}
}

// WireDivergences are lasso's cache's declared differences over the wire:
// client-go's informer's, which lasso's cache is (cache/cache.go:49-57), as
// subjects/upstream declares them for client-go v0.37.2 with this
// process's gates; and on wire/schedules, the informer lasso leaves running
// after Stop.
var WireDivergences = func() []checkkit.Divergence {
	ds := inheritClientGo(upstream.WireDivergences)
	for i, d := range ds {
		if d.Check == wire.CheckSchedules {
			ds[i] = d.Or(informerOutlivesStop)
			ds[i].Check = d.Check
		}
	}
	return ds
}()

// informerOutlivesStop: Stop cannot wait for lasso's informer, so a
// schedule that stops the client while its reflector is in a wait that
// does not watch the context ends with the goroutine still blocked there:
// the synctest bubble's deadlock panic.
var informerOutlivesStop = checkkit.Divergence{
	Intermittent: true,
	Guarantees:   healthLoop.Guarantees,
	Shape:        healthLoop.Shape,
	Reason: "Stop cannot wait for lasso's informer: SharedCacheFactory.Start runs it with go informer.Run(ctx.Done()) (sharedinformerfactory.go:104,121) and the factory has no Stop, Wait or done channel, so Stop returns while the informer's goroutines still run; " +
		"when a schedule stops the client while the reflector is in a wait that does not watch its context, the goroutine outlives the run: client-go's watch-list backoff after a refused, 429 or 500 stream, <-r.clock.After(r.delayHandler()) (k8s.io/client-go@v0.37.2/tools/cache/reflector.go:811-819, client-go's defect traces/findings/client-go/reflector-watchlist-backoff-ignores-cancel; measured on a failing seed: every goroutine left in the 753 bubbles rapid ran while shrinking it was there), " +
		"or lasso's own health loop after a failed LIST (controller/stop's defect, healthcheck.go:52-74); client-go's informer on its own (subject upstream) passes, since its Run returns only once the backoff has run out",
	Upstream: factoryGo + ":104,121; " + healthcheckGo + ":52-74; " + clientGo + "/tools/cache/reflector.go:811-819",
	Class:    checkkit.ClassDefect,
	Evidence: "lasso's factory offers Start alone (sharedinformerfactory.go:237-246, SharedCacheFactory); the wait it cannot end early is client-go's defect (k8s.io/client-go@v0.37.2/tools/cache/reflector.go:420-422: RunWithContext \"will exit when the context is canceled\", but the watch-list backoff waits on <-r.clock.After alone) or lasso's (healthLoop)",
}

// inheritClientGo are client-go's declarations for its pinned release,
// inherited: the release and gate they hold for are this module's
// (client-go v0.37.2, this process's gates), so they are evaluated here and
// cleared. wire/stall's shape names the stream as the first request; lasso's
// factory first GETs /version (its health check, healthcheck.go:21-27, from
// SharedCacheFactory.Start, sharedinformerfactory.go:115), so the stream is
// the second.
func inheritClientGo(ds []checkkit.Divergence) []checkkit.Divergence {
	var out []checkkit.Divergence
	for _, d := range upstream.ForRelease(ds, upstream.Release) {
		d.Releases, d.Gate = "", ""
		d.Reason = "lasso's cache is client-go's SharedIndexInformer (cache/cache.go:49-57) over lasso's client: " + d.Reason
		if d.Check == wire.CheckStall {
			const first, second = "last requests: #1 watch ", "last requests: #2 watch "
			if !strings.Contains(d.Shape, first) {
				panic("lasso: client-go's wire/stall shape no longer names its first request: " + d.Shape)
			}
			d.Shape = strings.Replace(d.Shape, first, second, 1)
			d.Reason += " (lasso's health check's GET /version is the first request, the stream the second)"
		}
		out = append(out, d)
	}
	return out
}
