package main

import (
	"strings"
	"testing"
)

// Issue 24, item 3: one convention for every classifier: -class takes a
// class's name or its index from 0, and the positions in errors count from
// 0 (the index into "tokens" and "scores").
func TestOneConvention(t *testing.T) {
	for _, subject := range [][]string{{"-net", "counting"}, {"-model", testModel}} {
		byIndex := append(append([]string{"attribute"}, subject...), "-method", "saliency", "-class", "1")
		input := "abba"
		if subject[0] == "-model" {
			input = "3 1 4 1"
		}
		status, out, errOut := runCLI(t, input+"\n", byIndex...)
		if status != 0 {
			t.Fatalf("%v: status %d, %s", byIndex, status, errOut)
		}
		if subject[0] == "-net" {
			_, byName, _ := runCLI(t, input+"\n", append(byIndex[:len(byIndex)-1], "True")...)
			if out != byName || decode(t, out)[0].Class != "True" {
				t.Errorf("-net: -class 1 gives %s, -class True %s", out, byName)
			}
		} else if decode(t, out)[0].Class != "1" {
			t.Errorf("-model: -class 1 gives %s", out)
		}
		args := append(append([]string{"attribute"}, subject...), "-method", "saliency", "-class", "9")
		if status, _, errOut := runCLI(t, "", args...); status != 2 || !strings.Contains(errOut, "or an index in [0, ") {
			t.Errorf("%v: status %d, %q", args, status, errOut)
		}
	}
	// The bad token is the third (index 2) in both.
	_, _, errNet := runCLI(t, "abx\n", "attribute", "-net", "counting", "-method", "saliency")
	_, _, errModel := runCLI(t, "3 1 x\n", "attribute", "-model", testModel, "-method", "saliency")
	if !strings.Contains(errNet, "at position 2") || !strings.Contains(errModel, "at position 2") {
		t.Errorf("positions: -net %q, -model %q; want position 2 in both", errNet, errModel)
	}
}
