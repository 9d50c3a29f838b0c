//go:build clientgo_before_v0_27 && !clientgo_before_v0_24 && !((clientgo_before_v0_24_13 && !clientgo_before_v0_24) || (clientgo_before_v0_25_9 && !clientgo_before_v0_25) || (clientgo_before_v0_26_4 && !clientgo_before_v0_26))

package upstream

// pop: before v0.27 Pop's process func takes the item alone; the adapter
// works isInInitialList out (oldDeltaFIFO.popped).
func (c *oldDeltaFIFO) pop(process func(obj any, initial bool) error) (any, error) {
	return c.f.Pop(func(obj any) error {
		return process(obj, c.popped())
	})
}
