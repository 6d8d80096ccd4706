package score

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/whitebox-lstm/whitebox/whitebox"
)

// Input lines from anywhere: parsing never panics, and what it accepts
// fits the classifier.
func FuzzParseInput(f *testing.F) {
	net, err := whitebox.New("sp-counter", whitebox.Config{})
	if err != nil {
		f.Fatal(err)
	}
	ms, err := newModelSubject(modelFlags{path: "../model/testdata/bi2.safetensors"})
	if err != nil {
		f.Fatal(err)
	}
	dense, err := newModelSubject(modelFlags{path: "../model/testdata/dense_bi1.safetensors"})
	if err != nil {
		f.Fatal(err)
	}
	padded, err := newModelSubject(modelFlags{path: "../model/testdata/padding/bi2.safetensors"}) // pad id 0, from its metadata
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"3 14 15 0 0", "0 0 0", "0 3 00 4 0", "abcd", "3 1 4", " 39 0\t7 ", "-1", "40", "99999999999999999999", "[[1,2,3,4,5,6,7]]", "[[1e400]]", "[[],[]]", "a\x00b", "\xff",
		"[[null,1,1,1,1,1,1]]", `[["1",1,1,1,1,1,1]]`, "[[true,1,1,1,1,1,1]]", "[[[1],1,1,1,1,1,1]]", "[null]", "12345678901234567890123"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, subj := range []subject{whiteboxSubject{net}, ms, dense, padded} {
			n := subj.tokens(s)
			x, tokens, warn, err := subj.parse(s)
			if err != nil {
				continue
			}
			if subj == padded {
				// The trailing pads are removed, and only they; a pad
				// left inside is a warning.
				for _, tok := range tokens[x.Len():] {
					if id, err := strconv.Atoi(tok); err != nil || id != 0 {
						t.Fatalf("%q: token %q removed", s, tok)
					}
				}
				inner := false
				for _, tok := range tokens[:x.Len()] {
					id, _ := strconv.Atoi(tok)
					inner = inner || id == 0
				}
				if last, _ := strconv.Atoi(tokens[x.Len()-1]); last == 0 || inner != (warn != "") {
					t.Fatalf("%q: %d rows of %d tokens, warning %q", s, x.Len(), len(tokens), warn)
				}
				tokens = tokens[:x.Len()]
			}
			if x.Len() != len(tokens) || x.Len() < 1 || warn != "" && subj != padded {
				t.Fatalf("%q: %d rows, %d tokens, warning %q", s, x.Len(), len(tokens), warn)
			}
			if _, isModel := subj.(*modelSubject); !isModel && x.Len() != utf8.RuneCountInString(s) {
				t.Fatalf("%q: %d symbols", s, x.Len())
			}
			if subj == dense {
				// Every feature was a JSON number: the input reads back
				// as float64s with nothing but numbers in it.
				var back [][]float64
				if err := json.Unmarshal([]byte(s), &back); err != nil || strings.Contains(s, "null") {
					t.Fatalf("%q accepted as features: %v", s, err)
				}
			}
			if n < x.Len() && subj != dense {
				t.Fatalf("%q: counted %d tokens, parsed %d", s, n, x.Len())
			}
		}
	})
}

// Feature rows hold numbers only; anything else is an error naming its row
// and column, and an id beyond int's range says so (issue 25, cases 3, 9).
func TestParseInputRefusals(t *testing.T) {
	ms, err := newModelSubject(modelFlags{path: "../model/testdata/bi2.safetensors"})
	if err != nil {
		t.Fatal(err)
	}
	dense, err := newModelSubject(modelFlags{path: "../model/testdata/dense_bi1.safetensors"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		subj       subject
		input, msg string
	}{
		{dense, "[[null,1,1,1,1,1,1]]", "row 0, column 0: null is not a number"},
		{dense, "[[1,1,1,1,1,1,1],[1,\"1\",1,1,1,1,1]]", `row 1, column 1: "1" is not a number`},
		{dense, "[[1,1,true,1,1,1,1]]", "row 0, column 2: true is not a number"},
		{dense, "[[1,1,1,[1],1,1,1]]", "row 0, column 3: [1] is not a number"},
		{dense, "[[1,1,1,1,{},1,1]]", "row 0, column 4: {} is not a number"},
		{dense, "[[1,1,1,1,1,1,1e400]]", "row 0, column 6: 1e400 is beyond float64's range"},
		{dense, "[null]", "row 0 is null"},
		{ms, "1 12345678901234567890123", "token id 12345678901234567890123 at position 1 is out of range [0, 40)"},
	} {
		_, _, _, err := c.subj.parse(c.input)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want %q", c.input, err, c.msg)
		}
	}
}

// -class values from anywhere: parseClass never panics, "all" asks for
// every class, anything else it accepts is a class of the classifier,
// named by its name or its index.
func FuzzParseClass(f *testing.F) {
	net, err := whitebox.New("sp-counter", whitebox.Config{})
	if err != nil {
		f.Fatal(err)
	}
	ms, err := newModelSubject(modelFlags{path: "../model/testdata/bi2.safetensors"})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"", "all", "All", "ALL", " all", "True", "False", "0", "3", "4", "-1", "+1", "01", "1e0", "99999999999999999999", "\x00", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, subj := range []subject{whiteboxSubject{net}, ms} {
			k, all, err := parseClass(s, subj)
			if err != nil {
				if all || k != -1 {
					t.Fatalf("%q: error %v with k = %d, all = %v", s, err, k, all)
				}
				continue
			}
			if all != (s == AllClasses) {
				t.Fatalf("%q: all = %v", s, all)
			}
			if s == "" || all {
				if k != -1 {
					t.Fatalf("%q: k = %d, want -1", s, k)
				}
				continue
			}
			names := subj.classes()
			if k < 0 || k >= len(names) {
				t.Fatalf("%q: class %d out of range [0, %d)", s, k, len(names))
			}
			if n, err := strconv.Atoi(s); names[k] != s && (err != nil || n != k) {
				t.Fatalf("%q: class %d (%q) is neither its name nor its index", s, k, names[k])
			}
		}
	})
}
