package onnx

import (
	"fmt"
	"math"
)

// windowLengths are the two lengths at which timeWindows evaluates the
// graph: a tensor axis of that size at both is a time axis.
var windowLengths = [2]int{11, 13}

// timeWindows refuses, naming the node, a graph that keeps a part of the
// time axis other than all of it or its last step: a Slice of fixed bounds
// (x[:, :512], the usual max_len guard; o[:, :8]; o[:, -8:]) or a Gather of
// a fixed position (o[:, 3]). Such a graph agrees with the engine's model at
// the short probes and computes another model from some length on, which
// the engine cannot express. A graph of fixed length runs at that length
// only, where the probes decide.
//
// What a node keeps is evaluated at both windowLengths; constant bounds are
// also judged by their values, since a truncation at 512 keeps everything
// at every short length.
func (r *Recognized) timeWindows() error {
	if r.SeqLen > 0 {
		return nil
	}
	dep := r.prog.DependsOnInput()
	var envs [2]*Env
	for k, t := range windowLengths {
		ids, x := r.probeInput(300+t, t)
		env, err := r.prog.Run(r.input(ids, x), nil)
		if err != nil {
			return err
		}
		envs[k] = env
	}
	for _, i := range r.prog.Live {
		n := &r.prog.Graph.Nodes[i]
		if (n.OpType != "Slice" && n.OpType != "Gather") || !dep[n.Inputs[0]] {
			continue
		}
		c0, ok0 := timeCut(n, envs[0], windowLengths[0])
		c1, ok1 := timeCut(n, envs[1], windowLengths[1])
		if !ok0 && !ok1 {
			continue
		}
		fine := ok0 && ok1 && c0.kind == c1.kind && (c0.kind == "all" || c0.kind == "last")
		constant := n.OpType == "Slice" && attr(n, "starts") != nil
		if n.OpType == "Slice" && !constant {
			constant = len(n.Inputs) > 2 && !dep[n.Inputs[1]] && !dep[n.Inputs[2]]
		}
		if fine && constant {
			// From the start (or beyond it) to the end, or from −1 to the end.
			fine = c0.end >= math.MaxInt32 && (c0.kind == "all" && (c0.start == 0 || c0.start <= math.MinInt32) || c0.kind == "last" && c0.start == -1)
		}
		if !fine {
			return fmt.Errorf("%s keeps time steps %s of %d (%s of %d) of %q: a part of the sequence fixed in position (a truncation such as x[:, :max_len], a window such as o[:, :k] or o[:, -k:]) makes the model depend on the length, which the engine cannot express: not supported",
				Describe(n), c0.kind, windowLengths[0], c1.kind, windowLengths[1], n.Inputs[0])
		}
	}
	return nil
}

// A cut is what a Slice or Gather keeps of the time axis: kind "all",
// "last" or the range kept, from the bounds start and end as given.
type cut struct {
	kind       string
	start, end int64
}

// timeCut says what node n keeps of the time axis (the axis of size t) in
// env; ok is false when it cuts no such axis.
func timeCut(n *Node, env *Env, t int) (c cut, ok bool) {
	x := env.Values[n.Inputs[0]]
	if x == nil {
		return c, false
	}
	if n.OpType == "Gather" {
		k, err := axis(attrInt(n, "axis", 0), len(x.Shape))
		idx := env.Values[n.Inputs[1]]
		if err != nil || x.Shape[k] != t || idx == nil || idx.IsFloat() {
			return c, false
		}
		c.kind = fmt.Sprintf("%v", idx.I)
		if len(idx.I) == 1 && (idx.I[0] == -1 || idx.I[0] == int64(t-1)) {
			c.kind = "last"
		}
		return c, true
	}
	starts, ends, axes, steps := sliceBounds(n, env)
	for i := range min(len(starts), len(ends)) {
		a := int64(i)
		if i < len(axes) {
			a = axes[i]
		}
		k, err := axis(a, len(x.Shape))
		if err != nil || x.Shape[k] != t {
			continue
		}
		s := int64(1)
		if i < len(steps) {
			s = steps[i]
		}
		c.start, c.end = starts[i], ends[i]
		st, en := c.start, c.end
		if st < 0 {
			st += int64(t)
		}
		if en < 0 {
			en += int64(t)
		}
		st, en = min(max(st, 0), int64(t)), min(max(en, 0), int64(t))
		switch {
		case s == 1 && st == 0 && en == int64(t):
			c.kind = "all"
		case s == 1 && st == int64(t-1) && en == int64(t):
			c.kind = "last"
		default:
			c.kind = fmt.Sprintf("[%d:%d:%d]", st, en, s)
		}
		return c, true
	}
	return c, false
}

// sliceBounds reads a Slice's starts, ends, axes and steps: attributes
// before opset 10, inputs since.
func sliceBounds(n *Node, env *Env) (starts, ends, axes, steps []int64) {
	if a := attr(n, "starts"); a != nil {
		starts = a.Ints
		if b := attr(n, "ends"); b != nil {
			ends = b.Ints
		}
		if c := attr(n, "axes"); c != nil {
			axes = c.Ints
		}
		return starts, ends, axes, nil
	}
	get := func(k int) []int64 {
		if k < len(n.Inputs) && n.Inputs[k] != "" {
			if v := env.Values[n.Inputs[k]]; v != nil && !v.IsFloat() {
				return v.I
			}
		}
		return nil
	}
	return get(1), get(2), get(3), get(4)
}
