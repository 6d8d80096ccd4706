package main

import (
	"strings"
	"testing"
)

// Every attribute flag with bad and boundary values: each is honoured or
// refused with exit status 2 and a message naming it; none panics or is
// silently replaced by a default.
func TestAttributeFlagTable(t *testing.T) {
	base := []string{"attribute", "-net", "sp-counter", "-method", "ig"}
	for _, c := range []struct {
		args   []string
		status int
		want   string // in stderr (status 2) or stdout (status 0)
	}{
		{[]string{"-steps", "0"}, 2, "-steps 0"},
		{[]string{"-steps", "-5"}, 2, "-steps -5"},
		{[]string{"-steps", "1e3"}, 2, "-steps 1e3"},
		{[]string{"-steps", "99999999999999999999"}, 2, "-steps 99999999999999999999"},
		{[]string{"-steps", "1"}, 0, `"delta"`},
		{[]string{"-steps", "auto"}, 0, `"steps":`},
		{[]string{"-steps", "auto", "-max-steps", "7"}, 2, "-max-steps 7"},
		{[]string{"-tol", "0"}, 2, "-tol 0"},
		{[]string{"-tol", "NaN"}, 2, "-tol NaN"},
		{[]string{"-tol", "-1"}, 2, "-tol -1"},
		{[]string{"-tol", "1.5"}, 2, "-tol 1.5"},
		{[]string{"-quadrature", "simpson"}, 2, `"simpson"`},
		{[]string{"-quadrature", "riemann_trapezoid", "-steps", "1"}, 1, "at least 2 points"},
		{[]string{"-eps", "-1"}, 2, "-eps -1"},
		{[]string{"-eps", "NaN"}, 2, "-eps NaN"},
		{[]string{"-eps", "+Inf"}, 2, "-eps +Inf"},
		{[]string{"-budget", "0"}, 2, "-budget"},
		{[]string{"-budget", "-1MiB"}, 2, "-budget"},
		{[]string{"-budget", "12"}, 2, "-budget 12"},
		{[]string{"-budget", "1e30GiB"}, 2, "-budget"},
		{[]string{"-budget", "lots"}, 2, "-budget"},
		{[]string{"-class", "Maybe"}, 2, `"Maybe"`},
		{[]string{"-class", "True"}, 0, `"class":"True"`},
		{[]string{"-class", "all"}, 0, `"classes":["False","True"]`},
		{[]string{"-class", "All"}, 2, `"All"`},
		{[]string{"-class", "-1"}, 2, `"-1"`},
		{[]string{"-class", "2"}, 2, `"2"`},
		{[]string{"-format", "bogus"}, 2, `-format "bogus"`},
		{[]string{"-m", "0"}, 2, "m = 0"},
		{[]string{"-m", "-3"}, 2, "m"},
		{[]string{"-m", "NaN"}, 2, "m"},
		{[]string{"-u", "0"}, 2, "u = 0"},
		{[]string{"-u", "+Inf"}, 2, "u"},
		{[]string{"-k", "0"}, 2, "-k applies to"},
		{[]string{"-lrp-bias", "1"}, 2, "-lrp-bias applies to -model only"},
		{[]string{"-features"}, 2, "-features applies to -model only"},
		{[]string{"-vocab", "v.txt"}, 2, "-vocab applies to -model only"},
		{[]string{"-v=maybe"}, 2, "-v"},
		{[]string{"-v="}, 2, "-v"},
		{[]string{"-v"}, 0, `"delta"`},
		{[]string{"-nosuchflag"}, 2, "nosuchflag"},
	} {
		args := append(append(append([]string{}, base...), c.args...), "abcd")
		if c.args[0] == "-k" { // bracket has k
			args = append([]string{"attribute", "-net", "bracket", "-method", "ig"}, c.args...)
			args = append(args, "([")
			c.want = "stack size k = 0"
		}
		status, out, errOut := runCLI(t, "", args...)
		if status != c.status {
			t.Errorf("%v: status %d, want %d (stderr %q)", c.args, status, c.status, errOut)
			continue
		}
		where := errOut
		if c.status == 0 {
			where = out
		}
		if !strings.Contains(where, c.want) {
			t.Errorf("%v: output %q lacks %q", c.args, where, c.want)
		}
	}
}

// Flags after the inputs are flags, not inputs, and give the same output
// as before them.
func TestFlagsAfterInputs(t *testing.T) {
	_, want, _ := runCLI(t, "", "attribute", "-net", "sp-counter", "-method", "ig", "-steps", "5", "ab")
	for _, args := range [][]string{
		{"attribute", "-net", "sp-counter", "-method", "ig", "ab", "-steps", "5"},
		{"attribute", "ab", "-net", "sp-counter", "-method", "ig", "-steps", "5"},
		{"attribute", "-net", "sp-counter", "ab", "-method", "ig", "-steps", "5"},
	} {
		status, out, errOut := runCLI(t, "", args...)
		if status != 0 || out != want {
			t.Errorf("%v: status %d, %q (stderr %q); want %q", args, status, out, errOut, want)
		}
	}
	// "--" ends the flags: what follows is an input.
	status, _, errOut := runCLI(t, "", "attribute", "-net", "sp-counter", "-method", "ig", "--", "-steps")
	if status != 1 || !strings.Contains(errOut, `"-steps"`) {
		t.Errorf("after --: status %d, stderr %q", status, errOut)
	}
}

// An input too long for the budget is refused with its size, without
// echoing it whole; a long bad input is quoted by its start only.
func TestLongInputs(t *testing.T) {
	long := strings.Repeat("ab", 200000)
	status, out, errOut := runCLI(t, long+"\nab\n", "attribute", "-net", "sp-counter", "-method", "ig", "-budget", "2MiB")
	if status != 1 || !strings.Contains(errOut, "400000 tokens need") || len(errOut) > 1000 || len(decode(t, out)) != 1 {
		t.Fatalf("status %d, %d records, stderr (%d bytes) %.300q", status, len(decode(t, out)), len(errOut), errOut)
	}
	bad := strings.Repeat("ab", 50000) + "x"
	status, _, errOut = runCLI(t, bad+"\n", "attribute", "-net", "sp-counter", "-method", "lrp")
	if status != 1 || len(errOut) > 1000 || !strings.Contains(errOut, "unknown symbol 'x' at position 100000") || !strings.Contains(errOut, "(100001 bytes)") {
		t.Fatalf("status %d, stderr (%d bytes) %.300q", status, len(errOut), errOut)
	}
}
