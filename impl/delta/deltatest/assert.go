package deltatest

import (
	"slices"
	"strings"
	"testing"
)

// Check reports an error unless got equals want, listing both an element a
// line.
func Check(t testing.TB, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("got\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// Must stops the test on a non-nil err.
func Must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// IsClosed reports, without blocking, whether ch is closed (or has a value
// ready).
func IsClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
