package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestAttributeClassAll: -class all writes one record per input whose
// "classes" name the classes and whose "scores", "delta", "steps" and
// "features" hold, class by class, the numbers of the -class k runs, to
// the last digit; the single-class records keep their layout.
func TestAttributeClassAll(t *testing.T) {
	type allRecord struct {
		Classes    []string          `json:"classes"`
		Class      *string           `json:"class"`
		Prediction string            `json:"prediction"`
		Scores     [][]json.Number   `json:"scores"`
		Delta      []json.Number     `json:"delta"`
		Steps      []int             `json:"steps"`
		Features   [][][]json.Number `json:"features"`
		Logits     map[string]any    `json:"logits"`
	}
	type oneRecord struct {
		Class    string          `json:"class"`
		Scores   []json.Number   `json:"scores"`
		Delta    *json.Number    `json:"delta"`
		Steps    int             `json:"steps"`
		Features [][]json.Number `json:"features"`
	}
	for _, sub := range []struct {
		args   []string
		inputs []string
		extra  [][]string
	}{
		{[]string{"-net", "sp-counter"}, []string{"abcdab", "aabbccdd"}, [][]string{{}, {"-steps", "auto"}}},
		{[]string{"-net", "bracket"}, []string{"(([]))[", "()"}, [][]string{{}}},
		{[]string{"-model", testModel}, []string{"3 14 15 9", "2 6"}, [][]string{{}, {"-features", "-steps", "auto", "-tol", "1e-4"}, {"-baseline", "id:1"}}},
	} {
		for _, method := range []string{"occlusion", "saliency", "gxi", "ig", "lrp", "deeplift"} {
			for _, extra := range sub.extra {
				if (len(extra) > 0 && extra[0] == "-baseline") && method != "ig" && method != "occlusion" && method != "deeplift" {
					continue
				}
				args := append(append(append([]string{"attribute", "-method", method}, sub.args...), extra...), "-class", "all")
				args = append(args, sub.inputs...)
				where := strings.Join(args, " ")
				status, out, errOut := runCLI(t, "", args...)
				if status != 0 {
					t.Fatalf("%s: status %d: %s", where, status, errOut)
				}
				lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
				if len(lines) != len(sub.inputs) {
					t.Fatalf("%s: %d lines for %d inputs", where, len(lines), len(sub.inputs))
				}
				for i, line := range lines {
					var all allRecord
					if err := json.Unmarshal([]byte(line), &all); err != nil {
						t.Fatalf("%s: %v: %s", where, err, line)
					}
					if all.Class != nil || len(all.Classes) < 2 || len(all.Scores) != len(all.Classes) || len(all.Logits) != len(all.Classes) {
						t.Fatalf("%s: not a record of every class: %s", where, line)
					}
					for k, name := range all.Classes {
						single := append(append(append([]string{"attribute", "-method", method}, sub.args...), extra...), "-class", fmt.Sprint(k), sub.inputs[i])
						status, out, errOut := runCLI(t, "", single...)
						if status != 0 {
							t.Fatalf("%s: status %d: %s", strings.Join(single, " "), status, errOut)
						}
						var one oneRecord
						if err := json.Unmarshal([]byte(out), &one); err != nil {
							t.Fatal(err)
						}
						if one.Class != name {
							t.Fatalf("%s: class %q, want %q", where, one.Class, name)
						}
						if fmt.Sprint(one.Scores) != fmt.Sprint(all.Scores[k]) {
							t.Errorf("%s input %d class %s: scores %v, the single run's %v", where, i, name, all.Scores[k], one.Scores)
						}
						if (one.Delta != nil) != (all.Delta != nil) || (one.Delta != nil && *one.Delta != all.Delta[k]) {
							t.Errorf("%s input %d class %s: delta %v, the single run's %v", where, i, name, all.Delta, one.Delta)
						}
						if (one.Steps != 0) != (all.Steps != nil) || (one.Steps != 0 && one.Steps != all.Steps[k]) {
							t.Errorf("%s input %d class %s: steps %v, the single run's %v", where, i, name, all.Steps, one.Steps)
						}
						if (one.Features != nil) != (all.Features != nil) || (one.Features != nil && fmt.Sprint(one.Features) != fmt.Sprint(all.Features[k])) {
							t.Errorf("%s input %d class %s: features differ from the single run's", where, i, name)
						}
					}
				}
			}
		}
	}
}

// TestAttributeClassAllFormats: the heatmap formats give one heatmap per
// class, in class order (text and latex: a line each, naming the class;
// html: a row each).
func TestAttributeClassAllFormats(t *testing.T) {
	base := []string{"attribute", "-net", "sp-counter", "-method", "lrp", "-class", "all"}
	status, out, errOut := runCLI(t, "", append(base, "-format", "text", "abcd", "abca")...)
	if status != 0 {
		t.Fatal(errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 || !strings.Contains(lines[0], "class False") || !strings.Contains(lines[1], "class True") || !strings.HasPrefix(lines[2], "abca") {
		t.Errorf("text: %q", out)
	}
	status, out, errOut = runCLI(t, "", append(base, "-format", "latex", "abcd")...)
	if status != 0 {
		t.Fatal(errOut)
	}
	if lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); len(lines) != 2 || !strings.HasSuffix(lines[0], "% class False: abcd") || !strings.HasSuffix(lines[1], "% class True: abcd") {
		t.Errorf("latex: %q", out)
	}
	status, out, errOut = runCLI(t, "", append(base, "-format", "html", "abcd")...)
	if status != 0 {
		t.Fatal(errOut)
	}
	if !strings.Contains(out, "class False (predicted") || !strings.Contains(out, "class True (predicted") {
		t.Errorf("html: no row per class")
	}
}
