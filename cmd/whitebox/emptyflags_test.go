package main

import (
	"flag"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/score"
)

// An explicit empty value is refused, naming the flag and what it takes,
// never quietly replaced by the default (issue 39, case 3): every string
// flag of attribute (found from its flag set, so that a new one is
// checked too) and of the other commands.
func TestEmptyFlagValues(t *testing.T) {
	type run struct {
		args []string // the flag is given "" after them
		flag string
	}
	var runs []run
	cfg := score.DefaultConfig()
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	cfg.RegisterFlags(fs, "")
	fs.VisitAll(func(fl *flag.Flag) {
		if _, ok := fl.Value.(flag.Getter).Get().(string); ok {
			runs = append(runs, run{[]string{"attribute", "-model", testModel, "-method", "ig"}, fl.Name})
		}
	})
	if len(runs) < 18 {
		t.Fatalf("only %d string flags of attribute found", len(runs))
	}
	runs = append(runs, run{[]string{"attribute", "-net", "counting", "-method", "ig"}, "format"})
	for _, name := range []string{"model", "embedding", "lstm", "decoder", "head", "act", "verify"} {
		runs = append(runs, run{[]string{"inspect", "-model", testModel}, name})
	}
	for _, name := range []string{"net", "scores", "class", "method", "format", "len"} {
		runs = append(runs, run{[]string{"evaluate", "-net", "counting", "-n", "2"}, name})
	}
	for _, name := range []string{"net", "len"} {
		runs = append(runs, run{[]string{"generate", "-net", "counting", "-n", "2"}, name})
	}
	for _, name := range []string{"net", "dfa", "o"} {
		runs = append(runs, run{[]string{"export", "-net", "counting", "-o", t.TempDir() + "/x.safetensors"}, name})
	}
	for _, name := range []string{"format", "out"} {
		runs = append(runs, run{[]string{"reproduce", "-table", "3"}, name})
	}
	for _, name := range []string{"net", "format", "len"} {
		runs = append(runs, run{[]string{"metrics", "-n", "1"}, name})
	}
	for _, r := range runs {
		args := append(append([]string{}, r.args...), "-"+r.flag, "")
		if r.args[0] == "attribute" {
			args = append(args, "1 2") // an input
		}
		status, out, errOut := runCLI(t, "", args...)
		want := "whitebox " + r.args[0] + ": -" + r.flag + ": empty; give "
		if status != 2 || out != "" || !strings.HasPrefix(errOut, want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: status %d, stdout %.80q, stderr %q; want 2 and %q", args, status, out, errOut, want)
		}
	}
	// The ones the issue names, word for word.
	for args, want := range map[string]string{
		"-head":     "whitebox attribute: -head: empty; give hn, hn-bf, last, mean, max, attention or auto\n",
		"-span":     "whitebox attribute: -span: empty; give i:j, two token positions counted from 0 (e.g. 2:4)\n",
		"-baseline": "whitebox attribute: -baseline: empty; give zero or id:N (the embedding row of token N)\n",
		"-class":    "whitebox attribute: -class: empty; give a class by name or by index from 0, or all\n",
	} {
		if _, _, errOut := runCLI(t, "", "attribute", "-model", testModel, "-method", "cd", args, "", "1 2"); errOut != want {
			t.Errorf("%s: %q, want %q", args, errOut, want)
		}
	}
	// -data is repeated: an empty one among others is refused too.
	if status, _, errOut := runCLI(t, "", "reproduce", "-table", "4", "-data", "x.csv", "-data", ""); status != 2 || !strings.Contains(errOut, "-data: empty; give a data file") {
		t.Errorf("-data x.csv -data '': status %d, stderr %q", status, errOut)
	}
}

// -baseline id:abc says that abc is not a token id, not that the id is
// out of range.
func TestBaselineNotAnID(t *testing.T) {
	for value, want := range map[string]string{
		"id:abc":                         `-baseline id:abc: "abc" is not an integer token id (id:N, 0 ≤ N < 40)`,
		"id:":                            `-baseline id:: "" is not an integer token id`,
		"id:1.5":                         `"1.5" is not an integer token id`,
		"id:99999999999999999999":        "-baseline id:99999999999999999999: the token id must be in [0, 40)",
		"id:" + strings.Repeat("x", 100): `-baseline id:xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…: "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"… (100 bytes) is not an integer token id`,
	} {
		status, _, errOut := runCLI(t, "", "attribute", "-model", testModel, "-method", "ig", "-baseline", value, "1 2")
		if status != 2 || !strings.Contains(errOut, want) {
			t.Errorf("-baseline %.20s: status %d, stderr %q; want 2 and %q", value, status, errOut, want)
		}
	}
}
