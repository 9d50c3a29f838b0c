// Command kubectl is kubectl built from the Go module proxy's source,
// k8s.io/kubectl at the release go.mod requires (the newest, v0.37.2),
// as the kubectl binary is: cli.Run(cmd.NewDefaultKubectlCommand()). The
// Debian and machine binaries kverify judges are older releases; this one
// lets the kubectl subject and its finding's reproducer run on the newest
// source (make kubectl builds it and runs both with it).
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
)

func main() {
	os.Exit(cli.Run(cmd.NewDefaultKubectlCommand()))
}
