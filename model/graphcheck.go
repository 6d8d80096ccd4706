package model

import (
	"fmt"

	"github.com/whitebox-lstm/whitebox/cell"
)

// CheckLength refuses an input of t tokens that the model's file cannot
// take: another length than an ONNX graph's fixed one (FixedLength).
func (m *Model) CheckLength(t int) error {
	if m != nil && m.graph != nil {
		if err := m.graph.CheckLength(t); err != nil {
			return fmt.Errorf("model: %w", err)
		}
	}
	return nil
}

// CheckGraph proves, for a model read from an ONNX file, that the graph
// computes the logits the engine computed for this input: it evaluates the
// graph (package onnx's float64 interpreter) on the input at its own length
// and compares (onnx.CheckTolerance, relative). Load checked the graph at a
// few short lengths only; a graph that depends on the length (a truncation
// x[:, :max_len], a pooled window) agrees there and differs later, so every
// attributed input is checked: ids for a model with an embedding, x (its T
// rows of features) for a dense one. logits are the engine's (an attrib
// Result's Logits). maxBytes bounds the evaluation's memory; GraphBytes
// estimates it. For other formats (their weights are the model) it does
// nothing and returns nil.
//
// A difference is an *onnx.LengthError; too little memory an
// *onnx.EvalBudgetError.
func (m *Model) CheckGraph(ids []int, x cell.Input, logits []float64, maxBytes int64) error {
	if m == nil || m.graph == nil {
		return nil
	}
	var feats []float64
	if m.Embedding == nil {
		feats = x.DenseValues()
	}
	if _, err := m.graph.CheckInput(m.Net, ids, feats, logits, maxBytes/8); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	return nil
}

// GraphBytes estimates the memory CheckGraph needs for an input of t
// tokens: per token and fixed (0 for a model not read from ONNX).
func (m *Model) GraphBytes() (perToken, fixed int64) {
	if m == nil || m.graph == nil {
		return 0, 0
	}
	p, f := m.graph.ValuesPerToken()
	return 8 * p, 8 * f
}
