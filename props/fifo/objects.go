package fifo

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	spec "github.com/kverify/kverify/spec/fifo"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// object is the suite's object for a model object: namespace and name =
// key ("ns/k3" is name k3 in namespace ns), resource version = version,
// generation = transforms applied; an object the transformer is to reject
// (Fault NoTransform) carries the label refuseLabel. An object whose key
// cannot be computed (Fault NoKey) is not one: see input.
func object(o spec.Obj) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: o.Key, ResourceVersion: strconv.Itoa(o.Version), Generation: int64(o.Gen),
	}}
	if ns, name, ok := strings.Cut(o.Key, "/"); ok {
		m.Namespace, m.Name = ns, name
	}
	if o.Fault == spec.NoTransform {
		m.Labels = map[string]string{refuseLabel: "true"}
	}
	return m
}

// refuseLabel marks an object the suite's transformer rejects.
const refuseLabel = "kverify.example/transform-fails"

// unkeyed is an object no key function can key: it has no metadata
// (client-go's MetaNamespaceKeyFunc fails on it: "object has no meta").
// The suite gives it where a call's object is to be rejected (Fault
// NoKey), and a faulty known-objects store returns it.
type unkeyed struct {
	Name    string
	Version int
}

// input is what the suite hands a FIFO for o: object(o), or an unkeyed for
// an object the key function is to reject.
func input(o spec.Obj) any {
	if o.Fault == spec.NoKey {
		return unkeyed{Name: o.Key, Version: o.Version}
	}
	return object(o)
}

// inputsOf is input of each of a relist's objects.
func inputsOf(objs []spec.Obj) []any {
	list := make([]any, len(objs))
	for i, o := range objs {
		list[i] = input(o)
	}
	return list
}

func keyOf(obj any) (string, error) {
	o, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok || o == nil {
		return "", fmt.Errorf("not a suite object: %T", obj)
	}
	if o.Namespace != "" {
		return o.Namespace + "/" + o.Name, nil
	}
	return o.Name, nil
}

// objOf is the model object of a suite object.
func objOf(obj any) (spec.Obj, error) {
	if u, ok := obj.(unkeyed); ok {
		return spec.Obj{Key: u.Name, Version: u.Version, Fault: spec.NoKey}, nil
	}
	o, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok || o == nil {
		return spec.Obj{}, fmt.Errorf("object of type %T, want the *metav1.PartialObjectMetadata the suite gave", obj)
	}
	v, err := strconv.Atoi(o.ResourceVersion)
	if err != nil {
		return spec.Obj{}, fmt.Errorf("object %s has resource version %q, not one the suite gave", o.Name, o.ResourceVersion)
	}
	key, _ := keyOf(o)
	m := spec.Obj{Key: key, Version: v, Gen: int(o.Generation)}
	if o.Labels[refuseLabel] != "" {
		m.Fault = spec.NoTransform
	}
	return m, nil
}

// deltaOf is the model delta of a subject's delta.
func deltaOf(d Delta) (spec.Delta, error) {
	t := spec.Type(d.Type)
	switch obj := d.Object.(type) {
	case Tombstone:
		if obj.Obj == nil {
			return spec.Delta{Type: t, Obj: spec.Obj{Key: obj.Key}, Tombstone: true}, nil
		}
		o, err := objOf(obj.Obj)
		if err != nil {
			return spec.Delta{}, fmt.Errorf("tombstone %s: %w", obj.Key, err)
		}
		o.Key = obj.Key
		return spec.Delta{Type: t, Obj: o, Tombstone: true, HasObj: true}, nil
	case ReplacedAll:
		os := make([]spec.Obj, len(obj.Objects))
		for i, x := range obj.Objects {
			o, err := objOf(x)
			if err != nil {
				return spec.Delta{}, fmt.Errorf("ReplacedAll object %d: %w", i, err)
			}
			os[i] = o
		}
		return spec.Delta{Type: t, Objects: os, RV: obj.ResourceVersion}, nil
	case Bookmark:
		return spec.Delta{Type: t, RV: obj.ResourceVersion}, nil
	case SyncAll:
		return spec.Delta{Type: t}, nil
	}
	o, err := objOf(d.Object)
	if err != nil {
		return spec.Delta{}, err
	}
	return spec.Of(t, o), nil
}

func deltasOf(ds []Delta) ([]spec.Delta, error) {
	out := make([]spec.Delta, len(ds))
	var errs []error
	for i, d := range ds {
		var err error
		if out[i], err = deltaOf(d); err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

// same reports whether two model delta lists are equal.
func same(a, b []spec.Delta) bool {
	return slices.EqualFunc(a, b, func(x, y spec.Delta) bool {
		return x.Type == y.Type && x.Obj == y.Obj && x.Tombstone == y.Tombstone && x.HasObj == y.HasObj &&
			x.RV == y.RV && slices.Equal(x.Objects, y.Objects)
	})
}

// transform is the suite's transformer: a copy with Generation+1, so a
// popped object tells how often it was transformed. It refuses objects
// that are not the suite's, and those labelled refuseLabel.
func transform(obj any) (any, error) {
	o, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok || o == nil {
		return nil, fmt.Errorf("transform: not a suite object: %T", obj)
	}
	if o.Labels[refuseLabel] != "" {
		return nil, errTransform
	}
	c := o.DeepCopy()
	c.Generation++
	return c, nil
}
