package server

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/whitebox-lstm/whitebox/score"
)

// instances runs the instances of one request side by side: on the
// request's slot and on the slots that are free when it starts (taken
// without waiting, each given back as soon as its goroutine has no
// instance left, so that a waiting request gets it), a Scorer each. At
// most as many records as goroutines are begun and not yet taken by the
// writer (window), so the records waiting for an earlier one to be
// written stay few.
type instances struct {
	results []instanceResult
	window  chan struct{}
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	once    sync.Once
}

type instanceResult struct {
	done  chan struct{}
	buf   bytes.Buffer
	err   error
	panic any // a panic of its goroutine, raised again on the handler's
}

// runInstances starts the instances' goroutines: sc and the Scorers of
// the extra slots.
func (s *Server) runInstances(ctx context.Context, m *served, cfg score.Config, sc *score.Scorer, verb string, inputs []string) (*instances, error) {
	n := len(inputs)
	extra := 0
	for extra < n-1 {
		select {
		case s.slots <- struct{}{}:
			extra++
			continue
		default:
		}
		break
	}
	scorers := []*score.Scorer{sc}
	for len(scorers) < 1+extra {
		more, err := m.c.Scorer(cfg, s.pool)
		if err != nil {
			for range 1 + extra - len(scorers) {
				<-s.slots
			}
			return nil, err
		}
		scorers = append(scorers, more)
	}
	if len(scorers) > 1 {
		// Side by side, each call takes its own core: one that borrowed
		// every core would keep the others waiting in the pool.
		for _, scr := range scorers {
			scr.Borrow(0)
		}
	}
	wctx, cancel := context.WithCancel(ctx)
	run := &instances{results: make([]instanceResult, n), window: make(chan struct{}, len(scorers)), cancel: cancel}
	for i := range run.results {
		run.results[i].done = make(chan struct{})
	}
	var next atomic.Int64
	for g, scr := range scorers {
		run.wg.Add(1)
		go func() {
			defer run.wg.Done()
			if g > 0 {
				defer func() { <-s.slots }() // an extra slot, back once idle
			}
			for {
				select {
				case run.window <- struct{}{}:
				case <-wctx.Done():
					return
				}
				i := int(next.Add(1) - 1)
				if i >= n {
					<-run.window
					return
				}
				run.one(wctx, scr, verb, inputs[i], &run.results[i])
			}
		}()
	}
	return run, nil
}

// one computes one instance's record, a panic kept for the handler.
func (run *instances) one(ctx context.Context, sc *score.Scorer, verb, input string, res *instanceResult) {
	defer close(res.done)
	defer func() {
		if v := recover(); v != nil {
			res.panic = fmt.Sprintf("%v\n%s", v, debug.Stack())
		}
	}()
	if verb == "predict" {
		res.err = predictLine(ctx, sc, input, &res.buf)
	} else {
		res.err = sc.Line(ctx, input, &res.buf)
	}
}

// result waits for instance i's record (valid until done(i)); a panic of
// its goroutine panics here, on the handler's goroutine (the request's
// 500).
func (run *instances) result(ctx context.Context, i int) ([]byte, error) {
	res := &run.results[i]
	select {
	case <-res.done:
	case <-ctx.Done():
		select {
		case <-res.done: // it may have finished, with the deadline's error
		default:
			return nil, ctx.Err()
		}
	}
	if res.panic != nil {
		panic(res.panic)
	}
	return res.buf.Bytes(), res.err
}

// done frees instance i's record and lets another instance begin.
func (run *instances) done(i int) {
	run.results[i].buf = bytes.Buffer{}
	<-run.window
}

// stop ends the goroutines (an error or the end of the request) and waits
// for them.
func (run *instances) stop() {
	run.once.Do(func() {
		run.cancel() // a goroutine waiting for room in the window sees it too
		run.wg.Wait()
	})
}

// enterClient counts a request of r's client, refusing it with 429 past
// ClientLimit.
func (s *Server) enterClient(r *http.Request) *httpError {
	if s.opt.ClientLimit == 0 {
		return nil
	}
	host := clientOf(r)
	s.clientsMu.Lock()
	defer s.clientsMu.Unlock()
	if s.clients[host] >= s.opt.ClientLimit {
		s.metrics.refused.Add(1)
		return errorf(http.StatusTooManyRequests, "too many requests from %s: %d running or waiting (-client-limit); retry later", host, s.clients[host])
	}
	s.clients[host]++
	return nil
}

// leaveClient ends enterClient's count.
func (s *Server) leaveClient(r *http.Request) {
	if s.opt.ClientLimit == 0 {
		return
	}
	host := clientOf(r)
	s.clientsMu.Lock()
	if s.clients[host]--; s.clients[host] <= 0 {
		delete(s.clients, host)
	}
	s.clientsMu.Unlock()
}

// clientOf is the client's address without its port.
func clientOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
