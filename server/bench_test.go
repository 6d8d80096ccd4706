package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/model"
	"github.com/whitebox-lstm/whitebox/score"
)

// BenchmarkServe measures requests per second and the latency's p50 and
// p99 of IG (50 Gauss–Legendre steps) on the two-layer bidirectional
// model (model/testdata/bi2.safetensors), short (20 tokens) and long (800
// tokens) inputs, with 1, 8 and 64 concurrent clients, served three ways:
//
//   - engine=server: :explain over loopback, the default workers and a
//     queue that holds every client;
//   - engine=library: the same attributions in process, on one
//     attrib.Pool of the machine's cores with the server's engine budget
//     (half of -budget's default; docs/library.md), without the records'
//     formatting;
//   - engine=cli: one `whitebox attribute` process per request (built
//     once into a temporary directory), the input on its command line.
//
// go test ./server -run '^$' -bench Serve -benchtime 64x (a count of
// requests; every client sends its share).
func BenchmarkServe(b *testing.B) {
	inputs := map[string]string{"short": tokenIDs(20), "long": tokenIDs(800)}
	ts := startServer(b, Options{Queue: 128, MaxTokens: 1000}, 10*time.Second)
	m, err := model.Load("../model/testdata/bi2.safetensors", model.Options{})
	if err != nil {
		b.Fatal(err)
	}
	// The library's pool gets what the server's engines get: half of its
	// default budget.
	budget, err := score.ParseSize(DefaultBudget)
	if err != nil {
		b.Fatal(err)
	}
	pool, err := attrib.NewPool(attrib.PoolOptions{Budget: budget / 2})
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	var bin string // the CLI, built on first use (into the parent's directory, kept till its end)
	parent := b
	for _, size := range []string{"short", "long"} {
		ids := inputs[size]
		x, err := m.Embed(intIDs(ids))
		if err != nil {
			b.Fatal(err)
		}
		body := `{"instances":["` + ids + `"],"parameters":{"method":"ig"}}`
		for _, engine := range []string{"server", "library", "cli"} {
			for _, clients := range []int{1, 8, 64} {
				b.Run(fmt.Sprintf("input=%s/engine=%s/clients=%d", size, engine, clients), func(b *testing.B) {
					var do func() error
					switch engine {
					case "server":
						tr := &http.Transport{MaxIdleConnsPerHost: clients}
						defer tr.CloseIdleConnections()
						c := &http.Client{Transport: tr}
						do = func() error { return explain(c, ts.url+"/v1/models/bi:explain", body) }
					case "library":
						do = func() error {
							var res attrib.Result
							return pool.Attribute(context.Background(), m, attrib.IntegratedGradients, x, attrib.DefaultOptions(), &res)
						}
					case "cli":
						if bin == "" {
							bin = buildCLI(parent)
						}
						do = func() error {
							out, err := exec.Command(bin, "attribute", "-model", "../model/testdata/bi2.safetensors", "-method", "ig", ids).CombinedOutput()
							if err != nil {
								return fmt.Errorf("%v: %s", err, out)
							}
							return nil
						}
					}
					drive(b, clients, do)
				})
			}
		}
	}
}

// drive runs b.N calls of do from clients goroutines and reports the
// calls per second and the latency's p50 and p99.
func drive(b *testing.B, clients int, do func() error) {
	lat := make([]time.Duration, b.N)
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= b.N {
					return
				}
				t0 := time.Now()
				if err := do(); err != nil {
					b.Error(err)
					return
				}
				lat[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(lat[b.N/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[min(b.N-1, b.N*99/100)].Microseconds())/1000, "p99-ms")
}

// explain posts one :explain request and reads its answer.
func explain(c *http.Client, url, body string) error {
	resp, err := c.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// buildCLI builds whitebox into a temporary directory.
func buildCLI(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "whitebox")
	cmd := exec.Command("go", "build", "-o", bin, "../cmd/whitebox")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		b.Skipf("building the CLI: %v", err)
	}
	return bin
}

// tokenIDs is an input of n token ids of the bi2 model (vocabulary 40).
func tokenIDs(n int) string {
	var s strings.Builder
	for i := range n {
		fmt.Fprintf(&s, "%d ", (i*7+3)%40)
	}
	return strings.TrimSpace(s.String())
}

func intIDs(s string) []int {
	var ids []int
	for _, f := range strings.Fields(s) {
		var v int
		fmt.Sscan(f, &v)
		ids = append(ids, v)
	}
	return ids
}
