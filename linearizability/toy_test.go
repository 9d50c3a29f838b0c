package linearizability

import "sync"

// defects are bugs a toy queue can have, to prove the checks can fail.
type defects struct {
	lifo      bool // Get takes the newest item
	dupFirst  bool // the first time a key is handed out, it stays queued: two Gets get it
	notStingy bool // no processing set: a re-Add during processing queues the key at once
	addNoWake bool // Add does not wake a blocked Get
}

// toy is a small work queue with optional defects; with none it is correct.
type toy struct {
	d          defects
	mu         sync.Mutex
	cond       *sync.Cond
	queue      []string
	dirty      map[string]bool
	processing map[string]bool
	handed     map[string]bool
	shut       bool
}

func newToy(d defects) *toy {
	q := &toy{d: d, dirty: map[string]bool{}, processing: map[string]bool{}, handed: map[string]bool{}}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *toy) Add(k string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shut || q.dirty[k] {
		return
	}
	q.dirty[k] = true
	if q.processing[k] {
		return
	}
	q.queue = append(q.queue, k)
	if !q.d.addNoWake {
		q.cond.Signal()
	}
}

func (q *toy) Get() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.queue) == 0 && !q.shut {
		q.cond.Wait()
	}
	if len(q.queue) == 0 {
		return "", true
	}
	i := 0
	if q.d.lifo {
		i = len(q.queue) - 1
	}
	k := q.queue[i]
	if q.d.dupFirst && !q.handed[k] {
		q.handed[k] = true
		return k, false
	}
	q.queue = append(q.queue[:i], q.queue[i+1:]...)
	delete(q.dirty, k)
	if !q.d.notStingy {
		q.processing[k] = true
	}
	return k, false
}

func (q *toy) Done(k string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.processing[k] {
		return
	}
	delete(q.processing, k)
	if q.dirty[k] {
		q.queue = append(q.queue, k)
		q.cond.Signal()
	}
}

func (q *toy) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queue)
}

func (q *toy) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shut = true
	q.cond.Broadcast()
}
