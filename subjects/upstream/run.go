//go:build !clientgo_before_v0_33

package upstream

import (
	"context"

	prefl "github.com/kverify/kverify/props/reflector"
	"k8s.io/client-go/tools/cache"
)

// The calls whose API changed in v0.33: the informer and the reflector run
// under a context, and the reflector takes a ReflectorStore. run_v0_27.go
// is their twin for v0.27 to v0.32.

func runInformer(ctx context.Context, i cache.SharedIndexInformer) { i.RunWithContext(ctx) }

func runReflector(ctx context.Context, r *cache.Reflector) { r.RunWithContext(ctx) }

func reflectorStore(s *prefl.Store) cache.ReflectorStore { return s }
