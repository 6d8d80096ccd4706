package model

import (
	"errors"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
)

// Issue 44, item 3: a library's messages name its options (Options.Act,
// Names.*), never the command's flags, which package score maps them to.
func TestMessagesNameOptions(t *testing.T) {
	_, err := Load("testdata/heads/last_uni1_fc12relu.pt", Options{})
	if !errors.Is(err, ErrNoActivation) || !strings.Contains(err.Error(), "(fc1 → fc2): give the activation between them with Options.Act (activations: relu, tanh)") || strings.Contains(err.Error(), "-act") {
		t.Errorf("two Linear layers without an activation: %v", err)
	}
	_, err = Load("testdata/onnx/mean_bi2_o17.onnx", Options{Names: Names{LSTM: "rnn"}})
	if err == nil || !strings.Contains(err.Error(), "Names.Embedding, Names.LSTM and Names.Decoder name the tensors of a state_dict") || strings.Contains(err.Error(), "-lstm") {
		t.Errorf("names for an ONNX file: %v", err)
	}
}

// Issue 44, item 2: a copy of a two-Linear model with its activation
// unknown (ActNone) reads so in Summary, not as the one it was built with.
func TestSummaryActivationUnknown(t *testing.T) {
	m, err := Load("testdata/heads/last_uni1_fc12relu.pt", Options{Act: cell.ActReLU})
	if err != nil {
		t.Fatal(err)
	}
	c := *m
	c.Act = cell.ActNone
	if s := c.Summary(); !strings.Contains(s, "fc1: Linear(6 → 5) → activation unknown → fc2: Linear(5 → 3)") {
		t.Errorf("summary:\n%s", s)
	}
	if s := m.Summary(); !strings.Contains(s, "→ relu → fc2") {
		t.Errorf("summary:\n%s", s)
	}
}
