package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/whitebox-lstm/whitebox/score"
)

// A request is a decoded body of :predict or :explain.
type request struct {
	// inputs are the instances as `whitebox attribute` input lines:
	// a string as given, token ids or tokens joined by one space, feature
	// rows as compact JSON.
	inputs []string
	params parameters
}

// parameters are the "parameters" object of an :explain request: the
// scoring flags of `whitebox attribute`, by their JSON names.
type parameters struct {
	Method        *string         `json:"method"`
	Class         json.RawMessage `json:"class"` // a name, or an index (a number)
	Span          *string         `json:"span"`
	Steps         json.RawMessage `json:"steps"` // a number, or "auto"
	Tol           *float64        `json:"tol"`
	MaxSteps      *int            `json:"max_steps"`
	Quadrature    *string         `json:"quadrature"`
	Eps           *float64        `json:"eps"`
	LRPBias       *float64        `json:"lrp_bias"`
	Baseline      *string         `json:"baseline"`
	Features      *bool           `json:"features"`
	CaptumWeights *bool           `json:"captum_weights"`
	Timeout       json.RawMessage `json:"timeout"` // "2s", or a number of seconds
}

// body is the request object as read.
type body struct {
	Instances  []json.RawMessage `json:"instances"`
	Parameters *json.RawMessage  `json:"parameters"`
}

// A decodeError is a request body that cannot be read: a 400 whose
// message names the place (a byte offset, its line and column) or the
// field.
type decodeError struct{ msg string }

func (e *decodeError) Error() string { return e.msg }

// decodeRequest reads a request body: {"instances": [...], "parameters":
// {...}}. Unknown fields, trailing data and instances of no known form
// are errors; nothing is looked up in a model here.
func decodeRequest(data []byte) (*request, error) {
	var b body
	if err := strictDecode(data, data, 0, &b); err != nil {
		return nil, err
	}
	if b.Instances == nil {
		return nil, &decodeError{`the request has no "instances" (want {"instances": [...]})`}
	}
	req := &request{inputs: make([]string, len(b.Instances))}
	for i, raw := range b.Instances {
		in, err := instanceInput(raw)
		if err != nil {
			return nil, &decodeError{fmt.Sprintf("instances[%d]: %v", i, err)}
		}
		req.inputs[i] = in
	}
	if b.Parameters != nil && !bytes.Equal(bytes.TrimSpace(*b.Parameters), []byte("null")) {
		off := max(0, bytes.Index(data, *b.Parameters)) // for the positions of its errors
		if err := strictDecode(*b.Parameters, data, off, &req.params); err != nil {
			return nil, &decodeError{"parameters: " + err.Error()}
		}
	}
	return req, nil
}

// strictDecode decodes one JSON value of data into v, refusing unknown
// fields and anything after the value; errors name their position in the
// whole body (data starts at byte base of it).
func strictDecode(data, whole []byte, base int, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case err == nil:
	case errors.Is(err, io.EOF):
		return &decodeError{"empty body: want a JSON object {\"instances\": [...]}"}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &decodeError{fmt.Sprintf("truncated JSON: the body ends after %s, inside a value", position(whole, base+len(data)-1))}
	case errors.As(err, &syn):
		return &decodeError{fmt.Sprintf("malformed JSON at %s: %s", position(whole, base+int(syn.Offset)-1), strings.TrimPrefix(syn.Error(), "json: "))}
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "the request"
		}
		return &decodeError{fmt.Sprintf("%s at %s: a JSON %s where %s is wanted", field, position(whole, base+int(typ.Offset)), typ.Value, typeName(typ.Type.String()))}
	default:
		if rest, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return &decodeError{fmt.Sprintf("unknown field %s near %s", rest, position(whole, base+int(dec.InputOffset())))}
		}
		return &decodeError{fmt.Sprintf("malformed JSON near %s: %s", position(whole, base+int(dec.InputOffset())), strings.TrimPrefix(err.Error(), "json: "))}
	}
	// Only white space may follow.
	if rest := bytes.TrimLeftFunc(data[dec.InputOffset():], unicode.IsSpace); len(rest) > 0 {
		return &decodeError{fmt.Sprintf("unexpected data after the JSON object at %s", position(whole, base+len(data)-len(rest)))}
	}
	return nil
}

// typeName says a Go type in JSON's words.
func typeName(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "an array"
	case strings.HasPrefix(t, "*"):
		return typeName(t[1:])
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	case t == "int", t == "float64":
		return "a number"
	case strings.HasPrefix(t, "server."), strings.HasPrefix(t, "struct"), strings.HasPrefix(t, "map"):
		return "an object"
	}
	return t
}

// position says where byte off of the body data is: "byte N (line L,
// column C)", counted from 1.
func position(data []byte, off int) string {
	off = min(max(off, 0), len(data))
	line, col := 1, 1
	for _, c := range data[:off] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Sprintf("byte %d (line %d, column %d)", off+1, line, col)
}

// instanceInput turns one instance into the input line `whitebox
// attribute` reads: a string as it is; an array of token ids (integers)
// or of tokens (strings, with a -vocab model) joined by single spaces; an
// array of feature rows (arrays of numbers) as compact JSON.
func instanceInput(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", errors.New("empty")
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		if !utf8.ValidString(s) {
			return "", errors.New("the string is not valid UTF-8")
		}
		return s, nil
	case '[':
	default:
		return "", errors.New(`want a string, an array of token ids or tokens, or an array of feature rows`)
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return "", err
	}
	if len(elems) == 0 {
		return "", errors.New("an empty array: an input has at least one token")
	}
	var kind byte
	parts := make([]string, len(elems))
	for t, e := range elems {
		e = bytes.TrimSpace(e)
		k := e[0]
		if k == '-' || k >= '0' && k <= '9' {
			k = '0'
		}
		if t == 0 {
			kind = k
		} else if k != kind {
			return "", fmt.Errorf("element %d: the elements mix kinds (token ids, tokens, feature rows)", t)
		}
		switch k {
		case '0':
			if !isInteger(e) {
				return "", fmt.Errorf("element %d: %s is not an integer token id", t, clip(string(e)))
			}
			parts[t] = string(e)
		case '"':
			var s string
			if err := json.Unmarshal(e, &s); err != nil {
				return "", fmt.Errorf("element %d: %v", t, err)
			}
			if s == "" || strings.IndexFunc(s, unicode.IsSpace) >= 0 || !utf8.ValidString(s) {
				return "", fmt.Errorf("element %d: the token %s is empty or holds white space", t, clip(strconv.Quote(s)))
			}
			parts[t] = s
		case '[':
			var row []json.RawMessage
			if err := json.Unmarshal(e, &row); err != nil {
				return "", fmt.Errorf("element %d: %v", t, err)
			}
			for i, v := range row {
				if !isNumber(bytes.TrimSpace(v)) {
					return "", fmt.Errorf("row %d, column %d: %s is not a number", t, i, clip(string(v)))
				}
			}
		default:
			return "", fmt.Errorf("element %d: %s is not a token id, a token or a row of features", t, clip(string(e)))
		}
	}
	if kind == '[' {
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return "", err
		}
		return b.String(), nil
	}
	return strings.Join(parts, " "), nil
}

// isInteger reports whether a JSON number is an integer literal.
func isInteger(b []byte) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isNumber reports whether b is a JSON number within float64's range.
func isNumber(b []byte) bool {
	if len(b) == 0 || !(b[0] == '-' || b[0] >= '0' && b[0] <= '9') {
		return false
	}
	f, err := strconv.ParseFloat(string(b), 64)
	return err == nil && !math.IsInf(f, 0)
}

// clip shortens a value for a message.
func clip(s string) string {
	if len(s) <= 40 {
		return s
	}
	return s[:40] + "…"
}

// config is the scoring Config of the parameters: score's defaults, the
// parameters given marked in Set (an explicit value is used or refused,
// as a flag's). It also returns the request's own deadline (0: none).
func (p *parameters) config(defaultMethod string) (score.Config, time.Duration, error) {
	cfg := score.DefaultConfig()
	cfg.Set = map[string]bool{}
	cfg.Method = defaultMethod
	str := func(name string, v *string, dst *string) {
		if v != nil {
			*dst = *v
			cfg.Set[name] = true
		}
	}
	str("method", p.Method, &cfg.Method)
	str("span", p.Span, &cfg.Span)
	str("quadrature", p.Quadrature, &cfg.Quadrature)
	str("baseline", p.Baseline, &cfg.Baseline)
	if len(p.Class) > 0 {
		var s string
		var k int
		switch {
		case json.Unmarshal(p.Class, &s) == nil:
			cfg.Class = s
		case isInteger(bytes.TrimSpace(p.Class)) && json.Unmarshal(p.Class, &k) == nil:
			cfg.Class = strconv.Itoa(k)
		default:
			return cfg, 0, &decodeError{fmt.Sprintf("parameters.class: %s is not a class name or index", clip(string(p.Class)))}
		}
		cfg.Set["class"] = true
	}
	if len(p.Steps) > 0 {
		var s string
		var n int
		switch {
		case json.Unmarshal(p.Steps, &s) == nil:
			cfg.Steps = s
		case isInteger(bytes.TrimSpace(p.Steps)) && json.Unmarshal(p.Steps, &n) == nil:
			cfg.Steps = strconv.Itoa(n)
		default:
			return cfg, 0, &decodeError{fmt.Sprintf(`parameters.steps: %s is not a number of steps or "auto"`, clip(string(p.Steps)))}
		}
		cfg.Set["steps"] = true
	}
	num := func(name string, v *float64, dst *float64) {
		if v != nil {
			*dst = *v
			cfg.Set[name] = true
		}
	}
	num("tol", p.Tol, &cfg.Tol)
	num("eps", p.Eps, &cfg.Eps)
	num("lrp-bias", p.LRPBias, &cfg.LRPBias)
	if p.MaxSteps != nil {
		cfg.MaxSteps = *p.MaxSteps
		cfg.Set["max-steps"] = true
	}
	if p.Features != nil {
		cfg.Features = *p.Features
		cfg.Set["features"] = true
	}
	if p.CaptumWeights != nil {
		cfg.CaptumWeights = *p.CaptumWeights
		cfg.Set["captum-weights"] = true
	}
	var timeout time.Duration
	if len(p.Timeout) > 0 {
		var s string
		var secs float64
		switch {
		case json.Unmarshal(p.Timeout, &s) == nil:
			d, err := time.ParseDuration(s)
			if err != nil || d <= 0 {
				return cfg, 0, &decodeError{fmt.Sprintf(`parameters.timeout: %s is not a positive duration (e.g. "2s", "500ms")`, clip(strconv.Quote(s)))}
			}
			timeout = d
		case json.Unmarshal(p.Timeout, &secs) == nil && secs > 0 && secs < 1e9:
			timeout = time.Duration(secs * float64(time.Second))
		default:
			return cfg, 0, &decodeError{fmt.Sprintf(`parameters.timeout: %s is not a positive duration ("2s", or a number of seconds)`, clip(string(p.Timeout)))}
		}
	}
	return cfg, timeout, nil
}

// attribution reports whether any parameter but the timeout is given
// (:predict takes none).
func (p *parameters) attribution() bool {
	return p.Method != nil || len(p.Class) > 0 || p.Span != nil || len(p.Steps) > 0 || p.Tol != nil || p.MaxSteps != nil ||
		p.Quadrature != nil || p.Eps != nil || p.LRPBias != nil || p.Baseline != nil || p.Features != nil || p.CaptumWeights != nil
}
