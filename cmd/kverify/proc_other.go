//go:build !unix

package main

import "os/exec"

// ownGroup does nothing where process groups are not available.
func ownGroup(cmd *exec.Cmd) {}

// killGroup kills cmd only; its children finish on their own.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}
