package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/score"
)

// ndjson is the media type of a streamed response: one record per line.
const ndjson = "application/x-ndjson"

// writeJSON writes a JSON body with its status.
func writeJSON(w http.ResponseWriter, code int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(code)
	w.Write(body)
	w.Write([]byte{'\n'})
}

// writeError writes {"error": msg, "request_id": id} with its status; a
// 503 says when to retry.
func writeError(w http.ResponseWriter, code int, id, msg string) {
	if code == http.StatusServiceUnavailable || code == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	b, _ := json.Marshal(struct {
		Error     string `json:"error"`
		RequestID string `json:"request_id,omitempty"`
	}{msg, id})
	writeJSON(w, code, b)
}

// httpError is an error with its status.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

func errorf(code int, format string, args ...any) *httpError {
	return &httpError{code, fmt.Sprintf(format, args...)}
}

// listModels is GET /v1/models.
func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	b, _ := json.Marshal(struct {
		Models []string `json:"models"`
	}{s.names})
	writeJSON(w, http.StatusOK, b)
}

// modelMeta is GET /v1/models/{name}'s answer.
type modelMeta struct {
	Name  string `json:"name"`
	Ready bool   `json:"ready"`
	// Net or Model (the file as given on the command line).
	Net           string   `json:"net,omitempty"`
	Model         string   `json:"model,omitempty"`
	Layers        string   `json:"layers"`
	Bidirectional bool     `json:"bidirectional"`
	Head          string   `json:"head,omitempty"`
	HeadSource    string   `json:"head_source,omitempty"`
	Classes       []string `json:"classes"`
	Vocab         int      `json:"vocab_size"`
	Features      int      `json:"features"`
	Input         string   `json:"input"`
	Alphabet      []string `json:"alphabet,omitempty"`
}

// modelInfo is GET /v1/models/{name}.
func (s *Server) modelInfo(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	m := s.models[name]
	if m == nil {
		writeError(w, http.StatusNotFound, w.Header().Get("X-Request-Id"), fmt.Sprintf("unknown model %q (models: %s)", clip(name), strings.Join(s.names, ", ")))
		return
	}
	in := m.info
	meta := modelMeta{Name: name, Ready: !s.draining.Load(), Net: in.Net, Model: in.Model, Layers: in.Layers, Bidirectional: in.Bidirectional,
		Head: in.Head, HeadSource: in.HeadSource, Classes: in.Classes, Vocab: in.Vocab, Features: in.Features, Alphabet: in.Alphabet}
	switch {
	case in.Net != "":
		meta.Input = "a string over the alphabet"
	case in.Vocab == 0:
		meta.Input = fmt.Sprintf("rows of %d features", in.Features)
	case in.Words:
		meta.Input = "words of the vocabulary (a string, or an array of tokens)"
	default:
		meta.Input = fmt.Sprintf("token ids in [0, %d) (a string, or an array of integers)", in.Vocab)
	}
	b, _ := json.Marshal(meta)
	writeJSON(w, http.StatusOK, b)
}

// infer is POST /v1/models/{name}:predict and :explain.
func (s *Server) infer(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := w.Header().Get("X-Request-Id")
	name, verb, _ := strings.Cut(r.PathValue("spec"), ":")
	m := s.models[name]
	method := verb // the metrics' label: the attribution method once checked
	code := 0
	s.inflight.Add(1)
	s.metrics.inflight.Add(1)
	defer func() {
		s.metrics.inflight.Add(-1)
		s.inflight.Done()
		if code != 0 {
			label := name
			if m == nil {
				label = "" // an unknown name is not a label
			}
			s.metrics.observe(label, method, code, time.Since(start))
		}
	}()
	fail := func(err *httpError) {
		code = err.code
		if code >= 500 && code != http.StatusServiceUnavailable {
			s.log.Printf("request %s %s: %d %s", id, r.URL.Path, code, err.msg)
		}
		writeError(w, code, id, err.msg)
	}
	if verb != "predict" && verb != "explain" {
		method = "unknown"
		fail(errorf(http.StatusNotFound, "POST %s: no such endpoint (POST /v1/models/NAME:predict or :explain)", clip(r.URL.Path)))
		return
	}
	if m == nil {
		fail(errorf(http.StatusNotFound, "unknown model %q (models: %s)", clip(name), strings.Join(s.names, ", ")))
		return
	}
	if s.testHook != nil {
		s.testHook(r)
	}
	if herr := s.enterClient(r); herr != nil {
		fail(herr)
		return
	}
	defer s.leaveClient(r)
	var held int64 // the request's bytes in s.mem
	defer func() { s.mem.give(held) }()
	data, herr := s.readBody(w, r, &held)
	if herr != nil {
		fail(herr)
		return
	}
	req, err := decodeRequest(data)
	if err != nil {
		fail(errorf(http.StatusBadRequest, "%v", err))
		return
	}
	cfg, timeout, err := req.params.config("")
	if err != nil {
		fail(errorf(http.StatusBadRequest, "%v", err))
		return
	}
	if verb == "predict" {
		if req.params.attribution() {
			fail(errorf(http.StatusBadRequest, ":predict takes no attribution parameters (only timeout)"))
			return
		}
		cfg = m.predict
	} else if cfg.Method == "" {
		fail(errorf(http.StatusBadRequest, `parameters.method is required: %s`, score.ValueHint("method")))
		return
	} else if am, err := attrib.ParseMethod(cfg.Method); err == nil {
		method = am.String() // a method's name, never the request's text
	}
	if herr := s.checkLimits(m, req, cfg); herr != nil {
		fail(herr)
		return
	}
	sc, err := m.c.Scorer(cfg, s.pool)
	if err != nil {
		fail(errorf(http.StatusBadRequest, "%s", paramNames(err.Error())))
		return
	}
	method = sc.Method().String()
	if verb == "predict" {
		method = "predict"
	}
	// The deadline: the server's, or the request's when sooner.
	d := s.opt.Timeout
	if timeout > 0 && timeout < d {
		d = timeout
	}
	ctx, cancel := context.WithTimeout(r.Context(), d)
	defer cancel()
	if herr := s.admit(ctx); herr != nil {
		fail(herr)
		return
	}
	defer func() { <-s.slots }()
	// A request alone borrows every core (a short input's latency: 4.6 →
	// 3.0 ms here); with others in flight it takes one, as the pool would
	// give it anyway: a call that asks for every core waits for them all,
	// and its plan for more cores in the same share of -budget can be the
	// slower (800 tokens, 8 clients: 3.0 req/s borrowing, 10.3 not;
	// BENCHMARKS.md).
	if s.metrics.inflight.Load() == 1 {
		sc.Borrow(s.opt.Workers)
	}
	stream := strings.Contains(r.Header.Get("Accept"), ndjson)
	rc := http.NewResponseController(w)
	run, err := s.runInstances(ctx, m, cfg, sc, verb, req.inputs)
	if err != nil {
		fail(errorf(http.StatusInternalServerError, "%v", err))
		return
	}
	defer run.stop()
	var out bytes.Buffer
	started := false
	for i := range req.inputs {
		rec, err := run.result(ctx, i)
		if err == nil && !stream {
			// The response is held whole: its bytes count.
			add := 2 * int64(len(rec))
			switch {
			case held+add > s.mem.share: // its body, instances and response: never

				err = errorf(http.StatusRequestEntityTooLarge, "the response and the request hold more than %d bytes, a request's share of -budget; ask for it streamed (Accept: %s) or send fewer instances", s.mem.share, ndjson)
			case !s.mem.take(add):
				err = errorf(http.StatusServiceUnavailable, "busy: the requests in flight hold the memory for responses (-budget); retry later")
			default:
				held += add
			}
		}
		if err != nil {
			herr, ok := err.(*httpError)
			if !ok {
				herr = classify(err, d)
			}
			herr.msg = fmt.Sprintf("instances[%d]: %s", i, herr.msg)
			if !started {
				fail(herr)
				return
			}
			// The status is sent: the error is the stream's last line.
			code = herr.code
			b, _ := json.Marshal(struct {
				Error     string `json:"error"`
				Status    int    `json:"status"`
				Instance  int    `json:"instance"`
				RequestID string `json:"request_id"`
			}{herr.msg, herr.code, i, id})
			rc.SetWriteDeadline(time.Now().Add(writeTimeout))
			w.Write(append(b, '\n'))
			return
		}
		if !stream {
			out.Write(rec)
			run.done(i)
			continue
		}
		if !started {
			w.Header().Set("Content-Type", ndjson)
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusOK)
			started, code = true, http.StatusOK
		}
		rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		if _, err := w.Write(rec); err != nil {
			return // the client is gone
		}
		rc.Flush()
		run.done(i)
	}
	if stream {
		if !started { // no instance
			w.Header().Set("Content-Type", ndjson)
			w.WriteHeader(http.StatusOK)
			code = http.StatusOK
		}
		return
	}
	// {"explanations":[line,line,…]}: the records as the command writes
	// them, without their newlines.
	key := "explanations"
	if verb == "predict" {
		key = "predictions"
	}
	lines := bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte{'\n'}), []byte{'\n'})
	var b bytes.Buffer
	b.Grow(out.Len() + 32)
	b.WriteString(`{"` + key + `":[`)
	if out.Len() > 0 {
		b.Write(bytes.Join(lines, []byte{','}))
	}
	b.WriteString("]}")
	code = http.StatusOK
	rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	writeJSON(w, http.StatusOK, b.Bytes())
}

// readBody reads the body within MaxBody (413 beyond), its bytes and its
// decoded instances' (2× its length) held in s.mem and added to *held
// (503 when they do not fit now).
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, held *int64) ([]byte, *httpError) {
	if r.ContentLength > s.opt.MaxBody {
		return nil, errorf(http.StatusRequestEntityTooLarge, "the body has %d bytes, more than the %d a request may have (-max-body)", r.ContentLength, s.opt.MaxBody)
	}
	bound := s.opt.MaxBody // chunked: as much as it may have
	if r.ContentLength >= 0 {
		bound = r.ContentLength
	}
	if !s.mem.take(2 * bound) {
		return nil, errorf(http.StatusServiceUnavailable, "busy: the requests in flight hold the memory for requests (-budget); retry later")
	}
	*held += 2 * bound
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opt.MaxBody))
	if extra := 2 * (bound - int64(len(data))); extra > 0 { // a chunked body's unused bound
		s.mem.give(extra)
		*held -= extra
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, errorf(http.StatusRequestEntityTooLarge, "the body has more than the %d bytes a request may have (-max-body)", s.opt.MaxBody)
	case err != nil:
		return nil, errorf(http.StatusBadRequest, "reading the body: %v (read %d bytes)", err, len(data))
	}
	return data, nil
}

// checkLimits refuses a request beyond the per-request limits: its
// instances, the tokens of each, the IG steps it asks for.
func (s *Server) checkLimits(m *served, req *request, cfg score.Config) *httpError {
	if len(req.inputs) > s.opt.MaxInstances {
		return errorf(http.StatusRequestEntityTooLarge, "%d instances, more than the %d a request may have (-max-instances)", len(req.inputs), s.opt.MaxInstances)
	}
	for i, in := range req.inputs {
		if n := m.c.Tokens(in); n > s.opt.MaxTokens {
			return errorf(http.StatusRequestEntityTooLarge, "instances[%d]: %d tokens, more than the %d an instance may have (-max-tokens)", i, n, s.opt.MaxTokens)
		}
	}
	if n, err := strconv.Atoi(cfg.Steps); err == nil && n > s.opt.MaxSteps {
		return errorf(http.StatusBadRequest, "parameters.steps %d: more than the %d a request may ask for (-max-steps)", n, s.opt.MaxSteps)
	}
	if cfg.Steps == "auto" && cfg.MaxSteps > s.opt.MaxSteps {
		return errorf(http.StatusBadRequest, "parameters.max_steps %d: more than the %d a request may ask for (-max-steps; give max_steps with steps auto)", cfg.MaxSteps, s.opt.MaxSteps)
	}
	return nil
}

// admit takes a slot for the request, waiting in the queue when all are
// taken: 503 when Queue requests wait already, or when the request's
// context ends first.
func (s *Server) admit(ctx context.Context) *httpError {
	select {
	case s.slots <- struct{}{}:
		return nil
	default:
	}
	if s.waiting.Add(1) > int64(s.opt.Queue) {
		s.waiting.Add(-1)
		s.metrics.refused.Add(1)
		return errorf(http.StatusServiceUnavailable, "busy: %d requests running and %d waiting (-workers, -queue); retry later", s.opt.Workers, s.opt.Queue)
	}
	defer s.waiting.Add(-1)
	select {
	case s.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return classify(ctx.Err(), 0)
	}
}

// classify gives an attribution's error its status: 503 for a pool that
// is busy or closed, 504 for a deadline, 499 for a client gone, 413 for
// an input beyond the budget, 422 for a result that is not finite, 400
// for the rest (the input and the options: what the request can fix).
func classify(err error, deadline time.Duration) *httpError {
	var be *cell.BudgetError
	var nf *attrib.NonFiniteError
	msg := err.Error()
	switch {
	case errors.Is(err, attrib.ErrPoolBusy), errors.Is(err, attrib.ErrPoolClosed):
		return &httpError{http.StatusServiceUnavailable, "busy: " + msg + "; retry later"}
	case errors.Is(err, context.DeadlineExceeded):
		return &httpError{http.StatusGatewayTimeout, fmt.Sprintf("the deadline (%v: -timeout, or parameters.timeout) passed: %s", deadline, msg)}
	case errors.Is(err, context.Canceled):
		return &httpError{499, "cancelled: " + msg} // the client is gone, or the server stops
	case errors.As(err, &be), strings.Contains(msg, "raise -budget"):
		return &httpError{http.StatusRequestEntityTooLarge, msg}
	case errors.As(err, &nf):
		return &httpError{http.StatusUnprocessableEntity, msg}
	}
	return &httpError{http.StatusBadRequest, paramNames(msg)}
}

// paramNames says score's flag names as the request's parameters where
// a message names them ("-steps 0 must be …" → "parameters.steps 0 …").
var paramNames = strings.NewReplacer(
	"-method ", "parameters.method ", "-class ", "parameters.class ", "-span ", "parameters.span ",
	"-steps ", "parameters.steps ", "-tol ", "parameters.tol ", "-max-steps ", "parameters.max_steps ",
	"-quadrature ", "parameters.quadrature ", "-eps ", "parameters.eps ", "-lrp-bias ", "parameters.lrp_bias ",
	"-baseline ", "parameters.baseline ", "-features ", "parameters.features ",
).Replace

// predictLine appends one prediction as a JSON line: the input, its
// tokens, the predicted class and the logits by class name, in class
// order.
func predictLine(ctx context.Context, sc *score.Scorer, input string, out *bytes.Buffer) error {
	tokens, res, err := sc.Score(ctx, input)
	if err != nil {
		return err
	}
	classes := sc.Classes()
	q := func(s string) {
		b, _ := json.Marshal(s)
		out.Write(b)
	}
	out.WriteString(`{"input":`)
	q(input)
	out.WriteString(`,"tokens":[`)
	for i, t := range tokens {
		if i > 0 {
			out.WriteByte(',')
		}
		q(t)
	}
	out.WriteString(`],"prediction":`)
	q(classes[res.Prediction])
	out.WriteString(`,"logits":{`)
	for k, c := range classes {
		if k > 0 {
			out.WriteByte(',')
		}
		q(c)
		out.WriteByte(':')
		out.WriteString(strconv.FormatFloat(res.Logits[k], 'g', -1, 64))
	}
	out.WriteString("}}\n")
	return nil
}
