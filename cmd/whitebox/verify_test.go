package main

import (
	"strings"
	"testing"
)

const headsDir = "../../model/testdata/heads/"

// A wrong or missing -head with -verify exits 2 naming the head that
// matches; -head auto finds it; a correct -verify changes no output byte.
func TestVerifyHead(t *testing.T) {
	m, v := headsDir+"mean_uni2.safetensors", headsDir+"mean_uni2.verify.jsonl"
	in := "1 2 3\n4 5\n"
	for _, args := range [][]string{
		{"-verify", v},
		{"-verify", v, "-head", "max"},
		{"-verify", v, "-head", "hn"},
	} {
		status, out, errOut := runCLI(t, in, append([]string{"attribute", "-model", m, "-method", "ig"}, args...)...)
		if status != 2 || out != "" || !strings.Contains(errOut, "the logits match -head mean") || !strings.Contains(errOut, "line ") {
			t.Errorf("%v: status %d, stdout %q, stderr %q", args, status, out, errOut)
		}
	}
	status, want, errOut := runCLI(t, in, "attribute", "-model", m, "-method", "ig", "-head", "mean")
	if status != 0 || errOut != "" || strings.Count(want, `"head":"mean"`) != 2 {
		t.Fatalf("status %d, stdout %q, stderr %q", status, want, errOut)
	}
	for _, args := range [][]string{{"-head", "mean", "-verify", v}, {"-head", "auto", "-verify", v}} {
		status, out, errOut := runCLI(t, in, append([]string{"attribute", "-model", m, "-method", "ig"}, args...)...)
		if status != 0 || out != want || errOut != "" {
			t.Errorf("%v: status %d, stderr %q, stdout\n%s\nwant\n%s", args, status, errOut, out, want)
		}
	}
}

// A two-Linear classifier: a missing or wrong -act with -verify names the
// right one; -head auto tries both.
func TestVerifyActivation(t *testing.T) {
	m, v := headsDir+"hn_bi1_fc12tanh.pt", headsDir+"hn_bi1_fc12tanh.verify.jsonl"
	for _, args := range [][]string{{"-verify", v}, {"-verify", v, "-act", "relu"}} {
		status, _, errOut := runCLI(t, "1 2\n", append([]string{"attribute", "-model", m, "-method", "gxi"}, args...)...)
		if status != 2 || !strings.Contains(errOut, "the logits match -head hn -act tanh") {
			t.Errorf("%v: status %d, stderr %q", args, status, errOut)
		}
	}
	status, out, errOut := runCLI(t, "1 2\n", "attribute", "-model", m, "-method", "gxi", "-head", "auto", "-verify", v)
	if status != 0 || !strings.Contains(out, `"head":"hn+tanh"`) {
		t.Errorf("status %d, stdout %q, stderr %q", status, out, errOut)
	}
}

// Without -head, metadata or -verify the head is assumed, and said once;
// the metadata's head is used silently.
func TestAssumedHeadNote(t *testing.T) {
	status, out, errOut := runCLI(t, "1 2\n3\n4 5 6\n", "attribute", "-model", headsDir+"mean_uni2.pt", "-method", "saliency")
	if status != 0 || strings.Count(errOut, "assuming -head hn") != 1 || !strings.Contains(errOut, "-verify FILE") || strings.Count(out, `"head":"hn"`) != 3 {
		t.Errorf("status %d, stdout %q, stderr %q", status, out, errOut)
	}
	status, out, errOut = runCLI(t, "1 2\n", "attribute", "-model", headsDir+"mean_bi1_seqtanh.safetensors", "-method", "saliency")
	if status != 0 || errOut != "" || !strings.Contains(out, `{"model":"`+headsDir+`mean_bi1_seqtanh.safetensors","head":"mean+tanh","method":"saliency"`) {
		t.Errorf("metadata: status %d, stdout %q, stderr %q", status, out, errOut)
	}
	status, out, errOut = runCLI(t, "", "attribute", "-net", "sp-fsa", "-method", "saliency", "ab")
	if status != 0 || errOut != "" || strings.Contains(out, "head") {
		t.Errorf("-net: status %d, stdout %q, stderr %q", status, out, errOut)
	}
}

// Issue 44, item 2: a default head that -verify checked is not "assumed".
func TestVerifiedHeadNoNote(t *testing.T) {
	status, out, errOut := runCLI(t, "1 2\n", "attribute", "-model", headsDir+"hnbf_uni2.pt", "-verify", headsDir+"hnbf_uni2.verify.jsonl", "-method", "saliency")
	if status != 0 || errOut != "" || !strings.Contains(out, `"head":"hn"`) {
		t.Errorf("status %d, stdout %q, stderr %q", status, out, errOut)
	}
}

func TestHeadFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"attribute", "-model", headsDir + "mean_uni2.pt", "-method", "ig", "-head", "auto"}, "-head auto needs -verify"},
		{[]string{"attribute", "-model", headsDir + "mean_uni2.pt", "-method", "ig", "-head", "avg"}, `unknown head "avg"`},
		{[]string{"attribute", "-model", headsDir + "mean_uni2.pt", "-method", "ig", "-act", "gelu"}, `-act "gelu"`},
		{[]string{"attribute", "-model", headsDir + "mean_uni2.pt", "-method", "ig", "-act", "relu"}, "one Linear layer"},
		{[]string{"attribute", "-net", "sp-fsa", "-method", "ig", "-head", "mean", "ab"}, "-head applies to -model only"},
		{[]string{"attribute", "-model", headsDir + "mean_uni2.pt", "-method", "ig", "-verify", headsDir + "max_uni1.json"}, "max_uni1.json:1:"},
		{[]string{"attribute", "-model", headsDir + "mean_uni2.pt", "-method", "ig", "-verify", "/nonexistent"}, "-verify"},
		{[]string{"inspect", "-model", headsDir + "mean_uni2.pt", "-head", "auto"}, "-head auto is for attribute"},
	} {
		status, _, errOut := runCLI(t, "1\n", c.args...)
		if status != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: status %d, stderr %q; want 2 and %q", c.args, status, errOut, c.want)
		}
	}
}

func TestInspectVerify(t *testing.T) {
	status, out, errOut := runCLI(t, "", "inspect", "-model", headsDir+"last_bi2.safetensors", "-verify", headsDir+"last_bi2.verify.jsonl")
	if status != 0 {
		t.Fatalf("status %d: %s", status, errOut)
	}
	// Issue 44, item 2: the decoder shown, and the *, are the match's.
	for _, want := range []string{"verify (", "  hn         no match", "* last       match    worst relative difference", "  mean       no match", "the logits match -head last\n",
		"on output[:, -1, :] (head last, verified)"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect -verify lacks %q:\n%s", want, out)
		}
	}
	status, out, _ = runCLI(t, "", "inspect", "-model", headsDir+"hnbf_uni2.pt", "-verify", headsDir+"hnbf_uni2.verify.jsonl")
	if status != 0 || !strings.Contains(out, "(hn = hn-bf = last: one function for one direction)") || !strings.Contains(out, "the logits match -head hn\n") {
		t.Errorf("unidirectional: %d\n%s", status, out)
	}
}

// -baseline id:N gives the library's scores with the embedding row of N;
// -baseline zero is today's output byte for byte.
func TestBaselineFlag(t *testing.T) {
	_, plain, _ := runCLI(t, "3 1 4\n", "attribute", "-model", testModel, "-method", "ig")
	status, zero, errOut := runCLI(t, "3 1 4\n", "attribute", "-model", testModel, "-method", "ig", "-baseline", "zero")
	if status != 0 || zero != plain || strings.Contains(zero, "baseline") {
		t.Fatalf("-baseline zero: status %d, stderr %q\n%s\nwant\n%s", status, errOut, zero, plain)
	}
	for _, method := range []string{"ig", "occlusion", "deeplift"} {
		status, out, errOut := runCLI(t, "3 1 4\n", "attribute", "-model", testModel, "-method", method, "-baseline", "id:7")
		if status != 0 {
			t.Fatalf("%s: status %d: %s", method, status, errOut)
		}
		_, ref, _ := runCLI(t, "3 1 4\n", "attribute", "-model", testModel, "-method", method)
		if r := decode(t, out)[0]; r.Scores[0] == decode(t, ref)[0].Scores[0] || r.Baseline != "id:7" || !strings.Contains(out, `"head":"hn","baseline":"id:7","method"`) {
			t.Errorf("%s: -baseline id:7: %s", method, out)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-model", testModel, "-method", "lrp", "-baseline", "id:0"}, "for ig, occlusion and deeplift only"},
		{[]string{"-model", testModel, "-method", "ig", "-baseline", "id:40"}, "must be in [0, 40)"},
		{[]string{"-model", testModel, "-method", "ig", "-baseline", "pad"}, "zero or id:N"},
		{[]string{"-net", "sp-fsa", "-method", "ig", "-baseline", "id:0"}, "-baseline applies to -model only"},
	} {
		status, _, errOut := runCLI(t, "3 1 4\n", append([]string{"attribute"}, c.args...)...)
		if status != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: status %d, stderr %q; want 2 and %q", c.args, status, errOut, c.want)
		}
	}
}

// inspect -verify on two Linear layers without -act: both activations;
// the decoder shown is the match's (issue 44, item 2).
func TestInspectVerifyActivation(t *testing.T) {
	status, out, errOut := runCLI(t, "", "inspect", "-model", headsDir+"max_bi2_seqrelu.pt", "-verify", headsDir+"max_bi2_seqrelu.verify.jsonl")
	if status != 0 || !strings.Contains(out, "  max+tanh   no match") || !strings.Contains(out, "* max+relu   match") || !strings.Contains(out, "the logits match -head max -act relu\n") ||
		!strings.Contains(out, "→ relu → ") || !strings.Contains(out, "(head max, verified)") || strings.Count(out, "* ") != 1 {
		t.Errorf("status %d, stderr %q\n%s", status, errOut, out)
	}
}

// Issue 44, item 2: inspect on two Linear layers with no -act (and no
// metadata) shows the file as read, the activation unknown, and how to
// choose it; exit 0. A wrong name is still an error.
func TestInspectUnknownActivation(t *testing.T) {
	status, out, errOut := runCLI(t, "", "inspect", "-model", headsDir+"last_uni1_fc12relu.pt")
	for _, want := range []string{"fc1: Linear(6 → 5) → activation unknown → fc2: Linear(5 → 3) on h_n[-1] (head hn, default)",
		"fc1.weight                       F32   [5 6]          hidden layer weight", "lstm.weight_ih_l0", "embedding.weight",
		"activation: unknown (nothing in the file says what is between fc1 and fc2)", "-act relu or -act tanh", "-head auto -verify FILE"} {
		if status != 0 || errOut != "" || !strings.Contains(out, want) {
			t.Errorf("status %d, stderr %q: lacks %q\n%s", status, errOut, want, out)
		}
	}
	if strings.Contains(out, "relu →") {
		t.Errorf("the activation shown as relu:\n%s", out)
	}
	status, out, _ = runCLI(t, "", "inspect", "-model", headsDir+"last_uni1_fc12relu.pt", "-act", "tanh")
	if status != 0 || !strings.Contains(out, "→ tanh → ") || strings.Contains(out, "unknown") {
		t.Errorf("-act tanh: status %d\n%s", status, out)
	}
	status, _, errOut = runCLI(t, "", "inspect", "-model", headsDir+"last_uni1_fc12relu.pt", "-decoder", "nope")
	if status != 2 || !strings.Contains(errOut, "nope") {
		t.Errorf("-decoder nope: status %d, stderr %q", status, errOut)
	}
}

// Issue 44, item 3: the library names Options.Act, the command -act.
func TestActivationFlagName(t *testing.T) {
	status, _, errOut := runCLI(t, "1 2\n", "attribute", "-model", headsDir+"last_uni1_fc12relu.pt", "-method", "gxi")
	if status != 2 || !strings.Contains(errOut, "give the activation between them with -act (activations: relu, tanh)") || strings.Contains(errOut, "Options.") {
		t.Errorf("status %d, stderr %q", status, errOut)
	}
}
