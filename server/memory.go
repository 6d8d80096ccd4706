package server

import "sync"

// reqMemory is the half of -budget that is not the engines': the bytes
// the requests themselves hold — their bodies and decoded instances (2×
// the body), and a response held whole until it is written (2× its
// records: the records and the document made of them). A request takes
// its bytes before it holds them and gives them back when it ends; what
// does not fit now is answered 503 with Retry-After, what would not fit
// a request's share (-budget / 2 / -workers) ever is 413. Streamed
// responses hold one window of records (see infer), counted the same way.
type reqMemory struct {
	mu        sync.Mutex
	cap, used int64
	share     int64 // what one request may hold
	peak      int64 // the most held at once (metrics, tests)
}

// take reserves n bytes, false when they do not fit now.
func (m *reqMemory) take(n int64) bool {
	if n <= 0 {
		return true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.used+n > m.cap {
		return false
	}
	m.used += n
	m.peak = max(m.peak, m.used)
	return true
}

// give returns n bytes.
func (m *reqMemory) give(n int64) {
	if n <= 0 {
		return
	}
	m.mu.Lock()
	m.used -= n
	m.mu.Unlock()
}

// inUse returns the bytes held now and the most held at once.
func (m *reqMemory) inUse() (used, peak int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.used, m.peak
}
