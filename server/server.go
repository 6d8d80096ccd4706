// Package server is `whitebox serve`: an attribution service over HTTP
// (KServe's V1 protocol) for the classifiers loaded at its start, on one
// scheduler and one memory budget shared by every request.
//
//	GET  /v1/models                 {"models": ["sp-fsa", "m"]}
//	GET  /v1/models/{name}          the model's metadata
//	POST /v1/models/{name}:predict  {"instances": [...]} → {"predictions": [...]}
//	POST /v1/models/{name}:explain  {"instances": [...], "parameters": {...}} → {"explanations": [...]}
//	GET  /healthz, /readyz, /metrics
//
// Each explanation is the record `whitebox attribute -format json` writes
// for the same input and options, byte for byte (package score writes
// both). With "Accept: application/x-ndjson" the records are written one
// per line, in input order, as they finish.
//
// Every attribution runs on one attrib.Pool: the cores and the engine's
// half of the budget. The other half holds the requests' own bytes (their
// bodies, instances and responses; memory.go). A request is admitted when
// one of Workers slots is free, or waits in a queue of at most Queue
// requests; one more is refused with 503 and Retry-After, as is a request
// whose bytes do not fit now, and one past a client's ClientLimit with
// 429. Its instances run side by side on the slots free at the time, on
// a Scorer each, their records written in input order. A request that
// ends (its deadline, its client gone) stops its work and gives its
// memory back.
package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/score"
)

// A Model is a classifier to serve: its name in the URLs and the flags
// that load it (score.Config's -net or -model and their flags).
type Model struct {
	Name   string
	Config score.Config
}

// Options configure a Server. The zero value of each field is its
// default.
type Options struct {
	Models []Model
	// Budget is the memory of every attribution in flight together
	// (attribute's -budget: half for the engines, half for the inputs;
	// default 256MiB).
	Budget string
	// Workers is the number of requests that run at once, each with its
	// share of Budget (default: GOMAXPROCS). The cores are shared by the
	// pool whatever it is.
	Workers int
	// Queue is the number of requests that may wait for a slot (default
	// 64); one more is answered 503 with Retry-After.
	Queue int
	// MaxBody is the largest request body in bytes (default 1 MiB; more:
	// 413).
	MaxBody int64
	// MaxInstances is the most instances of one request (default 64),
	// MaxTokens the most tokens of one instance (default 4096), MaxSteps
	// the most IG steps a request may ask for, its "steps" and
	// "max_steps" (default 4096).
	MaxInstances, MaxTokens, MaxSteps int
	// Timeout is a request's deadline (default 60s); a request's
	// "timeout" parameter may only shorten it.
	Timeout time.Duration
	// ReadHeaderTimeout bounds the time a client may take to send its
	// headers (default 10s); the whole request has ReadTimeout (default
	// 60s).
	ReadHeaderTimeout, ReadTimeout time.Duration
	// ClientLimit is the most requests one client (one remote address)
	// may have running or waiting at once; one more is answered 429 with
	// Retry-After. 0, the default, sets no limit: on loopback, the
	// default address, every client has the same address.
	ClientLimit int
	// Token, when not empty, is the bearer token every request but
	// /healthz and /readyz must carry (Authorization: Bearer TOKEN).
	Token string
	// Log receives a line per failed request (5xx) and per panic, with
	// its request id (nil: the standard logger).
	Log *log.Logger
}

// The defaults of Options.
const (
	DefaultBudget       = "256MiB"
	DefaultQueue        = 64
	DefaultMaxBody      = 1 << 20
	DefaultMaxInstances = 64
	DefaultMaxTokens    = 4096
	DefaultMaxSteps     = 4096
	DefaultTimeout      = 60 * time.Second
)

// served is one model being served.
type served struct {
	name string
	c    *score.Classifier
	info score.ClassifierInfo
	cfg  score.Config // Load's
	// predict is the Scorer options of :predict (a saliency pass gives
	// the logits; the scores are not written).
	predict score.Config
}

// Server is the service: its models, pool, admission queue and metrics.
// Its Handler serves them; Serve runs it on a listener until its context
// ends.
type Server struct {
	opt    Options
	models map[string]*served
	names  []string
	pool   *attrib.Pool
	// slots admits requests: Workers at once, Queue waiting. A request's
	// instances may also run on slots that are free (without waiting).
	slots   chan struct{}
	waiting atomic.Int64
	// mem holds the requests' own bytes: bodies, instances, responses.
	mem reqMemory
	// clients counts each remote address's requests (ClientLimit).
	clientsMu sync.Mutex
	clients   map[string]int
	// work is the parent of every request's context: cancelled when the
	// grace period of a shutdown ends.
	work       context.Context
	cancelWork context.CancelFunc
	draining   atomic.Bool
	inflight   sync.WaitGroup
	ids        atomic.Uint64
	metrics    *metrics
	tokenSum   [32]byte
	log        *log.Logger
	// testHook, when set, runs at the start of every model request (tests:
	// a panic).
	testHook func(*http.Request)
}

// New loads the models and returns a Server. The errors are the flags'
// messages, each naming its model.
func New(opt Options) (*Server, error) {
	if len(opt.Models) == 0 {
		return nil, errors.New("no model: give -net NAME or -model NAME=FILE (see whitebox help serve)")
	}
	if opt.Budget == "" {
		opt.Budget = DefaultBudget
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	if opt.Queue < 0 {
		return nil, fmt.Errorf("-queue %d must not be negative", opt.Queue)
	}
	if opt.ClientLimit < 0 {
		return nil, fmt.Errorf("-client-limit %d must not be negative", opt.ClientLimit)
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&opt.MaxInstances, DefaultMaxInstances)
	def(&opt.MaxTokens, DefaultMaxTokens)
	def(&opt.MaxSteps, DefaultMaxSteps)
	if opt.MaxBody <= 0 {
		opt.MaxBody = DefaultMaxBody
	}
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultTimeout
	}
	if opt.Log == nil {
		opt.Log = log.Default()
	}
	if opt.ReadHeaderTimeout <= 0 {
		opt.ReadHeaderTimeout = 10 * time.Second
	}
	if opt.ReadTimeout <= 0 {
		opt.ReadTimeout = 60 * time.Second
	}
	budget, err := score.ParseSize(opt.Budget)
	if err != nil {
		return nil, fmt.Errorf("-budget: %v", err)
	}
	s := &Server{opt: opt, models: map[string]*served{}, metrics: newMetrics(), log: opt.Log,
		slots: make(chan struct{}, opt.Workers)}
	if opt.Token != "" {
		s.tokenSum = sha256.Sum256([]byte(opt.Token))
	}
	share := budget / int64(opt.Workers) / 2 // one request's engine share, as score gives it
	s.clients = map[string]int{}
	s.mem.cap = budget - share*int64(opt.Workers) // the other half: the requests' own bytes
	s.mem.share = s.mem.cap / int64(opt.Workers)
	s.pool, err = attrib.NewPool(attrib.PoolOptions{Workers: runtime.GOMAXPROCS(0), Budget: share * int64(opt.Workers), MaxWaiting: opt.Workers})
	if err != nil {
		return nil, err
	}
	for _, m := range opt.Models {
		if err := validName(m.Name); err != nil {
			return nil, err
		}
		if s.models[m.Name] != nil {
			return nil, fmt.Errorf("model %q: named twice", m.Name)
		}
		cfg := m.Config
		cfg.Budget, cfg.Workers = opt.Budget, opt.Workers
		if cfg.Method == "" {
			cfg.Method = "saliency" // Load checks it is set; requests choose theirs
		}
		c, err := score.Load(cfg)
		if err != nil {
			return nil, fmt.Errorf("model %s: %v", m.Name, err)
		}
		sv := &served{name: m.Name, c: c, info: c.Info(), cfg: cfg}
		sv.predict = score.DefaultConfig()
		sv.predict.Method = "saliency"
		// The request's options are checked once, here, for :predict.
		if _, err := c.Scorer(sv.predict, s.pool); err != nil {
			return nil, fmt.Errorf("model %s: %v", m.Name, err)
		}
		if note := c.Note(); note != "" {
			s.log.Printf("model %s: %s", m.Name, note)
		}
		s.models[m.Name] = sv
		s.names = append(s.names, m.Name)
	}
	sort.Strings(s.names)
	s.work, s.cancelWork = context.WithCancel(context.Background())
	return s, nil
}

// validName refuses a model name that a URL could not carry plainly.
func validName(name string) error {
	if name == "" {
		return errors.New("a model needs a name (NAME=FILE)")
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("model name %q: letters, digits, '-', '_' and '.' only", name)
		}
	}
	return nil
}

// Pool is the pool that runs every request's attributions (for tests and
// metrics).
func (s *Server) Pool() *attrib.Pool { return s.pool }

// Models are the names of the models served, sorted.
func (s *Server) Models() []string { return append([]string(nil), s.names...) }

// Handler serves the endpoints.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, []byte(`{"status":"ok"}`))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if s.draining.Load() {
			writeJSON(w, http.StatusServiceUnavailable, []byte(`{"status":"shutting down"}`))
			return
		}
		writeJSON(w, http.StatusOK, []byte(`{"status":"ready"}`))
	})
	mux.Handle("GET /metrics", s.auth(http.HandlerFunc(s.serveMetrics)))
	mux.Handle("GET /v1/models", s.auth(http.HandlerFunc(s.listModels)))
	mux.Handle("GET /v1/models/{name}", s.auth(http.HandlerFunc(s.modelInfo)))
	mux.Handle("POST /v1/models/{spec}", s.auth(http.HandlerFunc(s.infer)))
	return s.guard(mux)
}

// guard gives every request an id (X-Request-Id), makes a panic that
// request's 500, logged with its id, and answers what the mux does not
// route in JSON.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := fmt.Sprintf("%x-%d", time.Now().Unix()&0xffffff, s.ids.Add(1))
		w.Header().Set("X-Request-Id", id)
		rw := &recorder{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				buf := make([]byte, 8<<10)
				buf = buf[:runtime.Stack(buf, false)]
				s.log.Printf("request %s %s %s: panic: %v\n%s", id, r.Method, r.URL.Path, v, buf)
				if !rw.wrote {
					rw.Header().Del("Content-Length")
					writeError(rw, http.StatusInternalServerError, id, "internal error (logged as request "+id+")")
				}
			}
		}()
		// The mux's own answers (404, 405) are text: make them JSON.
		_, pattern := muxPattern(next, r)
		if pattern == "" {
			if methodNotAllowed(r) {
				w.Header().Set("Allow", allowed(r))
				writeError(rw, http.StatusMethodNotAllowed, id, fmt.Sprintf("%s %s: the method is not allowed (use %s)", r.Method, clip(r.URL.Path), allowed(r)))
				return
			}
			writeError(rw, http.StatusNotFound, id, fmt.Sprintf("%s %s: no such endpoint (see /v1/models)", r.Method, clip(r.URL.Path)))
			return
		}
		next.ServeHTTP(rw, r)
	})
}

// muxPattern is the pattern of next (a *http.ServeMux) that r matches, "" for none.
func muxPattern(next http.Handler, r *http.Request) (http.Handler, string) {
	if mux, ok := next.(*http.ServeMux); ok {
		return mux.Handler(r)
	}
	return next, "?"
}

// methodNotAllowed reports whether the path exists with another method.
func methodNotAllowed(r *http.Request) bool { return allowed(r) != "" }

// allowed lists the methods of the path of r.
func allowed(r *http.Request) string {
	p := r.URL.Path
	switch {
	case p == "/healthz", p == "/readyz", p == "/metrics", p == "/v1/models":
		return "GET"
	case strings.HasPrefix(p, "/v1/models/") && !strings.Contains(p[len("/v1/models/"):], "/"):
		if strings.Contains(p, ":") {
			return "POST"
		}
		return "GET"
	}
	return ""
}

// recorder notes whether the response was started.
type recorder struct {
	http.ResponseWriter
	wrote bool
	code  int
}

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.wrote, r.code = true, code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if !r.wrote {
		r.wrote, r.code = true, http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer
// (Flush, SetWriteDeadline).
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// auth checks the bearer token, when the server has one, in constant
// time.
func (s *Server) auth(next http.Handler) http.Handler {
	if s.opt.Token == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		given, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(given))
		if subtle.ConstantTimeCompare(sum[:], s.tokenSum[:]) != 1 || !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="whitebox"`)
			writeError(w, http.StatusUnauthorized, w.Header().Get("X-Request-Id"), "missing or wrong bearer token (Authorization: Bearer TOKEN, the -token-file's)")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Serve answers on ln until ctx ends (SIGTERM, SIGINT), then shuts down:
// it stops accepting, lets the requests in flight finish within grace,
// then cancels those left (their work stops, their memory returns) and
// closes. It returns nil after a clean shutdown, a *CutOff when the
// grace period ended with requests still running (a shutdown all the
// same), and the listener's error if serving failed.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	srv := s.HTTPServer()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		s.cancelWork()
		s.pool.Close()
		return err
	case <-ctx.Done():
	}
	s.draining.Store(true)
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := srv.Shutdown(sctx)
	cut := int64(0)
	if err != nil { // the grace period ended: stop the work left
		cut = s.metrics.inflight.Load()
		s.cancelWork()
		srv.Close()
	}
	s.inflight.Wait() // every handler has returned, its memory given back
	s.cancelWork()
	<-errc
	s.pool.Close()
	if cut > 0 {
		return &CutOff{Grace: grace, Requests: cut}
	}
	return nil
}

// CutOff is Serve's report of a shutdown whose grace period ended with
// requests still running: their work was stopped, their memory given
// back and their connections closed.
type CutOff struct {
	Grace    time.Duration
	Requests int64
}

func (e *CutOff) Error() string {
	return fmt.Sprintf("grace period of %v ended: %d request(s) cut off", e.Grace, e.Requests)
}

// HTTPServer is the http.Server of Serve, with its timeouts: headers
// within ReadHeaderTimeout, the whole request within ReadTimeout, an
// idle connection kept 120 s.
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{Handler: s.Handler(), ReadHeaderTimeout: s.opt.ReadHeaderTimeout, ReadTimeout: s.opt.ReadTimeout,
		IdleTimeout: 120 * time.Second, MaxHeaderBytes: 64 << 10,
		BaseContext: func(net.Listener) context.Context { return s.work },
		ErrorLog:    s.log}
}

// writeTimeout bounds each write of a response to a client.
const writeTimeout = 60 * time.Second
