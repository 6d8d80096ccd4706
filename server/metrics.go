package server

import (
	"bytes"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// latencyBuckets are the upper bounds, in seconds, of the latency
// histogram.
var latencyBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// metrics are the counters of /metrics (Prometheus text format).
type metrics struct {
	inflight atomic.Int64 // model requests being answered
	refused  atomic.Int64 // requests refused for a full queue

	mu       sync.Mutex
	requests map[reqKey]int64 // by model, method, status
	hist     map[string]*histogram
}

// reqKey labels a request: its model, its method ("predict", or the
// attribution method) and its status.
type reqKey struct {
	model, method string
	code          int
}

type histogram struct {
	counts []int64 // per bucket, then +Inf
	sum    float64
	n      int64
}

func newMetrics() *metrics {
	return &metrics{requests: map[reqKey]int64{}, hist: map[string]*histogram{}}
}

// observe counts a request and its latency.
func (m *metrics) observe(model, method string, code int, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests[reqKey{model, method, code}]++
	kind := "explain"
	if method == "predict" {
		kind = "predict"
	}
	h := m.hist[kind]
	if h == nil {
		h = &histogram{counts: make([]int64, len(latencyBuckets)+1)}
		m.hist[kind] = h
	}
	sec := d.Seconds()
	i := sort.SearchFloat64s(latencyBuckets, sec)
	h.counts[i]++
	h.sum += sec
	h.n++
}

// label quotes a label value as Prometheus' text format does.
func label(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// serveMetrics is GET /metrics.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	var b bytes.Buffer
	m := s.metrics
	m.mu.Lock()
	keys := make([]reqKey, 0, len(m.requests))
	for k := range m.requests {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, c := keys[i], keys[j]
		if a.model != c.model {
			return a.model < c.model
		}
		if a.method != c.method {
			return a.method < c.method
		}
		return a.code < c.code
	})
	b.WriteString("# HELP whitebox_requests_total Requests to :predict and :explain, by model, method (predict or the attribution method) and status.\n# TYPE whitebox_requests_total counter\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "whitebox_requests_total{model=%s,method=%s,code=\"%d\"} %d\n", label(k.model), label(k.method), k.code, m.requests[k])
	}
	b.WriteString("# HELP whitebox_request_duration_seconds Time to answer :predict and :explain requests.\n# TYPE whitebox_request_duration_seconds histogram\n")
	for _, kind := range []string{"explain", "predict"} {
		h := m.hist[kind]
		if h == nil {
			continue
		}
		cum := int64(0)
		for i, le := range latencyBuckets {
			cum += h.counts[i]
			fmt.Fprintf(&b, "whitebox_request_duration_seconds_bucket{endpoint=%q,le=%q} %d\n", kind, strconv.FormatFloat(le, 'g', -1, 64), cum)
		}
		cum += h.counts[len(latencyBuckets)]
		fmt.Fprintf(&b, "whitebox_request_duration_seconds_bucket{endpoint=%q,le=\"+Inf\"} %d\n", kind, cum)
		fmt.Fprintf(&b, "whitebox_request_duration_seconds_sum{endpoint=%q} %s\n", kind, strconv.FormatFloat(h.sum, 'g', -1, 64))
		fmt.Fprintf(&b, "whitebox_request_duration_seconds_count{endpoint=%q} %d\n", kind, h.n)
	}
	m.mu.Unlock()
	st := s.pool.Stats()
	gauge := func(name, help string, v int64) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n%s %d\n", name, help, name, name, v)
	}
	counter := func(name, help string, v int64) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s counter\n%s %d\n", name, help, name, name, v)
	}
	gauge("whitebox_requests_in_flight", "Requests to :predict and :explain being answered.", m.inflight.Load())
	gauge("whitebox_requests_queued", "Requests waiting for a slot (-workers), and attribution calls waiting for a core or memory in the pool.", s.waiting.Load()+int64(st.Waiting))
	counter("whitebox_requests_refused_total", "Requests refused with 503 because -queue requests were waiting.", m.refused.Load()+st.Refused)
	gauge("whitebox_budget_bytes", "The engines' memory budget (-budget / 2; the other half bounds the inputs).", st.Budget)
	gauge("whitebox_budget_bytes_in_use", "Engine memory held by running calls and by the scratch kept warm between them.", st.ReservedBytes)
	used, _ := s.mem.inUse()
	gauge("whitebox_request_bytes", "The requests' half of -budget: their bodies, instances and held responses.", s.mem.cap)
	gauge("whitebox_request_bytes_in_use", "Bytes of that half held by the requests now.", used)
	gauge("whitebox_workers", "The cores the attribution pool shares.", int64(st.Workers))
	gauge("whitebox_workers_busy", "Cores held by running attribution calls.", int64(st.BusyWorkers))
	gauge("whitebox_calls_running", "Attribution calls running.", int64(st.Running))
	counter("whitebox_calls_total", "Attribution calls admitted by the pool.", st.Calls)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Write(b.Bytes())
}
