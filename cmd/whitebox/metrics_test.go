package main

import (
	"strings"
	"testing"
)

func TestMetrics(t *testing.T) {
	status, out, errOut := runCLI(t, "", "metrics", "-net", "counting,bracket", "-n", "10", "-len", "2..8", "-format", "markdown")
	if status != 0 {
		t.Fatalf("status %d, %s", status, errOut)
	}
	for _, want := range []string{"counting: 10 inputs, 10 with ground truth", "bracket: 10 inputs", "| lrp |", "| infidelity ↓ |", "| metric | counting τ | counting agree % | bracket τ | bracket agree % |"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	_, again, _ := runCLI(t, "", "metrics", "-net", "counting,bracket", "-n", "10", "-len", "2..8", "-format", "markdown")
	if again != out {
		t.Error("a second run differs")
	}
	_, other, _ := runCLI(t, "", "metrics", "-net", "counting,bracket", "-n", "10", "-len", "2..8", "-format", "markdown", "-seed", "3")
	if other == out {
		t.Error("seeds differ, tables do not")
	}
}

func TestMetricsUsage(t *testing.T) {
	for _, args := range [][]string{
		{"metrics", "-net", "nope"},
		{"metrics", "-format", "json"},
		{"metrics", "-radius", "0"},
		{"metrics", "-steps", "0"},
		{"metrics", "-infidelity-samples", "0"},
		{"metrics", "-sensitivity-samples", "-1"},
		{"metrics", "-n", "-1"},
		{"metrics", "extra"},
	} {
		if status, _, _ := runCLI(t, "", args...); status != 2 {
			t.Errorf("%q: status %d, want 2", args, status)
		}
	}
	if status, out, _ := runCLI(t, "", "help", "metrics"); status != 0 || !strings.Contains(out, "Kendall") {
		t.Errorf("help metrics: status %d, %q", status, out)
	}
}
