package score

import (
	"errors"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/model"
)

const headsDir = "../model/testdata/heads/"

// Issue 44, item 3: package model and package verify name their options;
// the command's messages name its flags.
func TestLibraryOptionsAsFlags(t *testing.T) {
	_, err := LoadModel(headsDir+"last_uni1_fc12relu.pt", model.Names{}, "", "", "", "", 0)
	if !errors.Is(err, model.ErrNoActivation) || !strings.Contains(err.Error(), "give the activation between them with -act (activations: relu, tanh)") {
		t.Errorf("two Linear layers: %v", err)
	}
	v := headsDir + "mean_uni2.verify.jsonl"
	_, err = LoadModel(headsDir+"mean_uni2.pt", model.Names{}, "hn", "", "", v, 0)
	if err == nil || !strings.Contains(err.Error(), "-verify "+v+": the logits do not match -head hn: line ") ||
		!strings.HasSuffix(err.Error(), "; the logits match -head mean") || strings.Contains(err.Error(), "Options") {
		t.Errorf("a wrong head: %v", err)
	}
	_, err = LoadModel(headsDir+"hn_bi1_fc12tanh.pt", model.Names{}, "", "relu", "", v, 0)
	if err == nil || !strings.Contains(err.Error(), "-verify "+v+": ") || strings.Contains(err.Error(), "Options") {
		t.Errorf("another model's logits: %v", err)
	}
	for lib, cmd := range map[string]string{
		"the logits match Options.Head = hn with Options.Act = tanh, and Options.Head = max with Options.Act = relu": "the logits match -head hn -act tanh, and -head max -act relu",
		"(the closest, Options.Head = hn-bf, differs by 0.1 at line 2)":                                              "(the closest, -head hn-bf, differs by 0.1 at line 2)",
		"— give Options.Head": "— give -head",
		"more than verify.Open's budget 8388608 allows: raise verify.Open's budget, or": "more than -budget 8388608 allows: raise -budget, or",
	} {
		if got := flagNames.Replace(lib); got != cmd {
			t.Errorf("%q: %q, want %q", lib, got, cmd)
		}
	}
}

// Issue 44, item 2: a head that -verify checked is no longer assumed, and
// inspect's verdicts point to the head that matches.
func TestVerifiedHead(t *testing.T) {
	m, err := LoadModel(headsDir+"hnbf_uni2.pt", model.Names{}, "", "", "", headsDir+"hnbf_uni2.verify.jsonl", 0)
	if err != nil || m.Head != cell.HeadHN || m.HeadSource != model.HeadFromVerify {
		t.Fatalf("the default head, verified: %v", err)
	}
	m, err = LoadModel(headsDir+"mean_uni2.pt", model.Names{}, "", "", "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	shown, report, err := InspectVerify(m, headsDir+"mean_uni2.verify.jsonl", 0)
	if err != nil || shown.Head != cell.HeadMean || shown.HeadSource != model.HeadFromVerify || m.Head != cell.HeadHN {
		t.Fatalf("%v", err)
	}
	if !strings.Contains(report, "* mean       match") || !strings.Contains(report, "  hn         no match") || !strings.HasSuffix(report, "the logits match -head mean\n") {
		t.Errorf("report:\n%s", report)
	}
}
