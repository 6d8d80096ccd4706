package main

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// TestAttributeDataset: many inputs from standard input, scored in
// parallel, come out in input order, bad lines reported in order on
// standard error without losing the others; the output is the same bytes
// for any GOMAXPROCS and -budget, and the same as one input at a time.
func TestAttributeDataset(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	var in strings.Builder
	var good []string
	var bad []int
	for i := range 120 {
		n := 1 + rng.IntN(60)
		b := make([]byte, n)
		for k := range b {
			b[k] = "abcd"[rng.IntN(4)]
		}
		if i%17 == 5 {
			b[rng.IntN(n)] = 'x'
			bad = append(bad, i+1)
		} else {
			good = append(good, string(b))
		}
		in.WriteString(string(b) + "\n")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, method := range []string{"ig", "occlusion", "lrp"} {
		var first string
		for _, cfg := range []struct {
			procs  int
			budget string
		}{{2, "256MiB"}, {1, "256MiB"}, {2, "16MiB"}, {2, "1GiB"}, {1, "2MiB"}} {
			runtime.GOMAXPROCS(cfg.procs)
			status, out, errOut := runCLI(t, in.String(), "attribute", "-net", "sp-counter", "-method", method, "-steps", "40", "-budget", cfg.budget)
			if status != 1 {
				t.Errorf("%s %+v: status %d, want 1", method, cfg, status)
			}
			recs := decode(t, out)
			if len(recs) != len(good) {
				t.Fatalf("%s %+v: %d records, want %d", method, cfg, len(recs), len(good))
			}
			for i, r := range recs {
				if r.Input != good[i] {
					t.Fatalf("%s %+v: record %d is %q, want %q", method, cfg, i, r.Input, good[i])
				}
			}
			var lines []string // the errors; IG's completeness warnings aside
			for _, l := range strings.Split(strings.TrimSpace(errOut), "\n") {
				if !strings.Contains(l, ": warning: IG's completeness gap") {
					lines = append(lines, l)
				}
			}
			if len(lines) != len(bad) {
				t.Fatalf("%s: stderr %q, want %d errors", method, errOut, len(bad))
			}
			for i, l := range lines {
				if !strings.HasPrefix(l, fmt.Sprintf("whitebox attribute: line %d: ", bad[i])) {
					t.Errorf("%s: error %d: %q, want line %d", method, i, l, bad[i])
				}
			}
			if first == "" {
				first = out
				// One input at a time, as arguments: the same bytes.
				var one strings.Builder
				for _, s := range good[:10] {
					_, o, _ := runCLI(t, "", "attribute", "-net", "sp-counter", "-method", method, "-steps", "40", s)
					one.WriteString(o)
				}
				if !strings.HasPrefix(first, one.String()) {
					t.Errorf("%s: the dataset's first records differ from single runs", method)
				}
			} else if out != first {
				t.Errorf("%s %+v: output differs from GOMAXPROCS=2 -budget 256MiB", method, cfg)
			}
		}
	}
}

func TestParseSize(t *testing.T) {
	for s, want := range map[string]int64{"256MiB": 256 << 20, "1GiB": 1 << 30, "16M": 16 << 20, "512k": 512 << 10,
		"1000": 1000, "2.5G": 5 << 29, "10MB": 10e6, " 3 KiB": 3 << 10, "1TiB": 1 << 40, "2T": 2 << 40, "1TB": 1e12} {
		if got, err := parseSize(s); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "MiB", "-1", "0", "12 parsecs", "1e30"} {
		if _, err := parseSize(s); err == nil {
			t.Errorf("parseSize(%q): no error", s)
		}
	}
	status, _, errOut := runCLI(t, "", "attribute", "-net", "counting", "-method", "ig", "-budget", "lots", "ab")
	if status != 2 || !strings.Contains(errOut, "-budget") {
		t.Errorf("bad -budget: status %d, stderr %q", status, errOut)
	}
}
