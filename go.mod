module github.com/kverify/kverify

go 1.26.0

require (
	go.uber.org/goleak v1.3.0
	golang.org/x/time v0.15.0
	k8s.io/client-go v0.37.2
	k8s.io/utils v0.0.0-20260626114624-be93311217bd
	pgregory.net/rapid v1.3.0
)

require (
	github.com/anishathalye/porcupine v1.3.1 // indirect
	github.com/go-logr/logr v1.4.3 // indirect
	k8s.io/apimachinery v0.37.2 // indirect
	k8s.io/klog/v2 v2.140.0 // indirect
)
