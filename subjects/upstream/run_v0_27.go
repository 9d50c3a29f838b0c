//go:build clientgo_before_v0_33 && !clientgo_before_v0_27

package upstream

import (
	"context"

	prefl "github.com/kverify/kverify/props/reflector"
	"k8s.io/client-go/tools/cache"
)

// Before v0.33 the informer and the reflector run until a stop channel
// closes, and the reflector takes a whole cache.Store (run.go is the
// current twin).

func runInformer(ctx context.Context, i cache.SharedIndexInformer) { i.Run(ctx.Done()) }

func runReflector(ctx context.Context, r *cache.Reflector) { r.Run(ctx.Done()) }

// fullStore is the model's store as the cache.Store the reflector took
// before v0.33: it calls only Add, Update, Delete, Replace and Resync,
// the ReflectorStore methods; the rest are never called and answer empty.
type fullStore struct{ *prefl.Store }

func (fullStore) List() []any                                { return nil }
func (fullStore) ListKeys() []string                         { return nil }
func (fullStore) Get(any) (item any, exists bool, err error) { return nil, false, nil }
func (fullStore) GetByKey(string) (any, bool, error)         { return nil, false, nil }

func reflectorStore(s *prefl.Store) cache.Store { return fullStore{s} }
