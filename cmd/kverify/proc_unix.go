//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// ownGroup makes cmd the leader of a new process group, so that killGroup
// stops it and everything it started (go tool test2json, the test binary).
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills cmd's process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
