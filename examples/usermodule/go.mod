module example.com/usermodule

go 1.26.0

require github.com/kverify/kverify v0.0.0

require (
	github.com/anishathalye/porcupine v1.3.1 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	k8s.io/utils v0.0.0-20260626114624-be93311217bd // indirect
	pgregory.net/rapid v1.3.0 // indirect
)

replace github.com/kverify/kverify => ../..
