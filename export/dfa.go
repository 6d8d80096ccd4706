package export

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/whitebox-lstm/whitebox/whitebox"
)

// MaxDFABytes bounds a DFA description file.
const MaxDFABytes = 16 << 20

// ReadDFA reads a deterministic finite automaton described in JSON:
//
//	{"alphabet": ["a", "b"],
//	 "delta": [[1, 0], [1, 1]],
//	 "classes": ["False", "True"],
//	 "class_of": [0, 1]}
//
// (start state 0; delta[q][k] is the state after symbol k in state q;
// class_of[q] the class of strings that end in q). Unknown fields, trailing
// data, a file over MaxDFABytes and an automaton that whitebox.DFA.Validate
// refuses are errors.
func ReadDFA(r io.Reader) (*whitebox.DFA, error) {
	var raw struct {
		Alphabet []string `json:"alphabet"`
		Delta    [][]int  `json:"delta"`
		Classes  []string `json:"classes"`
		ClassOf  []int    `json:"class_of"`
	}
	lr := &io.LimitedReader{R: r, N: MaxDFABytes + 1}
	dec := json.NewDecoder(lr)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		if lr.N <= 0 {
			return nil, fmt.Errorf("dfa: the description exceeds %d bytes", MaxDFABytes)
		}
		return nil, fmt.Errorf("dfa: %v (want {\"alphabet\": [...], \"delta\": [[...]], \"classes\": [...], \"class_of\": [...]})", err)
	}
	if dec.More() {
		return nil, errors.New("dfa: data after the automaton's JSON object")
	}
	a := &whitebox.DFA{Alphabet: raw.Alphabet, Delta: raw.Delta, Classes: raw.Classes, ClassOf: raw.ClassOf}
	if err := a.Validate(); err != nil {
		return nil, err
	}
	return a, nil
}

// DFANet compiles a with whitebox.CompileDFA (m, u: the gate saturation
// and the scale of g; zero means the defaults, whitebox.DefaultM and 1)
// into a Net named "dfa" whose task is the automaton's, ready for
// StateDict and Metadata.
func DFANet(a *whitebox.DFA, m, u float64) (*whitebox.Net, error) {
	if m == 0 {
		m = whitebox.DefaultM
	}
	if u == 0 {
		u = 1
	}
	net, err := whitebox.CompileDFA(a, m, u)
	if err != nil {
		return nil, err
	}
	return &whitebox.Net{Name: "dfa", Task: a.Task("dfa"), Model: net, Params: whitebox.Params{M: m, U: u}}, nil
}
