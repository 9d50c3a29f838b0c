package informer

import "github.com/kverify/kverify/impl/ring"

// defaultBuffer is a chunked ring: growth never copies, and chunks are
// released as the backlog drains, so a burst behind a slow handler does not
// pin its peak memory for the life of the process (client-go's growing ring
// never shrinks). Released chunks go to chunkPool, shared by every
// listener in the process, so listeners whose backlogs rise and fall under
// steady traffic reuse chunks instead of allocating one per 1024
// notifications, and a listener that closes gives its chunks back there.
func defaultBuffer() Buffer { return chunkPool.New() }

// chunkPool keeps at most PoolChunks free chunks of 1024 notifications
// (40 KiB each on 64-bit machines) for good: what a drained burst can leave
// behind, process-wide, once the garbage collector has taken the rest (two
// collections after the chunks were last used). While chunks circulate the
// pool drops none, so a steady backlog, however much it swings, allocates
// nothing once it has reached its largest size.
var chunkPool = ring.NewPool[Notification](0, PoolChunks)

// PoolChunks bounds the free chunks the listeners' shared pool keeps for
// good.
const PoolChunks = 64
