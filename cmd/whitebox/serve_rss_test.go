package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/whitebox-lstm/whitebox/score"
)

// serveChildEnv makes this test binary run `whitebox serve` with the
// arguments in it (tab-separated) instead of the tests: a server process
// whose memory a test can read.
const serveChildEnv = "WHITEBOX_TEST_SERVE_ARGS"

func init() {
	if args := os.Getenv(serveChildEnv); args != "" {
		os.Exit(serve(context.Background(), strings.Split(args, "\t"), os.Stderr, nil))
	}
}

// procKB reads a "Name:   N kB" line of /proc/PID/status.
func procKB(t *testing.T, pid int, name string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	m := regexp.MustCompile(`(?m)^` + name + `:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("/proc/%d/status has no %s", pid, name)
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n << 10
}

// TestServeMemoryUnderLoad: a `whitebox serve -budget 64MiB` process under
// load (16 clients, IG on inputs of up to 1,600 tokens, streams, 48-instance
// requests, a queue that refuses some) answers every request with 200,
// 413, 429, 503 or 504 (its 60 s deadline, reached on a slow machine by a
// request that waited behind the long ones), and its peak resident memory (VmHWM) stays within its
// size once the models are loaded plus -budget plus score.MemoryOverhead;
// SIGTERM then ends it with status 0.
func TestServeMemoryUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a server process under load for several seconds")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	const budget = 64 << 20
	args := []string{"-addr", "127.0.0.1:0", "-budget", "64MiB", "-workers", "2", "-queue", "6", "-max-tokens", "2000",
		"-net", "sp-fsa", "-model", "bi=../../model/testdata/bi2.safetensors"}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), serveChildEnv+"="+strings.Join(args, "\t"), "GOMEMLIMIT=")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stderr)
	addr := ""
	for addr == "" && lines.Scan() {
		if _, a, ok := strings.Cut(lines.Text(), "listening on http://"); ok {
			addr = strings.Fields(a)[0]
		}
	}
	if addr == "" {
		t.Fatal("the server never listened")
	}
	var rest strings.Builder
	copied := make(chan struct{})
	go func() { // its later lines, for the end
		io.Copy(&rest, stderr)
		close(copied)
	}()
	pid := cmd.Process.Pid
	idle := procKB(t, pid, "VmRSS")

	ids := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "%d ", (i*7+3)%40)
		}
		return strings.TrimSpace(b.String())
	}
	many := make([]string, 48)
	for i := range many {
		many[i] = ids(60)
	}
	manyJSON, _ := json.Marshal(many)
	bodies := []struct{ model, accept, body string }{
		{"bi", "", `{"instances":["` + ids(1600) + `"],"parameters":{"method":"ig"}}`},
		{"bi", "application/x-ndjson", `{"instances":["` + ids(800) + `","` + ids(400) + `"],"parameters":{"method":"ig","steps":100}}`},
		{"bi", "", `{"instances":` + string(manyJSON) + `,"parameters":{"method":"gxi"}}`},
		{"bi", "", `{"instances":["` + ids(1200) + `"],"parameters":{"method":"deeplift"}}`},
		{"sp-fsa", "", `{"instances":["` + strings.Repeat("abcd", 400) + `"],"parameters":{"method":"occlusion"}}`},
	}
	codes := map[int]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 2 * time.Minute}
	for c := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range 3 {
				b := bodies[(c+r)%len(bodies)]
				req, _ := http.NewRequest("POST", "http://"+addr+"/v1/models/"+b.model+":explain", strings.NewReader(b.body))
				if b.accept != "" {
					req.Header.Set("Accept", b.accept)
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mu.Lock()
				codes[resp.StatusCode]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	peak := procKB(t, pid, "VmHWM")
	for code, n := range codes {
		switch code {
		case 200, 413, 429, 503, 504:
		default:
			t.Errorf("%d answers with status %d", n, code)
		}
	}
	if codes[200] == 0 {
		t.Errorf("no request answered 200: %v", codes)
	}
	limit := idle + budget + score.MemoryOverhead
	t.Logf("statuses %v; resident: idle %.1f MiB, peak %.1f MiB, bound %.1f MiB (idle + -budget 64 MiB + overhead %d MiB)",
		codes, float64(idle)/(1<<20), float64(peak)/(1<<20), float64(limit)/(1<<20), score.MemoryOverhead>>20)
	if peak > limit {
		t.Errorf("peak resident %d bytes, more than idle %d + budget %d + overhead %d", peak, idle, budget, score.MemoryOverhead)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		<-copied
		if err != nil || !strings.Contains(rest.String(), "whitebox serve: stopped") {
			t.Errorf("after SIGTERM: %v (%s)", err, rest.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("SIGTERM did not stop the server")
	}
}
