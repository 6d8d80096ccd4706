package corpus

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// lentScorer records Lent for each input and checks that the cores in use
// (1 + Lent for each input being scored) never exceed the workers.
type lentScorer struct {
	t       *testing.T
	workers int
	inUse   atomic.Int64
	mu      sync.Mutex
	lent    map[int]int
	delay   func(i int) time.Duration
}

func (s *lentScorer) worker(int) (func(context.Context, int) int, error) {
	return func(ctx context.Context, i int) int {
		n := Lent(ctx)
		if cores := s.inUse.Add(int64(1 + n)); cores > int64(s.workers) {
			s.t.Errorf("input %d: %d cores in use, more than the %d workers", i, cores, s.workers)
		}
		time.Sleep(s.delay(i))
		s.inUse.Add(-int64(1 + n))
		s.mu.Lock()
		s.lent[i] = n
		s.mu.Unlock()
		return i
	}, nil
}

func runLent(t *testing.T, workers int, read func(yield func(int) bool) error, delay func(int) time.Duration) map[int]int {
	s := &lentScorer{t: t, workers: workers, lent: map[int]int{}, delay: delay}
	if err := Run(context.Background(), Options{Workers: workers}, read, s.worker, func(int, int) error { return nil }); err != nil {
		t.Fatal(err)
	}
	return s.lent
}

// One input alone gets every worker's cores; outside Run, none are lent.
func TestLentOneInput(t *testing.T) {
	if n := Lent(context.Background()); n != 0 {
		t.Fatalf("Lent outside Run = %d", n)
	}
	for _, workers := range []int{1, 2, 5} {
		got := runLent(t, workers, numbers(1), func(int) time.Duration { return 0 })
		if got[0] != workers-1 {
			t.Errorf("%d workers, one input: Lent %d, want %d", workers, got[0], workers-1)
		}
	}
}

// Fewer inputs than workers: the idle workers' cores go to them. Many
// inputs of random lengths: the cores in use never exceed the workers
// (lentScorer), and an input that starts while read is open gets none.
func TestLentFewAndMany(t *testing.T) {
	for range 20 {
		got := runLent(t, 4, numbers(2), func(i int) time.Duration { return time.Duration(1-i) * 5 * time.Millisecond })
		if got[0]+got[1] < 2 {
			t.Fatalf("two inputs on 4 workers: Lent %v, want the 2 idle workers lent", got)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	delays := make([]time.Duration, 200)
	for i := range delays {
		delays[i] = time.Duration(r.IntN(1500)) * time.Microsecond
	}
	got := runLent(t, 3, numbers(len(delays)), func(i int) time.Duration { return delays[i] })
	for i := range len(delays) - 6 { // before the last window of inputs, read is open
		if got[i] != 0 {
			t.Errorf("input %d of %d, started with inputs waiting: Lent %d", i, len(delays), got[i])
		}
	}
}

// A read that has not returned (a terminal's next line) lends nothing:
// the input waits readWait for it, then runs on its own core.
func TestLentReadOpen(t *testing.T) {
	release := make(chan struct{})
	read := func(yield func(int) bool) error {
		if !yield(0) {
			return nil
		}
		<-release
		yield(1)
		return nil
	}
	delay := func(i int) time.Duration {
		if i == 0 {
			close(release) // input 1 comes while input 0 runs
			return 10 * time.Millisecond
		}
		return 0
	}
	got := runLent(t, 4, read, delay)
	if got[0] != 0 {
		t.Errorf("input 0, its read still open: Lent %d, want 0", got[0])
	}
	if got[1] != 2 { // read done, 2 of the 4 workers busy (input 0 still sleeps)
		t.Errorf("input 1, the last, with input 0 running: Lent %d, want 2", got[1])
	}
}

// Two inputs whose workers both find read done and nothing queued share
// the idle workers: the first takes them, the second gets none until the
// first is scored.
func TestLendCountsLent(t *testing.T) {
	q := &queue[int, int]{todo: make(chan *slot[int, int], 4), read: make(chan struct{}), workers: 4}
	close(q.read)
	q.sent = 2
	if a, b := q.lend(), q.lend(); a != 2 || b != 0 {
		t.Fatalf("two inputs on 4 workers: lent %d and %d, want 2 and 0", a, b)
	}
	q.done(2)
	if c := q.lend(); c != 3 {
		t.Fatalf("the other input alone: lent %d, want 3", c)
	}
}
