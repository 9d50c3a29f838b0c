package informer

import "github.com/kverify/kverify/impl/ring"

// defaultBuffer is a chunked ring: growth never copies, and chunks are
// released as the backlog drains, so a burst behind a slow handler does not
// pin its peak memory for the life of the process (client-go's growing ring
// never shrinks).
func defaultBuffer() Buffer { return ring.NewChunked[Notification](0) }
