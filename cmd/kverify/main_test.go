package main

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine: kverify serve's, and
// the stock client's in TestServeForAPerson, must all end.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
