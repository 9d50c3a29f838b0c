package ours_test

import (
	"testing"

	"github.com/kverify/kverify/subjects"
	"github.com/kverify/kverify/subjects/suite"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestSuite runs every component's checks on ours. The README's test
// command runs the suite one subject per package (here and in
// subjects/upstream), so that each test binary stays far inside go test's
// default timeout on a loaded machine; the kverify command drives
// subjects' own TestSuite.
func TestSuite(t *testing.T) { suite.RunSuite(t, subjects.EntriesOf(subjects.Ours)) }
