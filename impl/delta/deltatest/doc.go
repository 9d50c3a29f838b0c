// Package deltatest holds test helpers for the FIFO packages (impl/deltafifo,
// impl/realfifo) and the packages around them that handle deltas
// (impl/delta, impl/store, impl/informer): test objects and their
// descriptions for comparisons, a KeyListerGetter, small assertions, and a
// capture of klog for the FIFOs' slow-pop traces.
//
// It is for tests only: no non-test code imports it.
package deltatest
