// Package deltatest holds test helpers for the FIFO packages (impl/deltafifo,
// impl/realfifo) and the packages around them that handle deltas
// (impl/delta, impl/store, impl/informer): test objects and their
// descriptions for comparisons, a KeyListerGetter, and small assertions.
//
// It is for tests only: no non-test code imports it.
package deltatest
