package export

import (
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
)

// parity: True iff the string has an odd number of b's.
const parity = `{"alphabet": ["a", "b"], "delta": [[0, 1], [1, 0]], "classes": ["False", "True"], "class_of": [0, 1]}`

func TestDFA(t *testing.T) {
	a, err := ReadDFA(strings.NewReader(parity))
	if err != nil {
		t.Fatal(err)
	}
	net, err := DFANet(a, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	ws := mustRunner(t, net.Model)
	for _, s := range []string{"a", "b", "abab", "abbb", "bbbbbbbbbbbbbbbbbbba"} {
		sym, err := net.Task.Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		y, err := ws.Forward(cell.OneHot(sym))
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.Count(s, "b") % 2; cell.Predict(y) != want {
			t.Errorf("%s: predicted %d, want %d", s, cell.Predict(y), want)
		}
	}
	if _, err := StateDict(net.Model); err != nil {
		t.Fatal(err)
	}
	if md := Metadata(net); md["vocab"] != "a b" || md["classes"] != "False True" {
		t.Errorf("metadata %v", md)
	}
	for _, bad := range []string{
		``, `[]`, `{"alphabet": ["a"]}`, parity + ` {}`,
		`{"alphabet": ["a", "b"], "delta": [[0, 2], [1, 0]], "classes": ["F", "T"], "class_of": [0, 1]}`,
		`{"alphabet": ["a", "b"], "delta": [[0, 1], [1, 0]], "classes": ["F", "T"], "class_of": [0, 1], "start": 0}`,
	} {
		if _, err := ReadDFA(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if _, err := ReadDFA(strings.NewReader(`{"alphabet": ["` + strings.Repeat("a", MaxDFABytes) + `"]}`)); err == nil || !strings.Contains(err.Error(), "exceeds") {
		t.Errorf("huge file: %v", err)
	}
}

func TestNilInputs(t *testing.T) {
	if Metadata(nil) != nil {
		t.Error("Metadata(nil) is not nil")
	}
	if _, err := DFANet(nil, 0, 0); err == nil {
		t.Error("DFANet(nil): no error")
	}
}
