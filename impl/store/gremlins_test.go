//go:build gremlins

package store_test

import (
	"testing"

	"github.com/kverify/kverify/subjects"
)

// TestGremlins judges go-gremlins' mutants of this package (make gremlins)
// by the conformance checks of the components built on it (see
// subjects.RunGremlins).
func TestGremlins(t *testing.T) { subjects.RunGremlins(t, "informer", "reflector") }
