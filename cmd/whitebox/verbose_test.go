package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestAttributeVerbosePlan: -v says, for each input in input order, the
// schedule IG or occlusion chose (checkpoints for a long input in a small
// budget, the whole trace for a short one) and changes no output; the
// methods without a plan say none.
func TestAttributeVerbosePlan(t *testing.T) {
	long := strings.Repeat("ab", 1500)
	in := long + "\nabab\n"
	base := []string{"attribute", "-net", "sp-counter", "-budget", "8MiB"}
	for _, c := range []struct {
		method string
		want   []string // regexps, one per stderr line that names a plan, in order
	}{
		{"ig", []string{
			`^whitebox attribute: line 1: "(ab)+"… \(3000 bytes\): plan: IG of 50 steps on T = 3000: \d+ workers? × \d+ lanes a batch[^;]*; checkpoints every \d+ steps \(\d+ segments\); [\d.]+ [KM]iB of a [\d.]+ [KM]iB budget$`,
			`^whitebox attribute: line 2: "abab": plan: IG of 50 steps on T = 4: \d+ workers? × \d+ lanes a batch[^;]*; the whole trace; \d+ KiB of a [\d.]+ [KM]iB budget$`}},
		{"occlusion", []string{
			`^whitebox attribute: line 1: .*: plan: occlusion of T = 3000: \d+ workers? × \d+ lanes a batch; .* budget$`,
			`^whitebox attribute: line 2: "abab": plan: occlusion of T = 4: .* budget$`}},
		{"lrp", nil},
	} {
		args := append(append([]string{}, base...), "-method", c.method)
		st0, out0, _ := runCLI(t, in, args...)
		status, out, stderr := runCLI(t, in, append(args, "-v")...)
		if status != st0 || out != out0 {
			t.Errorf("%s: -v changed the output: status %d, want %d", c.method, status, st0)
		}
		var plans []string
		for _, line := range strings.Split(stderr, "\n") {
			if strings.Contains(line, ": plan: ") {
				plans = append(plans, line)
			}
		}
		if len(plans) != len(c.want) {
			t.Fatalf("%s: %d plan lines, want %d:\n%s", c.method, len(plans), len(c.want), stderr)
		}
		for i, re := range c.want {
			if !regexp.MustCompile(re).MatchString(plans[i]) {
				t.Errorf("%s: plan line %d\n%s\ndoes not match %s", c.method, i+1, plans[i], re)
			}
		}
	}
}
