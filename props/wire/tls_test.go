package wire_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/wire"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// TestTLS: a Realtime subject with TLS is served over https, and a client
// that skips verifying the certificate (client-go's informer here) passes
// a fixed check over it; without TLS the URL is plain http.
func TestTLS(t *testing.T) {
	for _, tlsOn := range []bool{true, false} {
		var scheme string
		s := wire.Subject{Name: "tls", Realtime: true, TLS: tlsOn, Start: func(url string, _ http.RoundTripper) (wire.Client, error) {
			scheme, _, _ = strings.Cut(url, "://")
			cs, err := kubernetes.NewForConfig(&rest.Config{Host: url, TLSClientConfig: rest.TLSClientConfig{Insecure: true}})
			if err != nil {
				return nil, err
			}
			inf := cache.NewSharedIndexInformer(cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), wire.Resource, wire.Namespace, fields.Everything()), &corev1.ConfigMap{}, 0, cache.Indexers{})
			c := wire.NewGoClient("client-go over tls")
			reg, err := inf.AddEventHandler(c)
			if err != nil {
				return nil, err
			}
			c.Informer = wire.Informer{List: inf.GetStore().List, LastSyncResourceVersion: inf.LastSyncResourceVersion, Synced: reg.HasSynced,
				Tombstone: func(obj any) (any, bool) {
					d, ok := obj.(cache.DeletedFinalStateUnknown)
					return d.Obj, ok
				}}
			c.Run(inf.RunWithContext)
			return c, nil
		}}
		for _, c := range wire.Checks(s) {
			if c.Name != wire.CheckRestart {
				continue
			}
			if err := c.Run(t, checkkit.Config{TraceDir: t.TempDir()}); err != nil {
				t.Fatalf("TLS %v: %v", tlsOn, err)
			}
		}
		if want := map[bool]string{true: "https", false: "http"}[tlsOn]; scheme != want {
			t.Errorf("TLS %v: served over %q, want %q", tlsOn, scheme, want)
		}
	}
}
