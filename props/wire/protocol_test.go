package wire_test

import (
	"encoding/json"
	"testing"

	"github.com/kverify/kverify/props/wire"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestValidateLine: what an in-process client's GoClient writes is valid
// kverify-client/v1, and the schema rejects what a careless adapter might
// write.
func TestValidateLine(t *testing.T) {
	c := wire.NewGoClient("test")
	c.Informer = wire.Informer{Synced: func() bool { return true }, LastSyncResourceVersion: func() string { return "7" },
		List: func() []any {
			return []any{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a", ResourceVersion: "7"}}}
		}}
	cm := func(rv string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a", ResourceVersion: rv}}
	}
	c.OnAdd(cm("2"), true)
	c.OnUpdate(cm("2"), cm("5"))
	c.OnDelete(cm("7"))
	st, _ := c.State()
	for _, l := range append(c.Lines(), st) {
		b, _ := json.Marshal(l)
		if _, err := wire.ValidateLine(b); err != nil {
			t.Errorf("%s: %v", b, err)
		}
	}
	for _, bad := range []string{
		`{"type":"added","key":"default/a","rv":"2"}`,
		`{"type":"add","key":"default/a","rv":2}`,
		`{"type":"add","key":"default/a","rv":"2","extra":true}`,
		`{"key":"default/a","rv":"2"}`,
		`{"type":"hello","protocol":"kverify-client/v2"}`,
		`{"type":"state","rv":"7","cache":[{"key":"default/a"}]}`,
		`not json`,
	} {
		if _, err := wire.ValidateLine([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}
