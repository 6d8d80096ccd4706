package main

import (
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/whitebox"
)

func TestGenerate(t *testing.T) {
	for _, name := range whitebox.Names() {
		status, out, errOut := runCLI(t, "", "generate", "-net", name, "-n", "50", "-len", "3..9", "-seed", "7")
		if status != 0 {
			t.Fatalf("%s: status %d, %s", name, status, errOut)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != 50 {
			t.Fatalf("%s: %d lines, want 50", name, len(lines))
		}
		net, _ := whitebox.New(name, whitebox.Config{})
		for i, s := range lines {
			if len(s) < 3 || len(s) > 9 {
				t.Errorf("%s line %d: %q has length %d", name, i+1, s, len(s))
			}
			if _, err := net.Task.Encode(s); err != nil {
				t.Errorf("%s line %d: %v", name, i+1, err)
			}
		}
		_, again, _ := runCLI(t, "", "generate", "-net", name, "-n", "50", "-len", "3..9", "-seed", "7")
		if again != out {
			t.Errorf("%s: a second run with the same seed differs", name)
		}
		_, other, _ := runCLI(t, "", "generate", "-net", name, "-n", "50", "-len", "3..9", "-seed", "8")
		if other == out {
			t.Errorf("%s: seeds 7 and 8 give the same lines", name)
		}
	}
	status, out, _ := runCLI(t, "", "generate", "-net", "counting", "-n", "4", "-len", "6")
	if status != 0 || len(strings.Fields(out)) != 4 {
		t.Fatalf("exact length: status %d, %q", status, out)
	}
	for _, s := range strings.Fields(out) {
		if len(s) != 6 {
			t.Errorf("-len 6 gave %q", s)
		}
	}
}

func TestGenerateUsage(t *testing.T) {
	for _, args := range [][]string{
		{"generate"},
		{"generate", "-net", "nope"},
		{"generate", "-net", "counting", "-len", "0"},
		{"generate", "-net", "counting", "-len", "5..3"},
		{"generate", "-net", "counting", "-len", "x"},
		{"generate", "-net", "counting", "-n", "-1"},
		{"generate", "-net", "counting", "-k", "3"},
		{"generate", "-net", "counting", "-m", "0"},
		{"generate", "-net", "counting", "extra"},
		{"generate", "-net", "counting", "-n", "10000000", "-len", "10000000"},
	} {
		if status, _, errOut := runCLI(t, "", args...); status != 2 || errOut == "" {
			t.Errorf("%v: status %d, stderr %q; want 2 and a message", args, status, errOut)
		}
	}
}

func TestGroundTruthHelp(t *testing.T) {
	for _, cmd := range []string{"generate", "evaluate", "export"} {
		status, out, _ := runCLI(t, "", "help", cmd)
		if status != 0 || !strings.Contains(out, "Usage: whitebox "+cmd) {
			t.Errorf("help %s: status %d, %q", cmd, status, out)
		}
	}
}
