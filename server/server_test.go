package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/whitebox-lstm/whitebox/score"
)

// testModels are the models the tests serve: a white-box network, a
// bidirectional two-layer LSTM, a one-layer LSTM (cd), a model of
// feature rows, a GRU checked by -verify.
func testModels(t testing.TB) []Model {
	t.Helper()
	var ms []Model
	for _, spec := range []string{"sp-fsa", "counter=sp-counter,u=0.7"} {
		m, err := ParseNet(spec)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	for _, spec := range []string{
		"bi=../model/testdata/bi2.safetensors",
		"uni=../model/testdata/uni1.safetensors,head=hn",
		"dense=../model/testdata/dense_bi1.safetensors",
		"gru=../model/testdata/gru/gru_hn_uni1.safetensors,head=auto,verify=../model/testdata/gru/gru_hn_uni1.verify.jsonl",
	} {
		m, err := ParseModel(spec)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	return ms
}

// testServer serves opt on a loopback port until the test ends (or stop
// is called), and returns its base URL.
type testServer struct {
	*Server
	url  string
	stop func() error // SIGTERM: Serve's result
}

func startServer(t testing.TB, opt Options, grace time.Duration) *testServer {
	t.Helper()
	if opt.Models == nil {
		opt.Models = testModels(t)
	}
	if opt.Log == nil {
		opt.Log = log.New(io.Discard, "", 0)
	}
	s, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln, grace) }()
	var once sync.Once
	var result error
	stop := func() error {
		once.Do(func() {
			cancel()
			result = <-done
		})
		return result
	}
	t.Cleanup(func() { stop() })
	return &testServer{Server: s, url: "http://" + ln.Addr().String(), stop: stop}
}

// post sends body to path and returns the status, headers and body.
func post(t testing.TB, c *http.Client, url, accept, body string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// cliLines are the lines `whitebox attribute -format json` writes for the
// inputs with cfg (score.New and Line: the command's code path).
func cliLines(t testing.TB, cfg score.Config, inputs []string) []string {
	t.Helper()
	cfg.Workers = 1
	s, err := score.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, in := range inputs {
		var b bytes.Buffer
		if err := s.Line(context.Background(), in, &b); err != nil {
			t.Fatalf("%s %q: %v", cfg.Method, in, err)
		}
		lines = append(lines, b.String())
	}
	return lines
}

// An explainCase is a request and the attribute flags that give the same
// records.
type explainCase struct {
	model     string
	instances string // JSON array
	inputs    []string
	params    string // JSON object
	flags     func(*score.Config)
}

func setFlag(cfg *score.Config, name string) {
	if cfg.Set == nil {
		cfg.Set = map[string]bool{}
	}
	cfg.Set[name] = true
}

func explainCases() []explainCase {
	long := strings.Repeat("3 14 15 9 2 6 5 35 ", 40) // 320 tokens
	longIDs := "[" + strings.Join(strings.Fields(long), ",") + "]"
	return []explainCase{
		{"sp-fsa", `["aacb","abcd"]`, []string{"aacb", "abcd"}, `{"method":"ig"}`, func(c *score.Config) { c.Method = "ig" }},
		{"sp-fsa", `["aacb"]`, []string{"aacb"}, `{"method":"lrp","class":0}`, func(c *score.Config) { c.Method, c.Class = "lrp", "0"; setFlag(c, "class") }},
		{"counter", `["accb"]`, []string{"accb"}, `{"method":"cd","span":"0:1"}`, func(c *score.Config) { c.Method, c.Span = "cd", "0:1" }},
		{"counter", `["accbab"]`, []string{"accbab"}, `{"method":"ig","class":"all","steps":"auto"}`, func(c *score.Config) { c.Method, c.Class, c.Steps = "ig", "all", "auto" }},
		{"bi", `["3 14 15",[9,2,6,5,35]]`, []string{"3 14 15", "9 2 6 5 35"}, `{"method":"ig","steps":20,"baseline":"id:0"}`, func(c *score.Config) {
			c.Method, c.Steps, c.Baseline = "ig", "20", "id:0"
			setFlag(c, "steps")
			setFlag(c, "baseline")
		}},
		{"bi", `["7 7 30 1"]`, []string{"7 7 30 1"}, `{"method":"deeplift","features":true}`, func(c *score.Config) { c.Method, c.Features = "deeplift", true; setFlag(c, "features") }},
		{"bi", `[` + longIDs + `]`, []string{strings.Join(strings.Fields(long), " ")}, `{"method":"saliency"}`, func(c *score.Config) { c.Method = "saliency" }},
		{"uni", `["3 14 15"]`, []string{"3 14 15"}, `{"method":"cd","span":"1:2"}`, func(c *score.Config) { c.Method, c.Span = "cd", "1:2" }},
		{"uni", `["3 14 15 0 9"]`, []string{"3 14 15 0 9"}, `{"method":"occlusion","captum_weights":false}`, func(c *score.Config) {
			c.Method, c.CaptumWeights = "occlusion", false
			setFlag(c, "captum-weights")
		}},
		{"dense", `[[[1,2,3,4,5,6,7],[0.5,0,0,0,0,0,-1]]]`, []string{"[[1,2,3,4,5,6,7],[0.5,0,0,0,0,0,-1]]"}, `{"method":"gxi"}`, func(c *score.Config) { c.Method = "gxi" }},
		{"gru", `["1 2 3 4"]`, []string{"1 2 3 4"}, `{"method":"lrp","eps":0.01}`, func(c *score.Config) { c.Method, c.Eps = "lrp", 0.01; setFlag(c, "eps") }},
	}
}

// modelConfig is the Config of a test model by name.
func modelConfig(t testing.TB, name string) score.Config {
	for _, m := range testModels(t) {
		if m.Name == name {
			cfg := m.Config
			set := map[string]bool{}
			for k, v := range cfg.Set {
				set[k] = v
			}
			cfg.Set = set
			return cfg
		}
	}
	t.Fatalf("no model %s", name)
	return score.Config{}
}

// expected is the CLI's records of a case.
func (c explainCase) expected(t testing.TB) []string {
	cfg := modelConfig(t, c.model)
	c.flags(&cfg)
	return cliLines(t, cfg, c.inputs)
}

// TestExplainMatchesCLI: every record of :explain is the line `whitebox
// attribute -format json` writes for the same input and options, to the
// byte, in a response and in a stream.
func TestExplainMatchesCLI(t *testing.T) {
	ts := startServer(t, Options{}, 10*time.Second)
	c := &http.Client{Timeout: time.Minute}
	for i, ec := range explainCases() {
		want := ec.expected(t)
		body := `{"instances":` + ec.instances + `,"parameters":` + ec.params + `}`
		code, _, got := post(t, c, ts.url+"/v1/models/"+ec.model+":explain", "", body)
		wantBody := responseOf(want)
		if code != 200 || string(got) != wantBody {
			t.Errorf("case %d (%s %s): %d\n%s\nwant\n%s", i, ec.model, ec.params, code, got, wantBody)
		}
		code, h, got := post(t, c, ts.url+"/v1/models/"+ec.model+":explain", ndjson, body)
		if code != 200 || string(got) != strings.Join(want, "") || h.Get("Content-Type") != ndjson {
			t.Errorf("case %d (%s %s) streamed: %d %s\n%s\nwant\n%s", i, ec.model, ec.params, code, h.Get("Content-Type"), got, strings.Join(want, ""))
		}
	}
}

func TestPredict(t *testing.T) {
	ts := startServer(t, Options{}, 10*time.Second)
	c := &http.Client{Timeout: time.Minute}
	code, _, got := post(t, c, ts.url+"/v1/models/sp-fsa:predict", "", `{"instances":["aacb","dd"]}`)
	var resp struct {
		Predictions []struct {
			Input      string             `json:"input"`
			Prediction string             `json:"prediction"`
			Logits     map[string]float64 `json:"logits"`
		} `json:"predictions"`
	}
	if err := json.Unmarshal(got, &resp); code != 200 || err != nil || len(resp.Predictions) != 2 {
		t.Fatalf("%d %s: %v", code, got, err)
	}
	// The logits and the prediction of the records.
	cfg := modelConfig(t, "sp-fsa")
	cfg.Method = "saliency"
	for i, line := range cliLines(t, cfg, []string{"aacb", "dd"}) {
		var rec struct {
			Prediction string             `json:"prediction"`
			Logits     map[string]float64 `json:"logits"`
		}
		json.Unmarshal([]byte(line), &rec)
		p := resp.Predictions[i]
		if p.Prediction != rec.Prediction || fmt.Sprint(p.Logits) != fmt.Sprint(rec.Logits) {
			t.Errorf("prediction %d: %+v, want %+v", i, p, rec)
		}
	}
	if code, _, got := post(t, c, ts.url+"/v1/models/sp-fsa:predict", "", `{"instances":["ab"],"parameters":{"method":"ig"}}`); code != 400 {
		t.Errorf(":predict with a method: %d %s", code, got)
	}
}

func TestMetadata(t *testing.T) {
	ts := startServer(t, Options{}, 10*time.Second)
	get := func(path string) (int, string) {
		resp, err := http.Get(ts.url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, b := get("/v1/models"); code != 200 || b != `{"models":["bi","counter","dense","gru","sp-fsa","uni"]}`+"\n" {
		t.Errorf("/v1/models: %d %s", code, b)
	}
	for path, want := range map[string]string{
		"/v1/models/gru":    `"layers":"gru","bidirectional":false,"head":"hn","head_source":"verified"`,
		"/v1/models/bi":     `"layers":"lstm","bidirectional":true,"head":"hn","head_source":"default","classes":["0","1","2","3"],"vocab_size":40`,
		"/v1/models/uni":    `"head_source":"options"`,
		"/v1/models/sp-fsa": `"net":"sp-fsa"`,
		"/healthz":          `{"status":"ok"}`,
		"/readyz":           `{"status":"ready"}`,
	} {
		if code, b := get(path); code != 200 || !strings.Contains(b, want) {
			t.Errorf("%s: %d %s, want %s", path, code, b, want)
		}
	}
	if code, b := get("/v1/models/nope"); code != 404 || !strings.Contains(b, `"error":"unknown model \"nope\"`) {
		t.Errorf("unknown model: %d %s", code, b)
	}
	post(t, http.DefaultClient, ts.url+"/v1/models/sp-fsa:explain", "", `{"instances":["ab"],"parameters":{"method":"ig"}}`)
	code, b := get("/metrics")
	for _, want := range []string{`whitebox_requests_total{model="sp-fsa",method="ig",code="200"} 1`, "whitebox_request_duration_seconds_count{endpoint=\"explain\"} 1",
		"whitebox_requests_in_flight 0", "whitebox_requests_queued 0", "whitebox_budget_bytes_in_use "} {
		if code != 200 || !strings.Contains(b, want) {
			t.Errorf("/metrics: %d, lacks %q:\n%s", code, want, b)
		}
	}
}

// TestRefusals: each bad request gets its status and a JSON error that
// says why.
func TestRefusals(t *testing.T) {
	ts := startServer(t, Options{MaxBody: 4096, MaxInstances: 3, MaxTokens: 50, MaxSteps: 100}, 10*time.Second)
	c := &http.Client{Timeout: time.Minute}
	for _, r := range []struct {
		path, body string
		code       int
		msg        string
	}{
		{"bi:explain", `{"instances":["1 2"],"parameters":{"method":"ig"` + strings.Repeat(" ", 5000) + `}}`, 413, "more than the 4096"},
		{"bi:explain", `{"instances":["1 2"],"parameters":{"method":"ig"`, 400, "truncated JSON: the body ends after byte 48 (line 1, column 48), inside a value"},
		{"bi:explain", "{\"instances\":[\"1 2\"],\n \"parameters\":{\"method\":ig}}", 400, "malformed JSON at byte 47 (line 2, column 25)"},
		{"bi:explain", `{"instances":["1 2"],"parameters":{"method":"ig","step":3}}`, 400, `parameters: unknown field "step"`},
		{"bi:explain", `{"instances":"1 2","parameters":{"method":"ig"}}`, 400, "instances at byte"},
		{"bi:explain", `{"instances":["1 2"]} {}`, 400, "unexpected data after the JSON object at byte 23"},
		{"bi:explain", ``, 400, "empty body"},
		{"bi:explain", `{"instances":["1 2"]}`, 400, "parameters.method is required"},
		{"bi:explain", `{"instances":[[1,"a"]],"parameters":{"method":"ig"}}`, 400, "instances[0]: element 1: the elements mix kinds"},
		{"bi:explain", `{"instances":[[1.5]],"parameters":{"method":"ig"}}`, 400, "not an integer token id"},
		{"bi:explain", `{"instances":["1 2 99"],"parameters":{"method":"ig"}}`, 400, "instances[0]: "},
		{"bi:explain", `{"instances":["1","2","3","4"],"parameters":{"method":"ig"}}`, 413, "4 instances, more than the 3"},
		{"bi:explain", `{"instances":["` + strings.Repeat("1 ", 51) + `"],"parameters":{"method":"ig"}}`, 413, "51 tokens, more than the 50"},
		{"bi:explain", `{"instances":["1 2"],"parameters":{"method":"ig","steps":101}}`, 400, "parameters.steps 101: more than the 100"},
		{"bi:explain", `{"instances":["1 2"],"parameters":{"method":"ig","steps":"auto"}}`, 400, "parameters.max_steps 4096: more than the 100"},
		{"bi:explain", `{"instances":["1 2"],"parameters":{"method":"ig","steps":0}}`, 400, "parameters.steps 0 must be auto or in 1.."},
		{"bi:explain", `{"instances":["1 2"],"parameters":{"method":"cd"}}`, 400, "contextual decomposition is for one-layer"},
		{"bi:explain", `{"instances":["1 2"],"parameters":{"method":"nope"}}`, 400, "nope"},
		{"bi:explain", `{"instances":["1 2"],"parameters":{"method":"ig","class":"x"}}`, 400, `unknown class "x"`},
		{"bi:explain", `{"instances":["1 2"],"parameters":{"method":"ig","timeout":"soon"}}`, 400, "parameters.timeout"},
		{"sp-fsa:explain", `{"instances":["ab"],"parameters":{"method":"ig","features":true}}`, 400, "applies to -model only"},
		{"nope:explain", `{"instances":["1"]}`, 404, `unknown model "nope"`},
		{"bi:train", `{"instances":["1"]}`, 404, "no such endpoint"},
	} {
		code, h, got := post(t, c, ts.url+"/v1/models/"+r.path, "", r.body)
		var e struct {
			Error string `json:"error"`
			ID    string `json:"request_id"`
		}
		err := json.Unmarshal(got, &e)
		if code != r.code || err != nil || !strings.Contains(e.Error, r.msg) || e.ID == "" || h.Get("Content-Type") != "application/json" {
			t.Errorf("%s %.60q: %d %s, want %d with %q", r.path, r.body, code, got, r.code, r.msg)
		}
	}
	// A GET of a POST endpoint, a POST of a GET one.
	resp, err := http.Get(ts.url + "/v1/models/bi:explain")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 && resp.StatusCode != 405 {
		t.Errorf("GET :explain: %d", resp.StatusCode)
	}
	if code, h, _ := post(t, c, ts.url+"/healthz", "", ""); code != 405 || h.Get("Allow") != "GET" {
		t.Errorf("POST /healthz: %d, Allow %q", code, h.Get("Allow"))
	}
}

// TestToken: with a token every endpoint but /healthz and /readyz needs
// it.
func TestToken(t *testing.T) {
	ts := startServer(t, Options{Token: "s3cret"}, 10*time.Second)
	do := func(path, token string) int {
		req, _ := http.NewRequest("GET", ts.url+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for path, want := range map[string][3]int{
		"/v1/models": {401, 401, 200}, "/v1/models/bi": {401, 401, 200}, "/metrics": {401, 401, 200},
		"/healthz": {200, 200, 200}, "/readyz": {200, 200, 200},
	} {
		if got := [3]int{do(path, ""), do(path, "s3cre"), do(path, "s3cret")}; got != want {
			t.Errorf("%s: %v, want %v (none, wrong, right)", path, got, want)
		}
	}
}

// TestPanic: a panic in one request is its 500, logged with its id; the
// server goes on.
func TestPanic(t *testing.T) {
	var logBuf syncBuffer
	ts := startServer(t, Options{Log: log.New(&logBuf, "", 0)}, 10*time.Second)
	ts.testHook = func(r *http.Request) {
		if strings.Contains(r.URL.Path, "bi:") {
			panic("boom")
		}
	}
	code, h, got := post(t, http.DefaultClient, ts.url+"/v1/models/bi:explain", "", `{"instances":["1"],"parameters":{"method":"ig"}}`)
	id := h.Get("X-Request-Id")
	if code != 500 || !strings.Contains(string(got), id) || !strings.Contains(logBuf.String(), "request "+id) || !strings.Contains(logBuf.String(), "panic: boom") {
		t.Errorf("panic: %d %s, log %s", code, got, logBuf.String())
	}
	if code, _, got := post(t, http.DefaultClient, ts.url+"/v1/models/sp-fsa:explain", "", `{"instances":["ab"],"parameters":{"method":"ig"}}`); code != 200 {
		t.Errorf("after the panic: %d %s", code, got)
	}
	if st := ts.Pool().Stats(); st.Running != 0 || ts.metrics.inflight.Load() != 0 {
		t.Errorf("after the panic: %+v, in flight %d", st, ts.metrics.inflight.Load())
	}
}

// syncBuffer is a bytes.Buffer for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls cond every few milliseconds for at most d.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// slowBody is a request that runs for seconds: IG with many steps on a
// long input of the bidirectional model.
func slowBody(extra string) string {
	return `{"instances":["` + strings.TrimSpace(strings.Repeat("3 14 15 9 2 6 5 35 ", 250)) + `"],"parameters":{"method":"ig","steps":4000` + extra + `}}`
}

// startSlow sends slowBody to ts in the background and returns once its
// call runs in the pool: cancel disconnects the client, errc receives the
// client's error.
func startSlow(t *testing.T, ts *testServer) (cancel context.CancelFunc, errc <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.url+"/v1/models/bi:explain", strings.NewReader(slowBody("")))
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	waitFor(t, 20*time.Second, "the slow call never ran", func() bool { return ts.Pool().Stats().Running == 1 })
	return cancel, done
}

// TestDisconnect: a client that goes away mid-request cancels its work;
// the pool's cores and memory come back.
func TestDisconnect(t *testing.T) {
	ts := startServer(t, Options{MaxTokens: 5000}, 10*time.Second)
	cancel, errc := startSlow(t, ts)
	t0 := time.Now()
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("the request finished before it was cancelled")
	}
	waitFor(t, 5*time.Second, "the call kept running", func() bool {
		st := ts.Pool().Stats()
		return st.Running == 0 && st.BusyWorkers == 0 && ts.metrics.inflight.Load() == 0
	})
	t.Logf("stopped %v after the disconnect", time.Since(t0))
	if err := ts.Pool().Release(); err != nil {
		t.Fatal(err)
	}
	if st := ts.Pool().Stats(); st.ReservedBytes != 0 {
		t.Errorf("after the disconnect and Release: %d bytes reserved", st.ReservedBytes)
	}
}

// TestDeadline: a request's own timeout stops its work (504); the memory
// comes back.
func TestDeadline(t *testing.T) {
	ts := startServer(t, Options{MaxTokens: 5000}, 10*time.Second)
	t0 := time.Now()
	code, _, got := post(t, http.DefaultClient, ts.url+"/v1/models/bi:explain", "", slowBody(`,"timeout":"200ms"`))
	if code != 504 || !strings.Contains(string(got), "deadline") {
		t.Errorf("timeout 200ms: %d %s", code, got)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("answered after %v", d)
	}
	waitFor(t, 5*time.Second, "the call kept running", func() bool { return ts.Pool().Stats().Running == 0 })
}

// TestSlowHeaders: a client that never finishes its headers is cut off
// after the header timeout.
func TestSlowHeaders(t *testing.T) {
	ts := startServer(t, Options{ReadHeaderTimeout: 200 * time.Millisecond}, 10*time.Second)
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "POST /v1/models/bi:explain HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	t0 := time.Now()
	b, err := io.ReadAll(conn)
	if d := time.Since(t0); err != nil || d > 3*time.Second {
		t.Errorf("the slow client was kept %v: %v %q", d, err, b)
	}
}

// responseOf is the body of :explain whose records are the lines.
func responseOf(lines []string) string {
	recs := make([]string, len(lines))
	for i, l := range lines {
		recs[i] = strings.TrimSuffix(l, "\n")
	}
	return `{"explanations":[` + strings.Join(recs, ",") + "]}\n"
}
