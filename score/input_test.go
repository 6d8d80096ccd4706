package score

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/whitebox-lstm/whitebox/whitebox"
)

// EachLine splits like bufio.Scanner's lines, and cuts long lines to most
// bytes while reporting their length.
func TestEachLine(t *testing.T) {
	type got struct {
		line int
		s    string
		long int64
	}
	for _, c := range []struct {
		in   string
		most int
		want []got
	}{
		{"ab\ncd", 10, []got{{1, "ab", 0}, {2, "cd", 0}}},
		{"ab\n\ncd\n", 10, []got{{1, "ab", 0}, {2, "", 0}, {3, "cd", 0}}},
		{"abcdefgh\nxy\n", 4, []got{{1, "abcd", 8}, {2, "xy", 0}}},
		{"abcd\n", 4, []got{{1, "abcd", 0}}},
		{strings.Repeat("z", 200000) + "\nok", 10, []got{{1, "zzzzzzzzzz", 200000}, {2, "ok", 0}}},
		{"", 10, nil},
	} {
		var g []got
		if err := EachLine(strings.NewReader(c.in), c.most, func(line int, s string, long int64) bool {
			g = append(g, got{line, s, long})
			return true
		}); err != nil {
			t.Fatal(err)
		}
		if len(g) != len(c.want) {
			t.Fatalf("%.20q: %v, want %v", c.in, g, c.want)
		}
		for i := range g {
			if g[i] != c.want[i] {
				t.Fatalf("%.20q: %v, want %v", c.in, g, c.want)
			}
		}
	}
}

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
	for _, s := range []string{"abcd", "3 1 4", " 39 0\t7 ", "-1", "40", "99999999999999999999", "[[1,2,3,4,5,6,7]]", "[[1e400]]", "[[],[]]", "a\x00b", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, subj := range []subject{whiteboxSubject{net}, ms, dense} {
			n := subj.tokens(s)
			x, tokens, err := subj.parse(s)
			if err != nil {
				continue
			}
			if x.Len() != len(tokens) || x.Len() < 1 {
				t.Fatalf("%q: %d rows, %d tokens", s, x.Len(), len(tokens))
			}
			if _, isModel := subj.(*modelSubject); !isModel && x.Len() != utf8.RuneCountInString(s) {
				t.Fatalf("%q: %d symbols", s, x.Len())
			}
			if n < x.Len() && subj != dense {
				t.Fatalf("%q: counted %d tokens, parsed %d", s, n, x.Len())
			}
		}
	})
}
