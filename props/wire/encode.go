package wire

// The wire form of the model's objects and events: ConfigMaps with
// metadata only, each with a UID of its identity, and watch events as
// kube-apiserver writes them (one JSON object per line).

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/kverify/kverify/spec/apiserver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// setUID gives o the UID of its identity in m: its key and the version it
// was created at (apiserver.Server.Created), so that a client that keys
// its cache by UID (as kubernetes-fluent-client does) sees one object per
// key, and a new one after a delete and a create. A version that is not a
// number (a malformed event) is taken as the latest.
func setUID(m *apiserver.Server, o *metav1.PartialObjectMetadata) {
	key := o.Name
	if o.Namespace != "" {
		key = o.Namespace + "/" + key
	}
	rv, err := strconv.ParseInt(o.ResourceVersion, 10, 64)
	if err != nil {
		rv = m.RV()
	}
	o.UID = types.UID(fmt.Sprintf("kverify-%s-%d", strings.ReplaceAll(key, "/", "-"), m.Created(key, rv)))
}

// configMap is the wire form of a model object: a ConfigMap with metadata
// only. The model's malformed objects keep their faults (no version, a
// version that is not a number); WrongType becomes a Secret.
type configMap struct {
	Kind       string            `json:"kind"`
	APIVersion string            `json:"apiVersion"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
}

type configMapList struct {
	Kind       string          `json:"kind"`
	APIVersion string          `json:"apiVersion"`
	Metadata   metav1.ListMeta `json:"metadata"`
	Items      []configMap     `json:"items"`
}

func asConfigMap(m *metav1.PartialObjectMetadata) configMap {
	return configMap{Kind: "ConfigMap", APIVersion: "v1", Metadata: m.ObjectMeta}
}

// encodeEvent is a watch event's line on the wire, its description for
// the request log, and whether it is malformed (no object, another kind,
// an object without a numeric version).
func encodeEvent(e watch.Event) (line []byte, desc string, malformed bool) {
	var obj any
	desc = string(e.Type)
	switch o := e.Object.(type) {
	case *metav1.PartialObjectMetadata:
		obj = asConfigMap(o)
		desc += " " + o.ResourceVersion
		if o.Annotations[apiserver.InitialEventsAnnotationKey] == "true" {
			desc += " end"
		}
		_, err := strconv.ParseUint(o.ResourceVersion, 10, 64)
		malformed = err != nil
	case *metav1.Status:
		st := *o
		st.Kind, st.APIVersion = "Status", "v1"
		obj = st
		desc += " " + strconv.Itoa(int(o.Code))
	case metav1.Object: // the model's WrongType
		obj = map[string]any{"kind": "Secret", "apiVersion": "v1", "metadata": map[string]any{
			"name": o.GetName(), "namespace": o.GetNamespace(), "resourceVersion": o.GetResourceVersion()}}
		desc += " " + o.GetResourceVersion() + " wrong-type"
		malformed = true
	default:
		desc += " nil-object"
		malformed = true
	}
	b, err := json.Marshal(struct {
		Type   watch.EventType `json:"type"`
		Object any             `json:"object"`
	}{e.Type, obj})
	if err != nil {
		b = []byte(`{"type":"ERROR","object":null}`)
	}
	return append(b, '\n'), desc, malformed
}
