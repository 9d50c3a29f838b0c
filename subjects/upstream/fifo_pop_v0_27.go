//go:build clientgo_before_v0_36 && !clientgo_before_v0_27

package upstream

// pop: from v0.27 Pop's process func takes isInInitialList.
func (c *oldDeltaFIFO) pop(process func(obj any, initial bool) error) (any, error) {
	return c.f.Pop(func(obj any, initial bool) error {
		c.popped()
		return process(obj, initial)
	})
}
