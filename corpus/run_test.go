package corpus

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// numbers yields 0..n-1.
func numbers(n int) func(yield func(int) bool) error {
	return func(yield func(int) bool) error {
		for i := range n {
			if !yield(i) {
				return nil
			}
		}
		return nil
	}
}

// jittery scores i as i*i after a random delay of up to 2 ms, from a
// generator of each worker's own.
func jittery(w int) (func(context.Context, int) int, error) {
	r := rand.New(rand.NewPCG(uint64(w), 1))
	return func(_ context.Context, i int) int {
		time.Sleep(time.Duration(r.IntN(2000)) * time.Microsecond)
		return i * i
	}, nil
}

// The results come in input order, the same for any number of workers,
// however long each input takes.
func TestRunOrder(t *testing.T) {
	const n = 300
	for _, workers := range []int{1, 2, 3, 8} {
		var got []int
		err := Run(context.Background(), Options{Workers: workers}, numbers(n), jittery,
			func(i, sq int) error {
				if sq != i*i {
					t.Fatalf("input %d got result %d", i, sq)
				}
				got = append(got, i)
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n || !slices.IsSorted(got) || got[n-1] != n-1 {
			t.Fatalf("%d workers: %d results, not 0..%d in order", workers, len(got), n-1)
		}
	}
}

// Each worker's function runs on one goroutine at a time (the race
// detector would see shared state), newWorker is called once per worker,
// and the zero Options run GOMAXPROCS workers.
func TestRunWorkers(t *testing.T) {
	var made []int
	total := 0
	err := Run(context.Background(), Options{Workers: 3}, numbers(100),
		func(i int) (func(context.Context, int) int, error) {
			made = append(made, i)
			count := 0 // this worker's own state
			return func(context.Context, int) int { count++; return count }, nil
		},
		func(_, c int) error { total++; return nil })
	if err != nil || !slices.Equal(made, []int{0, 1, 2}) || total != 100 {
		t.Fatalf("workers made %v, %d written, error %v", made, total, err)
	}
	t.Run("zero", func(t *testing.T) {
		made = nil
		if err := Run(context.Background(), Options{}, numbers(1), func(i int) (func(context.Context, int) int, error) {
			made = append(made, i)
			return func(context.Context, int) int { return 0 }, nil
		}, func(int, int) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if want := runtime.GOMAXPROCS(0); len(made) != want {
			t.Fatalf("%d workers, want GOMAXPROCS = %d", len(made), want)
		}
	})
}

// At most Window inputs are read and not yet written, however many there
// are and however slow the head of the line: memory does not grow with
// the corpus.
func TestRunWindow(t *testing.T) {
	for _, o := range []Options{{Workers: 1, Window: 1}, {Workers: 2, Window: 3}, {Workers: 4}, {Workers: 3, Window: 16}} {
		window := o.Window
		if window == 0 {
			window = 2 * o.Workers
		}
		var written atomic.Int64
		peak := int64(0)
		read := func(yield func(int) bool) error {
			for i := range 400 {
				if !yield(i) {
					return nil
				}
				// Admitted: i+1 read; written only grows, so this bounds
				// the number in flight at admission.
				peak = max(peak, int64(i+1)-written.Load())
			}
			return nil
		}
		err := Run(context.Background(), o, read, jittery, func(int, int) error {
			written.Add(1)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if peak > int64(window) || peak < 1 {
			t.Fatalf("%+v: %d inputs in flight, window %d", o, peak, window)
		}
	}
}

// Ending the context stops the run promptly: Run returns the context's
// error, writes nothing after it, and the workers have returned.
func TestRunCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var busy atomic.Int64
	written := 0
	start := time.Now()
	err := Run(ctx, Options{Workers: 2}, numbers(1<<30),
		func(int) (func(context.Context, int) int, error) {
			return func(ctx context.Context, i int) int {
				busy.Add(1)
				defer busy.Add(-1)
				if i < 10 {
					return i
				}
				select { // a long input that honours ctx
				case <-ctx.Done():
				case <-time.After(time.Minute):
				}
				return i
			}, nil
		},
		func(i, _ int) error {
			if ctx.Err() != nil {
				t.Fatalf("input %d written after the cancellation", i)
			}
			if written++; written == 10 {
				cancel()
			}
			return nil
		})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Run returned %v after the cancellation", d)
	}
	if n := busy.Load(); n != 0 {
		t.Fatalf("%d workers still scoring after Run returned", n)
	}
	if written != 10 {
		t.Fatalf("%d written, want 10", written)
	}
}

// A read blocked on its source (a terminal's standard input) does not
// keep Run from returning when the context ends.
func TestRunCancelBlockedRead(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	never := make(chan struct{})
	defer close(never)
	read := func(yield func(int) bool) error {
		if !yield(1) {
			return nil
		}
		<-never
		return nil
	}
	done := make(chan error)
	go func() {
		done <- Run(ctx, Options{Workers: 2}, read, jittery, func(int, int) error {
			cancel()
			return nil
		})
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run still waits for a blocked read 5 s after the cancellation")
	}
}

// A corpus's bad lines reach write in order with their numbers, the
// others are still scored, and the reader's error comes after them.
func TestRunLineErrors(t *testing.T) {
	in := "1\n2\nx\n\n4\n" + strings.Repeat("9", 50) + "\n5"
	type line struct {
		n    int
		s    string
		long int64
	}
	type result struct {
		v   int
		err error
	}
	read := func(yield func(line) bool) error {
		return EachLine(strings.NewReader(in), 8, func(n int, s string, long int64) bool {
			return yield(line{n, s, long})
		})
	}
	for _, workers := range []int{1, 2, 5} {
		var got []string
		err := Run(context.Background(), Options{Workers: workers}, read,
			func(int) (func(context.Context, line) result, error) {
				return func(_ context.Context, l line) result {
					if l.long > 0 {
						return result{err: fmt.Errorf("%d bytes", l.long)}
					}
					v, err := strconv.Atoi(l.s)
					return result{v, err}
				}, nil
			},
			func(l line, r result) error {
				if r.err != nil {
					got = append(got, fmt.Sprintf("%d: error", l.n))
				} else {
					got = append(got, fmt.Sprintf("%d: %d", l.n, r.v))
				}
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"1: 1", "2: 2", "3: error", "4: error", "5: 4", "6: error", "7: 5"}
		if !slices.Equal(got, want) {
			t.Fatalf("%d workers: %q, want %q", workers, got, want)
		}
	}
}

// write's error ends the run (reading stops); read's error comes after
// everything read was written; newWorker's error and bad Options come
// before anything is read.
func TestRunErrors(t *testing.T) {
	stop := errors.New("disk full")
	var read atomic.Int64 // Run does not wait for read after an error
	err := Run(context.Background(), Options{Workers: 2, Window: 2}, func(yield func(int) bool) error {
		for i := range 1000 {
			if !yield(i) {
				return nil
			}
			read.Add(1)
		}
		return nil
	}, jittery, func(i, _ int) error {
		if i == 5 {
			return stop
		}
		return nil
	})
	if err != stop || read.Load() > 10 {
		t.Fatalf("error %v after %d read, want %v and reading stopped", err, read.Load(), stop)
	}

	bad := errors.New("unreadable")
	written := 0
	err = Run(context.Background(), Options{Workers: 2}, func(yield func(int) bool) error {
		yield(1)
		yield(2)
		return bad
	}, jittery, func(int, int) error { written++; return nil })
	if err != bad || written != 2 {
		t.Fatalf("error %v after %d written, want %v after 2", err, written, bad)
	}

	nope := errors.New("no model")
	err = Run(context.Background(), Options{Workers: 2}, func(func(int) bool) error {
		t.Fatal("read with no workers")
		return nil
	}, func(i int) (func(context.Context, int) int, error) {
		if i == 1 {
			return nil, nope
		}
		return jittery(i)
	}, func(int, int) error { return nil })
	if err != nope {
		t.Fatalf("error %v, want %v", err, nope)
	}
	for _, o := range []Options{{Workers: -1}, {Workers: 1, Window: -1}} {
		if err := Run(context.Background(), o, numbers(1), jittery, func(int, int) error { return nil }); err == nil {
			t.Fatalf("%+v: no error", o)
		}
	}
}
