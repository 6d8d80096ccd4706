package server

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkServe measures requests per second and the latency's p50 and
// p99 with 1, 8 and 64 concurrent clients, each sending :explain
// requests (IG, 50 steps, on 20 tokens of the two-layer bidirectional
// model) over loopback, with the default workers and a queue that holds
// them all.
func BenchmarkServe(b *testing.B) {
	ts := startServer(b, Options{Queue: 128}, 10*time.Second)
	ids := strings.TrimSpace(strings.Repeat("3 14 15 9 2 ", 4))
	body := `{"instances":["` + ids + `"],"parameters":{"method":"ig"}}`
	for _, clients := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			tr := &http.Transport{MaxIdleConnsPerHost: clients}
			defer tr.CloseIdleConnections()
			c := &http.Client{Transport: tr}
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
						req, _ := http.NewRequestWithContext(context.Background(), "POST", ts.url+"/v1/models/bi:explain", strings.NewReader(body))
						resp, err := c.Do(req)
						if err != nil {
							b.Error(err)
							return
						}
						var buf [4096]byte
						for {
							if _, err := resp.Body.Read(buf[:]); err != nil {
								break
							}
						}
						resp.Body.Close()
						if resp.StatusCode != 200 {
							b.Errorf("status %d", resp.StatusCode)
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
		})
	}
}
