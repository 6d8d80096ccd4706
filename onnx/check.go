package onnx

import (
	"fmt"
	"math"

	"github.com/whitebox-lstm/whitebox/cell"
)

// CheckTolerance is the largest relative difference Check accepts between
// the graph's logits (this package's interpreter) and the engine's, both
// float64.
const CheckTolerance = 1e-9

// Check evaluates the graph on the probes (ProbeLengths, deterministic
// ids) and compares its logits with net's, the model built from r. It
// returns the largest relative difference seen; a difference above
// CheckTolerance is an error naming the first node whose output differs
// from the engine's: an LSTM node (its h_n against the engine's layers up
// to it), the head's node, or the classifier.
func (r *Recognized) Check(net *cell.Stacked) (float64, error) {
	run, err := cell.NewStackedRunner(net)
	if err != nil {
		return 0, err
	}
	defer run.Close()
	worst := 0.0
	for k, t := range r.ProbeLengths() {
		ids, feats := r.probeInput(k+100, t)
		env, err := r.prog.Run(r.input(ids, feats), nil)
		if err != nil {
			return 0, err
		}
		x := cell.Dense(feats, t)
		y, err := run.Forward(x)
		if err != nil {
			return 0, err
		}
		d := relDiff(r.prog.Output(env).F, y)
		worst = max(worst, d)
		if d > CheckTolerance {
			return worst, fmt.Errorf("the graph and the model read from it differ on ids %v (features %.3g…; relative difference %.3g of the logits): %v", ids, feats[:min(3, len(feats))], d, r.diagnose(env, x, net))
		}
	}
	return worst, nil
}

// relDiff is the largest |a−b| relative to b's largest magnitude (or 1);
// infinite when the lengths differ.
func relDiff(a, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	scale, d := 1.0, 0.0
	for _, v := range b {
		scale = max(scale, math.Abs(v))
	}
	for i := range a {
		if math.IsNaN(a[i]) || math.IsNaN(b[i]) {
			return math.Inf(1)
		}
		d = max(d, math.Abs(a[i]-b[i]))
	}
	return d / scale
}

// diagnose names the first node whose value differs from the engine's:
// each LSTM node's h_n against a model of the layers up to it with an
// identity classifier, then the head against the whole model's.
func (r *Recognized) diagnose(env *Env, x cell.Input, net *cell.Stacked) string {
	p := net.Params()
	h, dirs := p.Hidden, dirsOf(p.Bidirectional)
	eye := make([]float64, h*dirs*h*dirs)
	for i := range h * dirs {
		eye[i*h*dirs+i] = 1
	}
	sub := func(layers int, head cell.Head) ([]float64, error) {
		q := cell.StackedParams{Input: p.Input, Hidden: h, Layers: layers, Bidirectional: p.Bidirectional, Classes: h * dirs,
			Cells: p.Cells[:layers*dirs], Wy: eye, Head: head}
		s, err := cell.NewStacked(q)
		if err != nil {
			return nil, err
		}
		run, err := cell.NewStackedRunner(s)
		if err != nil {
			return nil, err
		}
		defer run.Close()
		return run.Forward(x)
	}
	for k, n := range r.lstms {
		if len(n.Outputs) < 2 || env.Values[n.Outputs[1]] == nil {
			continue
		}
		got, err := sub(k+1, cell.HeadHN)
		if err != nil {
			return err.Error()
		}
		yh := env.Values[n.Outputs[1]].F // [dirs, 1, H] or [1, dirs, H]: the same order
		if d := relDiff(yh, got); d > CheckTolerance {
			return fmt.Sprintf("the first node that differs is %s (layer %d: h_n differs by %.3g relative)", Describe(n), k, d)
		}
	}
	if v := env.Values[r.vName]; v != nil {
		got, err := sub(p.Layers, p.Head)
		if err == nil && relDiff(v.F, got) > CheckTolerance {
			return fmt.Sprintf("the first node that differs is node %q, the head (%v)", r.HeadNode, p.Head)
		}
	}
	return fmt.Sprintf("the first node that differs is the classifier %q", r.Linears)
}
