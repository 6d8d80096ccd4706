package score

import (
	"flag"
	"strings"
	"testing"
)

// A string flag given empty is refused by New, for a Go program or a
// pipeline that builds its Config from flags as for the command, never
// replaced by the default (issue 39, case 3).
func TestNewEmptyValue(t *testing.T) {
	base := DefaultConfig()
	base.Model, base.Method = "../model/testdata/bi2.safetensors", "ig"
	for _, fl := range base.stringFlags() {
		name := fl[0]
		if ValueHint(name) == "" {
			t.Errorf("-%s has no hint", name)
		}
		cfg := base
		fs := flag.NewFlagSet("", flag.ContinueOnError)
		cfg.RegisterFlags(fs, "wb-")
		if err := fs.Parse([]string{"-wb-" + name + "="}); err != nil {
			t.Fatal(err)
		}
		cfg.MarkSet(fs, "wb-")
		want := "-" + name + ": empty; give " + ValueHint(name)
		if _, err := New(cfg); err == nil || err.Error() != want {
			t.Errorf("-%s \"\": %v, want %q", name, err, want)
		}
	}
	// Not given, "" is the default.
	if _, err := New(base); err != nil {
		t.Fatal(err)
	}
}

func TestOrList(t *testing.T) {
	if got := orList([]string{"a", "b", "c"}); got != "a, b or c" {
		t.Error(got)
	}
	if got := ValueHint("method"); !strings.HasPrefix(got, "occlusion, saliency") || !strings.HasSuffix(got, " or cd") {
		t.Error(got)
	}
}
