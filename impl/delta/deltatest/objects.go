package deltatest

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kverify/kverify/impl/delta"
)

// Obj is an object named name in namespace "ns" at resource version rv.
func Obj(name, rv string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: rv}}
}

// Describe names an object for comparisons: name@rv; a tombstone as
// dfsu(name,obj), or dfsu(name,nil) without its object, the "ns/" of its key
// dropped; a ReplacedAllInfo as rv[obj,...], a BookmarkInfo as its resource
// version, a SyncAllInfo as "all"; anything else by its type.
func Describe(o any) string {
	switch o := o.(type) {
	case *metav1.PartialObjectMetadata:
		return o.Name + "@" + o.ResourceVersion
	case delta.DeletedFinalStateUnknown:
		if o.Obj == nil {
			return "dfsu(" + strings.TrimPrefix(o.Key, "ns/") + ",nil)"
		}
		return "dfsu(" + strings.TrimPrefix(o.Key, "ns/") + "," + Describe(o.Obj) + ")"
	case delta.ReplacedAllInfo:
		parts := make([]string, len(o.Objects))
		for i, x := range o.Objects {
			parts[i] = Describe(x)
		}
		return o.ResourceVersion + "[" + strings.Join(parts, ",") + "]"
	case delta.BookmarkInfo:
		return o.ResourceVersion
	case delta.SyncAllInfo:
		return "all"
	}
	return fmt.Sprintf("%T", o)
}

// DescribeDeltas describes deltas as space-separated Type:object, each
// object as Describe names it.
func DescribeDeltas(ds []delta.Delta) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = string(d.Type) + ":" + Describe(d.Object)
	}
	return strings.Join(parts, " ")
}
