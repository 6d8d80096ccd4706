package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/whitebox-lstm/whitebox/score"
)

// TestClientLimit: past -client-limit a client's request is answered 429
// with Retry-After; its count comes back when its requests end.
func TestClientLimit(t *testing.T) {
	ts := startServer(t, Options{MaxTokens: 5000, Workers: 1, ClientLimit: 1}, 10*time.Second)
	cancel, errc := startSlow(t, ts)
	code, h, body := post(t, http.DefaultClient, ts.url+"/v1/models/sp-fsa:explain", "", `{"instances":["ab"],"parameters":{"method":"lrp"}}`)
	if code != http.StatusTooManyRequests || h.Get("Retry-After") == "" || !strings.Contains(string(body), "-client-limit") {
		t.Errorf("a second request of the client: %d %q %s", code, h.Get("Retry-After"), body)
	}
	cancel()
	<-errc
	waitFor(t, 20*time.Second, "the client's count never came back", func() bool {
		ts.clientsMu.Lock()
		defer ts.clientsMu.Unlock()
		return len(ts.clients) == 0
	})
	if code, _, body := post(t, http.DefaultClient, ts.url+"/v1/models/sp-fsa:explain", "", `{"instances":["ab"],"parameters":{"method":"lrp"}}`); code != http.StatusOK {
		t.Errorf("after the first ended: %d %s", code, body)
	}
	if _, err := New(Options{Models: testModels(t), ClientLimit: -1}); err == nil {
		t.Error("-client-limit -1 accepted")
	}
}

// TestInstancesSideBySide: the instances of one request run on the free
// slots at once (two calls running in the pool of two workers), and the
// records, streamed or not, are the CLI's in input order.
func TestInstancesSideBySide(t *testing.T) {
	// A deadline for emulated arm64 (qemu) too; -short: lighter inputs.
	ts := startServer(t, Options{MaxTokens: 5000, Workers: 2, Timeout: 10 * time.Minute}, 10*time.Second)
	repeats, step, steps := 20, 10, "100"
	if testing.Short() {
		repeats, step, steps = 10, 5, "50"
	}
	var inputs []string
	for i := range 6 {
		inputs = append(inputs, strings.TrimSpace(strings.Repeat(fmt.Sprintf("%d 14 15 9 2 ", 3+i), repeats+step*i)))
	}
	in, _ := json.Marshal(inputs)
	body := `{"instances":` + string(in) + `,"parameters":{"method":"ig","steps":` + steps + `}}`
	want := cliLines(t, func() score.Config {
		c := score.DefaultConfig()
		c.Model, c.Method, c.Steps = "../model/testdata/bi2.safetensors", "ig", steps
		return c
	}(), inputs)
	for i := range want {
		want[i] = strings.TrimSuffix(want[i], "\n")
	}
	for _, accept := range []string{"", ndjson} {
		both := make(chan bool, 1)
		stopWatch := make(chan struct{})
		go func() { // bounded: it ends with the request
			seen := false
			for !seen {
				select {
				case <-stopWatch:
					both <- false
					return
				case <-time.After(100 * time.Microsecond):
					seen = ts.Pool().Stats().Running == 2
				}
			}
			both <- true
		}()
		code, _, got := post(t, http.DefaultClient, ts.url+"/v1/models/bi:explain", accept, body)
		close(stopWatch)
		if code != http.StatusOK {
			t.Fatalf("accept %q: %d %s", accept, code, got)
		}
		var lines []string
		if accept == ndjson {
			lines = strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
		} else {
			var doc struct{ Explanations []json.RawMessage }
			if err := json.Unmarshal(got, &doc); err != nil {
				t.Fatal(err)
			}
			for _, r := range doc.Explanations {
				lines = append(lines, string(r))
			}
		}
		if len(lines) != len(want) {
			t.Fatalf("accept %q: %d records, want %d", accept, len(lines), len(want))
		}
		for i := range want {
			if lines[i] != want[i] {
				k := 0
				for k < min(len(lines[i]), len(want[i])) && lines[i][k] == want[i][k] {
					k++
				}
				t.Errorf("accept %q: record %d is not the CLI's from byte %d (lengths %d, %d): %q", accept, i, k, len(lines[i]), len(want[i]), want[i][max(0, k-80):])
			}
		}
		if !<-both && runtime.GOMAXPROCS(0) >= 2 { // one core: one call at a time
			t.Errorf("accept %q: the instances never ran two at once", accept)
		}
	}
	if used, _ := ts.mem.inUse(); used != 0 {
		t.Errorf("%d request bytes still held", used)
	}
}

// TestResponseBudget: a response held whole counts against the requests'
// half of -budget: past a request's share it is refused with 413 naming
// the streamed form, which then answers; every byte comes back.
func TestResponseBudget(t *testing.T) {
	ts := startServer(t, Options{Budget: "1MiB", Workers: 1, MaxInstances: 150}, 10*time.Second)
	var inputs []string
	for range 120 { // 120 records of about 2.6 KB to hold, 2× counted: past the 512 KiB share
		inputs = append(inputs, strings.TrimSpace(strings.Repeat("3 14 15 9 2 ", 16)))
	}
	in, _ := json.Marshal(inputs)
	body := `{"instances":` + string(in) + `,"parameters":{"method":"saliency"}}`
	code, _, got := post(t, http.DefaultClient, ts.url+"/v1/models/bi:explain", "", body)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(string(got), ndjson) {
		t.Errorf("a response past the share: %d %.300s", code, got)
	}
	code, _, got = post(t, http.DefaultClient, ts.url+"/v1/models/bi:explain", ndjson, body)
	if n := strings.Count(string(got), "\n"); code != http.StatusOK || n != len(inputs) {
		t.Errorf("streamed: %d, %d lines", code, n)
	}
	used, peak := ts.mem.inUse()
	if used != 0 || peak == 0 || peak > ts.mem.cap {
		t.Errorf("request bytes: %d held after, peak %d of %d", used, peak, ts.mem.cap)
	}
}
