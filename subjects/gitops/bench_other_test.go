//go:build !unix

package gitops

// syncChild: BenchmarkSync100k (bench_test.go) measures its processes'
// resident sets through ru_maxrss, which only unix systems report.
func syncChild() bool { return false }
