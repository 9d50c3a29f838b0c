package wire

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
)

// servedVersion is the Kubernetes version /version reports: the release
// whose client-go (v0.37.2) the model's rules were read from.
var servedVersion = version.Info{Major: "1", Minor: "37", GitVersion: "v1.37.2-kverify", Platform: "kverify/model"}

// discovery answers the discovery paths a stock client reads before it
// lists: /version, /api, /api/v1 (ConfigMaps only, list and watch) and
// /apis (no groups).
func discovery(path string) ([]byte, bool) {
	var v any
	switch path {
	case "/version":
		v = servedVersion
	case "/api":
		v = metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"},
			ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: "127.0.0.1"}}}
	case "/api/v1":
		v = metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "v1",
			APIResources: []metav1.APIResource{{Name: Resource, SingularName: "configmap", Namespaced: true, Kind: "ConfigMap",
				Verbs: metav1.Verbs{"get", "list", "watch"}, ShortNames: []string{"cm"}}}}
	case "/apis":
		v = metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{}}
	default:
		return nil, false
	}
	b, err := json.Marshal(v)
	return append(b, '\n'), err == nil
}
