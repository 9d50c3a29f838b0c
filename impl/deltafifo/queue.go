package deltafifo

// keyQueue is a FIFO of keys in a slice: pop clears the slot it reads and
// advances a head index, so a popped key is never referenced. Popping never
// allocates. The cleared prefix is given back when a push finds the array
// full (the live keys move to a new array that append's growth policy sizes
// from the live count, so a queue that shrank gets a smaller one) and when
// the queue empties (the array is dropped if it grew past keepCap). So the
// array costs what client-go's reslicing costs while the queue is busy,
// and its memory returns after a burst.
type keyQueue struct {
	keys []string
	head int
}

// keepCap is the largest array an empty queue keeps for reuse.
const keepCap = 64

func (q *keyQueue) len() int { return len(q.keys) - q.head }

func (q *keyQueue) push(k string) {
	if q.head > 0 && len(q.keys) == cap(q.keys) {
		// Full: grow from the live keys only, leaving the dead prefix behind.
		live := q.keys[q.head:len(q.keys):len(q.keys)]
		q.keys, q.head = append(live, k), 0
		return
	}
	q.keys = append(q.keys, k)
}

func (q *keyQueue) all() []string { return q.keys[q.head:] }

func (q *keyQueue) pop() string {
	k := q.keys[q.head]
	q.keys[q.head] = ""
	q.head++
	if q.head == len(q.keys) {
		if cap(q.keys) > keepCap {
			q.keys = nil
		} else {
			q.keys = q.keys[:0]
		}
		q.head = 0
	}
	return k
}
