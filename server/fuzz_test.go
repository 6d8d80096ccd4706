package server

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzDecodeRequest: the request decoder never panics; an error is a
// decodeError (a 400 whose message says where); what it accepts turns
// into input lines that read back the same as JSON strings, and its
// parameters into a Config or a decodeError.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"instances":["aacb"],"parameters":{"method":"ig"}}`,
		`{"instances":[[3,14,15],["a","b"],[[1,2],[3,4]]],"parameters":{"method":"ig","steps":"auto","class":1,"timeout":"2s"}}`,
		`{"instances":[[1.5]]}`, `{"instances":[[-1, 2]]}`, `{"instances":[]}`, `{"instances":null}`, `{}`, ``, `[`, `{"instances":["a"]} x`,
		`{"instances":[[[1e400]]]}`, `{"instances":[["a b"]]}`, `{"instances":["\ud800"]}`, `{"instances":[{"x":1}]}`,
		`{"instances":["a"],"parameters":{"steps":true,"timeout":-1}}`, `{"instances":["a"],"parameters":null}`,
		"{\"instances\":[\"a\"],\n\"parameters\":{\"eps\":\"x\"}}", `{"instances":[[1,[2]]]}`, `{"instances":[[[1,"2"]]]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := decodeRequest(data)
		if err != nil {
			if _, ok := err.(*decodeError); !ok || err.Error() == "" {
				t.Fatalf("%q: error %T %v", data, err, err)
			}
			return
		}
		for i, in := range req.inputs {
			b, err := json.Marshal(in)
			if err != nil {
				t.Fatal(err)
			}
			back, err := decodeRequest([]byte(`{"instances":[` + string(b) + `]}`))
			if err != nil || len(back.inputs) != 1 || back.inputs[0] != in {
				t.Fatalf("%q: instance %d %q does not read back: %v", data, i, in, err)
			}
			if strings.HasPrefix(in, "[[") && !json.Valid([]byte(in)) {
				t.Fatalf("%q: rows %q are not JSON", data, in)
			}
		}
		if _, _, err := req.params.config(""); err != nil {
			if _, ok := err.(*decodeError); !ok {
				t.Fatalf("%q: parameters: %T %v", data, err, err)
			}
		}
	})
}
