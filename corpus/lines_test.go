package corpus

import (
	"errors"
	"strings"
	"testing"
	"testing/iotest"
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

// A reader's error ends EachLine with that error, after the lines before it.
func TestEachLineReadError(t *testing.T) {
	var got []string
	err := EachLine(iotest.TimeoutReader(strings.NewReader("ab\ncd\n")), 10, func(_ int, s string, _ int64) bool {
		got = append(got, s)
		return true
	})
	if !errors.Is(err, iotest.ErrTimeout) || len(got) != 2 || got[0] != "ab" || got[1] != "cd" {
		t.Fatalf("lines %q, error %v; want [ab cd] and the reader's error", got, err)
	}
}

// Lines from anywhere: EachLine keeps at most most bytes of a line, numbers
// the lines from 1 without gaps, and gives back exactly the lines of
// strings.Split (cut to most bytes, with the length of those cut).
func FuzzEachLine(f *testing.F) {
	f.Add("ab\ncd", 3)
	f.Add("a\r\n\n\nbcdef\n", 2)
	f.Add("", 0)
	f.Add("\n", 1)
	f.Add(strings.Repeat("x", 70000)+"\ny", 65536)
	f.Fuzz(func(t *testing.T, in string, most int) {
		most = min(max(most, 0), 1<<20)
		want := strings.Split(in, "\n")
		if want[len(want)-1] == "" {
			want = want[:len(want)-1] // an empty end is no line
		}
		n := 0
		err := EachLine(strings.NewReader(in), most, func(line int, s string, long int64) bool {
			if line != n+1 || n >= len(want) {
				t.Fatalf("line %d after %d of %d lines", line, n, len(want))
			}
			w := want[n]
			n++
			if len(s) > most {
				t.Fatalf("line %d: %d bytes kept, more than %d", line, len(s), most)
			}
			if len(w) > most {
				if s != w[:most] || long != int64(len(w)) {
					t.Fatalf("line %d: %.20q, long %d; want %.20q, long %d", line, s, long, w[:most], len(w))
				}
			} else if s != w || long != 0 {
				t.Fatalf("line %d: %.20q, long %d; want %.20q, 0", line, s, long, w)
			}
			return true
		})
		if err != nil || n != len(want) {
			t.Fatalf("%d lines, error %v; want %d", n, err, len(want))
		}
	})
}
