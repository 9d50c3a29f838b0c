package mutants

// Catalogue lists every mutant. Each is a bug a careful engineer could
// plausibly write; none is a syntax-level prank.
var Catalogue = concat(wireMutants, workqueueMutants, delayingMutants, ratelimitMutants, ringMutants, informerMutants, deltaFIFOMutants, realFIFOMutants, reflectorMutants, assemblyMutants, backoffMutants,
	relistMutants, serverAnswerMutants, informerPathMutants, reachMutants, declaredMutants, controllerMutants, exploreMutants, retryWatcherMutants)

func concat(lists ...[]Mutant) []Mutant {
	var out []Mutant
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

const (
	queueGo  = "impl/workqueue/queue.go"
	statesGo = "impl/workqueue/states.go"
	orderGo  = "impl/workqueue/order.go"
)

var workqueueMutants = []Mutant{
	// The default Order is a FIFO over impl/ring's growing ring: these two
	// break the ring as the workqueue uses it.
	{ID: "wq-stop-close-racy", Component: "workqueue", File: queueGo,
		Bug: "the queue closes its stop channel with the close-if-open idiom (a select on it, then close) instead of a sync.Once, so two shutdowns at the same instant can both close it: a panic",
		Old: "	q.stopped.Do(func() { close(q.stop) })", New: "	select {\n	case <-q.stop:\n	default:\n		close(q.stop)\n	}"},
	{ID: "wq-lifo", Component: "workqueue", File: growingGo,
		Bug: "the FIFO's ring pops the newest item instead of the oldest",
		Old: "	buf, r := g.rbuf, g.r\n",
		New: "	if g.w > 0 && g.n > 1 {\n		x := g.wbuf[g.w-1]\n		g.wbuf[g.w-1] = zero\n		g.w--\n		g.n--\n		return x, true\n	}\n	buf, r := g.rbuf, g.r\n"},
	{ID: "wq-pop-no-zero", Component: "workqueue", File: growingGo,
		Bug: "the FIFO's ring keeps a reference to a popped item",
		Old: "	buf[r] = zero\n", New: "	_ = zero\n"},
	{ID: "wq-add-while-processing-pushes", Component: "workqueue", File: queueGo,
		Bug: "Add of an item being processed pushes it, so two workers can hold it",
		Old: "	if s&processing != 0 {\n		return false // Done will queue it\n	}\n", New: ""},
	{ID: "wq-add-no-dedup", Component: "workqueue", File: queueGo,
		Bug: "Add of an item that is already queued pushes it again",
		Old: "	if s&dirty != 0 {\n		if s&processing == 0 {", New: "	if s&dirty != 0 && s&processing != 0 {\n		if s&processing == 0 {"},
	{ID: "wq-done-drops-readd", Component: "workqueue", File: queueGo,
		Bug: "Done forgets an item re-added during processing",
		Old: "		q.state.set(place, item, tag, dirty)\n		q.order.Push(item)\n		queued = true\n", New: "		q.state.remove(place)\n"},
	{ID: "wq-done-no-signal", Component: "workqueue", File: queueGo,
		Bug: "Done re-queues a re-added item without waking a waiting Get",
		Old: "	if q.done(item, q.state.tag(item)) {\n		q.itemReady.Signal()\n	}", New: "	q.done(item, q.state.tag(item))"},
	{ID: "wq-add-no-signal", Component: "workqueue", File: queueGo,
		Bug: "Add does not wake a waiting Get",
		Old: "	if q.add(item, q.state.tag(item)) {\n		q.itemReady.Signal()\n	}", New: "	q.add(item, q.state.tag(item))"},
	{ID: "wq-add-after-shutdown", Component: "workqueue", File: queueGo,
		Bug: "Add still queues items after ShutDown",
		Old: "	if q.shuttingDown {\n		return false\n	}\n	place, s := q.state.find(item, tag)", New: "	place, s := q.state.find(item, tag)"},
	{ID: "wq-shutdown-no-broadcast", Component: "workqueue", File: queueGo,
		Bug: "ShutDown does not wake Gets blocked on an empty queue",
		Old: "	q.draining = false\n	q.itemReady.Broadcast()\n", New: "	q.draining = false\n"},
	{ID: "wq-get-shutdown-early", Component: "workqueue", File: queueGo,
		Bug: "Get reports shutdown while items are still queued",
		Old: "	if q.order.Len() == 0 {\n		return item, true\n	}", New: "	if q.order.Len() == 0 || q.shuttingDown {\n		return item, true\n	}"},
	{ID: "wq-drain-processing-only", Component: "workqueue", File: queueGo,
		Bug: "ShutDownWithDrain stops waiting while items are still queued (client-go's behaviour)",
		Old: "	for q.draining && (q.nProcessing > 0 || q.order.Len() > 0) {", New: "	for q.draining && q.nProcessing > 0 {"},
	{ID: "wq-drain-ignores-shutdown", Component: "workqueue", File: queueGo,
		Bug: "ShutDown does not release a waiting ShutDownWithDrain",
		Old: "	q.itemReady.Broadcast()\n	q.drained.Broadcast()\n", New: "	q.itemReady.Broadcast()\n"},
	{ID: "wq-done-unheld-requeues", Component: "workqueue", File: queueGo,
		Bug: "Done of an item never handed out re-queues it (client-go's behaviour)",
		Old: "	if s&processing == 0 {\n		return false\n	}", New: "	if s == 0 {\n		return false\n	}\n	if s&processing == 0 {\n		q.order.Push(item)\n		return true\n	}"},
	{ID: "wq-len-counts-processing", Component: "workqueue", File: queueGo,
		Bug: "Len counts items being processed",
		Old: "	return q.order.Len()\n}\n\n// Get", New: "	return q.order.Len() + q.nProcessing\n}\n\n// Get"},
	{ID: "wq-shutdown-leaks-metrics", Component: "workqueue", File: queueGo,
		Bug: "ShutDown never stops the metrics goroutine",
		Old: "	q.stopped.Do(func() { close(q.stop) })\n", New: ""},
	{ID: "wq-metrics-depth-no-dec", Component: "workqueue", File: "impl/workqueue/metrics.go",
		Bug: "the depth gauge is not decremented when Get hands an item out",
		Old: "	m.depth.Dec()\n", New: ""},
	{ID: "wq-metrics-add-on-collapse", Component: "workqueue", File: queueGo,
		Bug: "an Add that collapses into a waiting item is counted as an add (and raises depth)",
		Old: "			q.order.Touch(item)\n		}\n		return", New: "			q.order.Touch(item)\n		}\n		q.metrics.add(item)\n		return"},
	{ID: "wq-lock-gives-up", Component: "workqueue", File: queueGo,
		Bug: "the queue's lock returns after its failed TryLock attempts without taking the lock, so under contention two operations run inside the critical section at once",
		Old: "		}\n	}\n	q.mu.Lock()\n}", New: "		}\n	}\n}"},
	{ID: "wq-lock-try-ignored", Component: "workqueue", File: queueGo,
		Bug: "the queue's lock treats a failed TryLock as success, so an operation that meets a held lock proceeds without it",
		Old: "		if q.mu.TryLock() {\n			return\n		}", New: "		q.mu.TryLock()\n		return"},
	{ID: "wq-done-split-lock", Component: "workqueue", File: queueGo,
		Bug: "Done releases the lock between reading the item's state and re-queueing it, so an Add in that window is lost (it sees the item processing and leaves the re-queue to Done, which acts on the state it read before)",
		Old: "	q.metrics.done(item)\n	q.nProcessing--\n", New: "	q.metrics.done(item)\n	q.nProcessing--\n	q.mu.Unlock() // let waiting Adds in before the re-queue\n	q.mu.Lock()\n"},
	{ID: "wq-add-split-lock", Component: "workqueue", File: queueGo,
		Bug: "Add records its metric outside the lock, between reading the item's state and marking it dirty, so two concurrent Adds of a new item both queue it",
		Old: "	q.metrics.add(item)\n	q.state.set(place, item, tag, s|dirty)\n", New: "	q.mu.Unlock() // metrics need not hold the queue's lock\n	q.metrics.add(item)\n	q.mu.Lock()\n	place, _ = q.state.find(item, tag) // the table may have changed\n	q.state.set(place, item, tag, s|dirty)\n"},
	{ID: "wq-get-polls", Component: "workqueue", File: queueGo,
		Bug: "Get polls for an item (releasing and retaking the lock) instead of waiting on the condition, so a blocked Get spins",
		Old: "	for q.order.Len() == 0 && !q.shuttingDown {\n		q.itemReady.Wait()\n	}", New: "	for q.order.Len() == 0 && !q.shuttingDown {\n		q.mu.Unlock() // let an Add in, then look again\n		q.mu.Lock()\n	}"},
	{ID: "wq-shutdown-signal-one", Component: "workqueue", File: queueGo,
		Bug: "ShutDown wakes one blocked Get (Signal) instead of all of them, so with two or more workers waiting the others never return",
		Old: "	q.draining = false\n	q.itemReady.Broadcast()\n", New: "	q.draining = false\n	q.itemReady.Signal()\n"},
	{ID: "wq-fifo-shrink-unwrapped", Component: "workqueue", File: growingGo,
		Bug: "Shrink copies the values as if they all lay in the reader's segment, so a FIFO that shrinks after a burst whose values span segments or wrap loses or reorders items",
		Old: "	for i := range n {\n		seg[i], _ = g.ReadOne()\n	}\n",
		New: "	copy(seg, g.rbuf[g.r:min(g.r+n, len(g.rbuf))])\n"},
	// The state table (states.go).
	{ID: "wq-done-keeps-key", Component: "workqueue", File: statesGo,
		Bug: "removing a finished item from the state table marks its place empty but keeps the item there, so the item stays referenced until its place is reused",
		Old: "	s.entries[hole] = stateEntry[T]{} // drops the reference to the item\n", New: "	s.entries[hole].state = 0\n"},
	{ID: "wq-states-no-backshift", Component: "workqueue", File: statesGo,
		Bug: "removing an item from the state table empties its place without shifting back the entries behind it, so an item whose probe run crossed the hole is no longer found: an Add of it queues it twice",
		Old: "	for j := (hole + 1) & mask; s.entries[j].state != 0; j = (j + 1) & mask {", New: "	for j := (hole + 1) & mask; false; j = (j + 1) & mask {"},
	{ID: "wq-states-shift-too-far", Component: "workqueue", File: statesGo,
		Bug: "the backward shift also moves an entry whose home is the place after the hole, so that entry sits before its home, where no lookup finds it",
		Old: "		if (j-home)&mask >= (j-hole)&mask {", New: "		if (j-home)&mask+1 >= (j-hole)&mask {"},
	{ID: "wq-states-grow-stale-place", Component: "workqueue", File: statesGo,
		Bug: "inserting into the state table after it grew writes at the place found in the old table, so the new item sits where its lookups do not look, or overwrites another",
		Old: "		s.resize(2 * len(s.entries))\n		place, _ = s.find(item, tag)\n", New: "		s.resize(2 * len(s.entries))\n"},
	// Starvation under sustained load (issue 27, class 7): each shows only
	// while work keeps arriving (growth at every Get, more workers busy than
	// the machines drive, a backlog past their bursts); queue/liveness
	// drives that load.
	{ID: "wq-overload-lifo", Component: "workqueue", File: orderGo,
		Bug: "an 'adaptive LIFO' FIFO: once the backlog is longer at each of 32 Pops in a row than at the one before (past 64 items), new items go on a stack served before the older ones, which starve while the overload lasts",
		Old: "	ring ring.Growing[T]\n	low  int // consecutive pops with the ring under a quarter full\n}\n\nfunc (f *fifo[T]) Touch(T)     {}\nfunc (f *fifo[T]) Len() int    { return f.ring.Len() }\nfunc (f *fifo[T]) Push(item T) { f.ring.WriteOne(item) }\nfunc (f *fifo[T]) Pop() (item T) {\n",
		New: "	ring ring.Growing[T]\n	low  int // consecutive pops with the ring under a quarter full\n	hot  []T // pushed while overloaded, served newest first\n	grew int // consecutive pops that found a longer backlog than the last left\n	last int\n}\n\nfunc (f *fifo[T]) Touch(T)  {}\nfunc (f *fifo[T]) Len() int { return f.ring.Len() + len(f.hot) }\nfunc (f *fifo[T]) Push(item T) {\n	if f.grew >= 32 {\n		f.hot = append(f.hot, item)\n		return\n	}\n	f.ring.WriteOne(item)\n}\nfunc (f *fifo[T]) Pop() (item T) {\n	if n := f.Len(); n > f.last && n > 64 {\n		f.grew++\n	} else {\n		f.grew = 0\n	}\n	f.last = f.Len()\n	if k := len(f.hot); k > 0 {\n		item = f.hot[k-1]\n		var zero T\n		f.hot[k-1] = zero\n		f.hot = f.hot[:k-1]\n		return item\n	}\n"},
	{ID: "wq-done-readd-head-busy", Component: "workqueue", File: queueGo,
		Bug: "a 'retry first' path: while three or more other items are being processed, Done queues an item re-added during its processing at the head, ahead of every older item, which starve while workers keep re-adding",
		Old: "		q.state.set(place, item, tag, dirty)\n		q.order.Push(item)\n		queued = true\n",
		New: "		q.state.set(place, item, tag, dirty)\n		q.order.Push(item)\n		if q.nProcessing >= 3 {\n			for range q.order.Len() - 1 {\n				q.order.Push(q.order.Pop())\n			}\n		}\n		queued = true\n"},
	{ID: "wq-touch-jumps-ahead-busy", Component: "workqueue", File: queueGo,
		Bug: "a 'hot key' path: while four or more items are being processed, an Add of an item already queued moves it to the head, so a key re-added often jumps ahead of older items, which starve",
		Old: "		if s&processing == 0 {\n			q.order.Touch(item)\n		}\n",
		New: "		if s&processing == 0 {\n			q.order.Touch(item)\n			if n := q.order.Len(); q.nProcessing >= 4 {\n				rest := make([]T, 0, n)\n				for range n {\n					if x := q.order.Pop(); x != item {\n						rest = append(rest, x)\n					}\n				}\n				q.order.Push(item)\n				for _, x := range rest {\n					q.order.Push(x)\n				}\n			}\n		}\n"},
	{ID: "wq-get-newest-past-8192", Component: "workqueue", File: queueGo,
		Bug: "past 8192 queued items Get hands out the newest ('the oldest are stale by now'), so under sustained adds the backlog's older items are never handed out",
		Old: "	item = q.order.Pop()\n	q.metrics.get(item)\n",
		New: "	if n := q.order.Len(); n > 1<<13 {\n		for range n - 1 {\n			q.order.Push(q.order.Pop())\n		}\n	}\n	item = q.order.Pop()\n	q.metrics.get(item)\n"},
	{ID: "dq-ready-starved-busy", Component: "delaying", File: delayingGo,
		Bug: "a backpressure path: while four or more items are being processed and items are queued, the delaying queue leaves ready items waiting and looks again 10ms later, so under sustained Adds they are never moved into the queue",
		Old: "		if at > now {\n			// Read under the lock: an AddAfter may lower it at once.\n			d.mu.Unlock()\n			return at, true\n		}\n",
		New: "		if at > now {\n			d.mu.Unlock()\n			return at, true\n		}\n		d.q.mu.Lock()\n		busy := d.q.nProcessing >= 4 && d.q.order.Len() > 0\n		d.q.mu.Unlock()\n		if busy {\n			d.mu.Unlock()\n			return now + 10*time.Millisecond, true\n		}\n"},
}
