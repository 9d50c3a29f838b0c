package deltatest

import (
	"errors"
	"maps"
	"slices"

	"github.com/kverify/kverify/impl/delta"
)

// Known is a KeyListerGetter listing its keys sorted; a key mapped to nil
// fails its lookup.
type Known map[string]any

var _ delta.KeyListerGetter = Known(nil)

// ListKeys returns k's keys, sorted.
func (k Known) ListKeys() []string { return slices.Sorted(maps.Keys(k)) }

// GetByKey returns the object under key and whether there is one; a key
// mapped to nil is an error.
func (k Known) GetByKey(key string) (any, bool, error) {
	o, ok := k[key]
	if ok && o == nil {
		return nil, false, errors.New("lookup failed")
	}
	return o, ok, nil
}
