package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/whitebox-lstm/whitebox/score"
)

// A loadRequest is a request and the bodies a 200 must have.
type loadRequest struct {
	path, body, accept, want string
}

// loadRequests are the explain cases (each as a response and as a
// stream), long inputs among them, and predictions.
func loadRequests(t testing.TB) []loadRequest {
	var reqs []loadRequest
	cases := explainCases()
	long := strings.TrimSpace(strings.Repeat("3 14 15 9 2 6 5 35 ", 100)) // 800 tokens
	cases = append(cases,
		explainCase{"bi", `["` + long + `"]`, []string{long}, `{"method":"lrp"}`, func(c *score.Config) { c.Method = "lrp" }},
		explainCase{"uni", `["` + long + `"]`, []string{long}, `{"method":"ig","steps":16}`, func(c *score.Config) { c.Method, c.Steps = "ig", "16"; setFlag(c, "steps") }},
		explainCase{"sp-fsa", `["` + strings.Repeat("abcd", 200) + `"]`, []string{strings.Repeat("abcd", 200)}, `{"method":"deeplift"}`, func(c *score.Config) { c.Method = "deeplift" }},
	)
	for _, ec := range cases {
		want := ec.expected(t)
		body := `{"instances":` + ec.instances + `,"parameters":` + ec.params + `}`
		path := "/v1/models/" + ec.model + ":explain"
		reqs = append(reqs, loadRequest{path, body, "", responseOf(want)}, loadRequest{path, body, ndjson, strings.Join(want, "")})
	}
	return reqs
}

// doLoad sends r and checks its answer: 200 with the CLI's bytes, or 503
// or 429 with Retry-After. It returns the status, or an error.
func doLoad(ctx context.Context, c *http.Client, url string, r loadRequest) (int, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", url+r.path, strings.NewReader(r.body))
	if err != nil {
		return 0, err
	}
	if r.accept != "" {
		req.Header.Set("Accept", r.accept)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	switch resp.StatusCode {
	case http.StatusOK:
		if string(b) != r.want {
			return 200, fmt.Errorf("%s %.80s: 200 with other bytes:\n%s\nwant\n%s", r.path, r.body, b, r.want)
		}
	case http.StatusServiceUnavailable, http.StatusTooManyRequests:
		if resp.Header.Get("Retry-After") == "" {
			return resp.StatusCode, fmt.Errorf("%s: %d without Retry-After", r.path, resp.StatusCode)
		}
	default:
		return resp.StatusCode, fmt.Errorf("%s %.80s: %d %s", r.path, r.body, resp.StatusCode, b)
	}
	return resp.StatusCode, nil
}

// settleGoroutines waits (a bounded time) for the goroutines to come
// back to base, and fails naming those left.
func settleGoroutines(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines left, %d before:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLoad: many concurrent clients mixing methods, models, long inputs
// and streams, on 2 slots and a queue of 12: every request is answered,
// every 200 is the command's bytes, every refusal a 503 with
// Retry-After, and no goroutine is left when the server stops.
func TestLoad(t *testing.T) {
	reqs := loadRequests(t)
	base := runtime.NumGoroutine()
	ts := startServer(t, Options{Workers: 2, Queue: 12}, 30*time.Second)
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	c := &http.Client{Transport: tr, Timeout: 2 * time.Minute}
	const clients, each = 24, 4
	var wg sync.WaitGroup
	var ok, busy atomic.Int64
	errs := make(chan error, clients*each)
	for g := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				r := reqs[(g*each+i*7)%len(reqs)]
				code, err := doLoad(context.Background(), c, ts.url, r)
				if err != nil {
					errs <- err
					continue
				}
				if code == 200 {
					ok.Add(1)
				} else {
					busy.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d requests: %d answered 200, %d refused 503", clients*each, ok.Load(), busy.Load())
	if ok.Load() == 0 || ok.Load()+busy.Load() != clients*each {
		t.Errorf("%d ok, %d refused of %d", ok.Load(), busy.Load(), clients*each)
	}
	st := ts.Pool().Stats()
	if st.Running != 0 || st.BusyWorkers != 0 || st.Waiting != 0 || ts.waiting.Load() != 0 {
		t.Errorf("after the load: %+v, %d waiting for a slot", st, ts.waiting.Load())
	}
	if err := ts.stop(); err != nil {
		t.Fatal(err)
	}
	tr.CloseIdleConnections()
	settleGoroutines(t, base)
}

// TestShutdownUnderLoad: SIGTERM with requests running and queued: the
// server stops accepting and every request it accepted is answered in
// full.
func TestShutdownUnderLoad(t *testing.T) {
	reqs := loadRequests(t)
	base := runtime.NumGoroutine()
	ts := startServer(t, Options{Workers: 2, Queue: 64}, time.Minute)
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	c := &http.Client{Transport: tr, Timeout: 2 * time.Minute}
	const n = 16
	// Every request is held at its start until all have arrived, so that
	// the signal finds them all accepted, running or queued.
	var arrived atomic.Int64
	gate := make(chan struct{})
	ts.testHook = func(*http.Request) {
		arrived.Add(1)
		<-gate
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := reqs[len(reqs)-1-i%6] // the long inputs and the last cases
			if code, err := doLoad(context.Background(), c, ts.url, r); err != nil || code != 200 {
				errs <- fmt.Errorf("request %d: %d %v", i, code, err)
			}
		}()
	}
	// Every request accepted (in a handler) before the signal.
	waitFor(t, time.Minute, "the requests never all arrived", func() bool { return arrived.Load() == n })
	close(gate)
	if err := ts.stop(); err != nil {
		t.Errorf("shutdown: %v", err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Afterwards nothing is accepted.
	if _, err := doLoad(context.Background(), c, ts.url, reqs[0]); err == nil || !isRefused(err) {
		t.Errorf("after the shutdown: %v", err)
	}
	tr.CloseIdleConnections()
	settleGoroutines(t, base)
}

// isRefused reports whether err is a connection the server did not
// accept.
func isRefused(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "connection refused") || errors.Is(err, context.DeadlineExceeded))
}

// TestShutdownGrace: a request still running at the end of the grace
// period is cut off (its work stops, its memory returns) and Serve says
// so.
func TestShutdownGrace(t *testing.T) {
	ts := startServer(t, Options{MaxTokens: 5000}, 100*time.Millisecond)
	done := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("POST", ts.url+"/v1/models/bi:explain", strings.NewReader(slowBody("")))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	waitFor(t, 20*time.Second, "the call never ran", func() bool { return ts.Pool().Stats().Running == 1 })
	t0 := time.Now()
	err := ts.stop()
	var cut *CutOff
	if !errors.As(err, &cut) || cut.Requests != 1 || !strings.Contains(err.Error(), "1 request(s) cut off") {
		t.Errorf("Serve: %v", err)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("Serve returned %v after the signal", d)
	}
	<-done
	if st := ts.Pool().Stats(); st.Running != 0 || st.ReservedBytes != 0 {
		t.Errorf("after the shutdown: %+v", st)
	}
}
