package onnx

import (
	"fmt"
	"math"
	"slices"
)

// attr returns node n's attribute called name, or nil.
func attr(n *Node, name string) *Attr {
	for i := range n.Attrs {
		if n.Attrs[i].Name == name {
			return &n.Attrs[i]
		}
	}
	return nil
}

func attrInt(n *Node, name string, def int64) int64 {
	if a := attr(n, name); a != nil {
		return a.I
	}
	return def
}

func attrFloat(n *Node, name string, def float64) float64 {
	if a := attr(n, name); a != nil {
		return float64(a.F)
	}
	return def
}

// attrTypes declares, as the operators' schemas do, the type of every
// attribute the interpreter and the recogniser read: the accessors read
// the field of that type, so an attribute of another type (an INT alpha)
// would silently read as zero.
var attrTypes = map[string]map[string]AttrType{
	"Constant": {"value": AttrTensor, "value_float": AttrFloat, "value_floats": AttrFloats, "value_int": AttrInt,
		"value_ints": AttrInts, "value_string": AttrString, "value_strings": AttrStrings},
	"ConstantOfShape": {"value": AttrTensor},
	"Shape":           {"start": AttrInt, "end": AttrInt},
	"Transpose":       {"perm": AttrInts},
	"Reshape":         {"allowzero": AttrInt},
	"Squeeze":         {"axes": AttrInts},
	"Unsqueeze":       {"axes": AttrInts},
	"Concat":          {"axis": AttrInt},
	"Slice":           {"starts": AttrInts, "ends": AttrInts, "axes": AttrInts},
	"Gather":          {"axis": AttrInt},
	"ReduceMean":      {"axes": AttrInts, "keepdims": AttrInt, "noop_with_empty_axes": AttrInt},
	"ReduceMax":       {"axes": AttrInts, "keepdims": AttrInt, "noop_with_empty_axes": AttrInt},
	"ReduceSum":       {"axes": AttrInts, "keepdims": AttrInt, "noop_with_empty_axes": AttrInt},
	"Softmax":         {"axis": AttrInt},
	"Gemm":            {"alpha": AttrFloat, "beta": AttrFloat, "transA": AttrInt, "transB": AttrInt},
	"LSTM": {"hidden_size": AttrInt, "direction": AttrString, "layout": AttrInt, "clip": AttrFloat,
		"input_forget": AttrInt, "activations": AttrStrings, "activation_alpha": AttrFloats, "activation_beta": AttrFloats},
	"GRU": {"hidden_size": AttrInt, "direction": AttrString, "layout": AttrInt, "clip": AttrFloat,
		"linear_before_reset": AttrInt, "activations": AttrStrings, "activation_alpha": AttrFloats, "activation_beta": AttrFloats},
}

// checkAttrs checks node n's attributes as onnx.checker does: each has a
// name, given once (else which one is read would be arbitrary); a value
// field of its declared type only; and, for those attrTypes lists, the
// type the operator declares.
func checkAttrs(n *Node) error {
	want := attrTypes[n.OpType]
	seen := make(map[string]bool, len(n.Attrs))
	for i := range n.Attrs {
		a := &n.Attrs[i]
		if a.Name == "" {
			return fmt.Errorf("%s: attribute %d has no name", Describe(n), i)
		}
		if seen[a.Name] {
			return fmt.Errorf("%s: attribute %q is given twice", Describe(n), a.Name)
		}
		seen[a.Name] = true
		other := a.held
		if a.Type >= 0 && a.Type < 32 { // a negative shift would panic
			other &^= 1 << a.Type
		}
		if a.Type != 0 && other != 0 {
			var t AttrType
			for other&(1<<t) == 0 {
				t++
			}
			return fmt.Errorf("%s: attribute %q is %v but holds a value of type %v", Describe(n), a.Name, a.Type, t)
		}
		if w, ok := want[a.Name]; ok && a.Type != w {
			return fmt.Errorf("%s: attribute %q is %v, want %v", Describe(n), a.Name, a.Type, w)
		}
	}
	return nil
}

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

func strides(shape []int) []int {
	s := make([]int, len(shape))
	k := 1
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = k
		k *= shape[i]
	}
	return s
}

// take makes a tensor of shape from src's elements at idx (src's kind).
func (e *Env) take(src *Tensor, shape []int, idx []int) (*Tensor, error) {
	if err := e.alloc(len(idx)); err != nil {
		return nil, err
	}
	t := &Tensor{DataType: src.DataType, Shape: shape}
	if src.IsFloat() {
		t.F = make([]float64, len(idx))
		for i, j := range idx {
			t.F[i] = src.F[j]
		}
	} else {
		t.I = make([]int64, len(idx))
		for i, j := range idx {
			t.I[i] = src.I[j]
		}
	}
	return t, nil
}

// ints returns an integer tensor's values (shapes, axes, indices).
func ints(t *Tensor, what string) ([]int64, error) {
	if t == nil {
		return nil, fmt.Errorf("missing %s", what)
	}
	if t.IsFloat() {
		return nil, fmt.Errorf("%s is %s, want integers", what, TypeName(t.DataType))
	}
	return t.I, nil
}

func axis(a int64, rank int) (int, error) {
	if a < -int64(rank) || a >= int64(rank) {
		return 0, fmt.Errorf("axis %d out of range for rank %d", a, rank)
	}
	if a < 0 {
		a += int64(rank)
	}
	return int(a), nil
}

// axesOf reads the axes of Squeeze, Unsqueeze, Reduce*: the attribute
// (older opsets) or the second input (newer ones); nil when neither.
func axesOf(n *Node, args []*Tensor) ([]int64, bool, error) {
	a := attr(n, "axes")
	if a != nil && len(args) > 1 && args[1] != nil {
		return nil, false, fmt.Errorf("axes given both as attribute and input")
	}
	if a != nil {
		return a.Ints, true, nil
	}
	if len(args) > 1 && args[1] != nil {
		v, err := ints(args[1], "axes")
		return v, true, err
	}
	return nil, false, nil
}

func need(args []*Tensor, k int) error {
	for i := range k {
		if i >= len(args) || args[i] == nil {
			return fmt.Errorf("input %d is missing", i)
		}
	}
	return nil
}

func (e *Env) eval(opset int64, n *Node, args []*Tensor) ([]*Tensor, error) {
	for _, a := range n.Attrs {
		if a.Graph {
			return nil, fmt.Errorf("attribute %q holds a subgraph: not supported", a.Name)
		}
	}
	one := func(t *Tensor, err error) ([]*Tensor, error) { return []*Tensor{t}, err }
	switch n.OpType {
	case "Constant":
		return one(constant(n))
	case "Identity":
		if err := need(args, 1); err != nil {
			return nil, err
		}
		return []*Tensor{args[0]}, nil
	case "Shape":
		if err := need(args, 1); err != nil {
			return nil, err
		}
		return one(shapeOf(n, args[0]))
	case "ConstantOfShape":
		return one(e.constantOfShape(n, args))
	case "Transpose":
		return one(e.transpose(n, args))
	case "Reshape":
		return one(e.reshape(n, args))
	case "Squeeze", "Unsqueeze":
		return one(e.squeeze(n, args))
	case "Concat":
		return one(e.concat(n, args))
	case "Slice":
		return one(e.slice(n, args))
	case "Gather":
		return one(e.gather(n, args))
	case "Expand":
		return one(e.expand(args))
	case "ReduceMean", "ReduceMax", "ReduceSum":
		if n.OpType == "ReduceSum" && opset < 13 && len(args) > 1 && args[1] != nil {
			return nil, fmt.Errorf("ReduceSum takes its axes as an input from opset 13, not %d", opset)
		}
		return one(e.reduce(n, args))
	case "Add":
		return one(e.add(args))
	case "Mul":
		return one(e.mul(args))
	case "Softmax":
		return one(e.softmax(opset, n, args))
	case "Relu", "Tanh":
		return one(e.unary(n, args))
	case "MatMul":
		return one(e.matmul(args))
	case "Gemm":
		return one(e.gemm(n, args))
	case "LSTM":
		return e.lstm(n, args)
	case "GRU":
		return e.gru(n, args)
	}
	return nil, fmt.Errorf("operator %s is not supported (supported: %v)", ident(n.OpType), supportedOps)
}

func constant(n *Node) (*Tensor, error) {
	if len(n.Attrs) != 1 {
		return nil, fmt.Errorf("want exactly one attribute, have %d", len(n.Attrs))
	}
	a := &n.Attrs[0]
	switch a.Name {
	case "value":
		if a.T == nil {
			return nil, fmt.Errorf("attribute value holds no tensor")
		}
		return a.T, nil
	case "value_float":
		return &Tensor{DataType: TypeFloat, Shape: []int{}, F: []float64{float64(a.F)}}, nil
	case "value_floats":
		f := make([]float64, len(a.Floats))
		for i, v := range a.Floats {
			f[i] = float64(v)
		}
		return &Tensor{DataType: TypeFloat, Shape: []int{len(f)}, F: f}, nil
	case "value_int":
		return &Tensor{DataType: TypeInt64, Shape: []int{}, I: []int64{a.I}}, nil
	case "value_ints":
		return &Tensor{DataType: TypeInt64, Shape: []int{len(a.Ints)}, I: slices.Clone(a.Ints)}, nil
	}
	return nil, fmt.Errorf("attribute %q: not supported", a.Name)
}

func shapeOf(n *Node, x *Tensor) (*Tensor, error) {
	r := int64(len(x.Shape))
	start, end := attrInt(n, "start", 0), attrInt(n, "end", r)
	clamp := func(v int64) int64 {
		if v < 0 {
			v += r
		}
		return min(max(v, 0), r)
	}
	start, end = clamp(start), clamp(end)
	t := &Tensor{DataType: TypeInt64, Shape: []int{0}}
	for i := start; i < end; i++ {
		t.I = append(t.I, int64(x.Shape[i]))
	}
	t.Shape[0] = len(t.I)
	return t, nil
}

// shapeFrom reads a shape tensor, checking the total against the budget.
func (e *Env) shapeFrom(t *Tensor) ([]int, error) {
	v, err := ints(t, "the shape")
	if err != nil {
		return nil, err
	}
	if len(v) > maxRank {
		return nil, fmt.Errorf("shape of %d dimensions", len(v))
	}
	dims := make([]int64, len(v))
	copy(dims, v)
	if _, err := elements(dims); err != nil {
		return nil, err
	}
	s := make([]int, len(v))
	for i, d := range v {
		s[i] = int(d)
	}
	return s, nil
}

func (e *Env) constantOfShape(n *Node, args []*Tensor) (*Tensor, error) {
	if err := need(args, 1); err != nil {
		return nil, err
	}
	shape, err := e.shapeFrom(args[0])
	if err != nil {
		return nil, err
	}
	val := &Tensor{DataType: TypeFloat, F: []float64{0}}
	if a := attr(n, "value"); a != nil {
		if a.T == nil || a.T.Len() != 1 {
			return nil, fmt.Errorf("attribute value must be a one-element tensor")
		}
		val = a.T
	}
	k := numel(shape)
	if err := e.alloc(k); err != nil {
		return nil, err
	}
	t := &Tensor{DataType: val.DataType, Shape: shape}
	if val.IsFloat() {
		t.F = make([]float64, k)
		for i := range t.F {
			t.F[i] = val.F[0]
		}
	} else {
		t.I = make([]int64, k)
		for i := range t.I {
			t.I[i] = val.I[0]
		}
	}
	return t, nil
}

func (e *Env) transpose(n *Node, args []*Tensor) (*Tensor, error) {
	if err := need(args, 1); err != nil {
		return nil, err
	}
	x := args[0]
	r := len(x.Shape)
	perm := make([]int, r)
	for i := range perm {
		perm[i] = r - 1 - i
	}
	if a := attr(n, "perm"); a != nil {
		if len(a.Ints) != r {
			return nil, fmt.Errorf("perm %v for rank %d", a.Ints, r)
		}
		seen := make([]bool, r)
		for i, p := range a.Ints {
			if p < 0 || p >= int64(r) || seen[p] {
				return nil, fmt.Errorf("perm %v is not a permutation", a.Ints)
			}
			seen[p], perm[i] = true, int(p)
		}
	}
	shape := make([]int, r)
	for i, p := range perm {
		shape[i] = x.Shape[p]
	}
	st := strides(x.Shape)
	idx := make([]int, 0, numel(shape))
	walk(shape, func(c []int) {
		j := 0
		for i, p := range perm {
			j += c[i] * st[p]
		}
		idx = append(idx, j)
	})
	return e.take(x, shape, idx)
}

// walk calls f with every index of shape in row-major order.
func walk(shape []int, f func([]int)) {
	if numel(shape) == 0 {
		return
	}
	c := make([]int, len(shape))
	for {
		f(c)
		k := len(c) - 1
		for k >= 0 {
			c[k]++
			if c[k] < shape[k] {
				break
			}
			c[k] = 0
			k--
		}
		if k < 0 {
			return
		}
	}
}

func identity(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

func (e *Env) reshape(n *Node, args []*Tensor) (*Tensor, error) {
	if err := need(args, 2); err != nil {
		return nil, err
	}
	x := args[0]
	v, err := ints(args[1], "the shape")
	if err != nil {
		return nil, err
	}
	allowZero := attrInt(n, "allowzero", 0) != 0
	shape := make([]int, len(v))
	infer, known := -1, 1
	for i, d := range v {
		switch {
		case d == -1:
			if infer >= 0 {
				return nil, fmt.Errorf("shape %v has two -1", v)
			}
			infer = i
			continue
		case d == 0 && !allowZero:
			if i >= len(x.Shape) {
				return nil, fmt.Errorf("shape %v copies dimension %d of a rank-%d tensor", v, i, len(x.Shape))
			}
			shape[i] = x.Shape[i]
		case d < 0 || d > MaxElements:
			return nil, fmt.Errorf("bad dimension %d in shape %v", d, v)
		default:
			shape[i] = int(d)
		}
		known *= shape[i]
		if known > MaxElements {
			return nil, fmt.Errorf("shape %v too large", v)
		}
	}
	total := x.Len()
	if infer >= 0 {
		if known == 0 || total%known != 0 {
			return nil, fmt.Errorf("cannot reshape %v to %v", x.Shape, v)
		}
		shape[infer] = total / known
	}
	if numel(shape) != total {
		return nil, fmt.Errorf("cannot reshape %v (%d elements) to %v", x.Shape, total, shape)
	}
	return e.take(x, shape, identity(total))
}

func (e *Env) squeeze(n *Node, args []*Tensor) (*Tensor, error) {
	if err := need(args, 1); err != nil {
		return nil, err
	}
	x := args[0]
	axes, given, err := axesOf(n, args)
	if err != nil {
		return nil, err
	}
	var shape []int
	if n.OpType == "Squeeze" {
		drop := make([]bool, len(x.Shape))
		for _, a := range axes {
			k, err := axis(a, len(x.Shape))
			if err != nil {
				return nil, err
			}
			if x.Shape[k] != 1 {
				return nil, fmt.Errorf("cannot squeeze axis %d of shape %v", a, x.Shape)
			}
			drop[k] = true
		}
		shape = []int{}
		for i, d := range x.Shape {
			if !(drop[i] || !given && d == 1) {
				shape = append(shape, d)
			}
		}
	} else {
		if !given {
			return nil, fmt.Errorf("no axes")
		}
		r := len(x.Shape) + len(axes)
		ins := make([]bool, r)
		for _, a := range axes {
			k, err := axis(a, r)
			if err != nil {
				return nil, err
			}
			if ins[k] {
				return nil, fmt.Errorf("axis %d twice", a)
			}
			ins[k] = true
		}
		j := 0
		shape = make([]int, r)
		for i := range shape {
			if ins[i] {
				shape[i] = 1
			} else {
				shape[i] = x.Shape[j]
				j++
			}
		}
	}
	return e.take(x, shape, identity(x.Len()))
}

func (e *Env) concat(n *Node, args []*Tensor) (*Tensor, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("no inputs")
	}
	if err := need(args, len(args)); err != nil {
		return nil, err
	}
	x0 := args[0]
	ax, err := axis(attrInt(n, "axis", 0), len(x0.Shape))
	if err != nil {
		return nil, err
	}
	shape := slices.Clone(x0.Shape)
	shape[ax] = 0
	for _, x := range args {
		if len(x.Shape) != len(x0.Shape) || x.IsFloat() != x0.IsFloat() {
			return nil, fmt.Errorf("inputs of shapes %v and %v (or of different kinds)", x0.Shape, x.Shape)
		}
		for i := range x.Shape {
			if i != ax && x.Shape[i] != x0.Shape[i] {
				return nil, fmt.Errorf("inputs of shapes %v and %v", x0.Shape, x.Shape)
			}
		}
		shape[ax] += x.Shape[ax]
	}
	if err := e.alloc(numel(shape)); err != nil {
		return nil, err
	}
	t := &Tensor{DataType: x0.DataType, Shape: shape}
	outer := numel(shape[:ax])
	for o := range outer {
		for _, x := range args {
			inner := numel(x.Shape[ax:])
			if x.IsFloat() {
				t.F = append(t.F, x.F[o*inner:(o+1)*inner]...)
			} else {
				t.I = append(t.I, x.I[o*inner:(o+1)*inner]...)
			}
		}
	}
	return t, nil
}

func (e *Env) slice(n *Node, args []*Tensor) (*Tensor, error) {
	if err := need(args, 1); err != nil {
		return nil, err
	}
	x := args[0]
	var starts, ends, axes, steps []int64
	if a := attr(n, "starts"); a != nil { // opset < 10
		starts, ends = a.Ints, nil
		if b := attr(n, "ends"); b != nil {
			ends = b.Ints
		}
		if c := attr(n, "axes"); c != nil {
			axes = c.Ints
		}
	} else {
		if err := need(args, 3); err != nil {
			return nil, err
		}
		var err error
		if starts, err = ints(args[1], "starts"); err != nil {
			return nil, err
		}
		if ends, err = ints(args[2], "ends"); err != nil {
			return nil, err
		}
		if len(args) > 3 && args[3] != nil {
			if axes, err = ints(args[3], "axes"); err != nil {
				return nil, err
			}
		}
		if len(args) > 4 && args[4] != nil {
			if steps, err = ints(args[4], "steps"); err != nil {
				return nil, err
			}
		}
	}
	if len(ends) != len(starts) || axes != nil && len(axes) != len(starts) || steps != nil && len(steps) != len(starts) {
		return nil, fmt.Errorf("starts, ends, axes and steps of different lengths")
	}
	r := len(x.Shape)
	lo, step, shape := make([]int, r), make([]int, r), slices.Clone(x.Shape)
	for i := range step {
		step[i] = 1
	}
	seen := make([]bool, r)
	for i := range starts {
		a := int64(i)
		if axes != nil {
			a = axes[i]
		}
		k, err := axis(a, r)
		if err != nil {
			return nil, err
		}
		if seen[k] {
			return nil, fmt.Errorf("axis %d twice", a)
		}
		seen[k] = true
		s := int64(1)
		if steps != nil {
			s = steps[i]
		}
		if s == 0 {
			return nil, fmt.Errorf("step 0")
		}
		dim := int64(x.Shape[k])
		st, en := starts[i], ends[i]
		if st < 0 {
			st += dim
		}
		if en < 0 {
			en += dim
		}
		var cnt int64
		if s > 0 {
			st, en = min(max(st, 0), dim), min(max(en, 0), dim)
			if en > st {
				cnt = (en - st + s - 1) / s
			}
		} else {
			st, en = min(max(st, 0), dim-1), min(max(en, -1), dim-1)
			if st > en {
				cnt = (st - en - s - 1) / -s
			}
		}
		lo[k], step[k], shape[k] = int(st), int(s), int(cnt)
	}
	st := strides(x.Shape)
	idx := make([]int, 0, numel(shape))
	walk(shape, func(c []int) {
		j := 0
		for i := range c {
			j += (lo[i] + c[i]*step[i]) * st[i]
		}
		idx = append(idx, j)
	})
	return e.take(x, shape, idx)
}

func (e *Env) gather(n *Node, args []*Tensor) (*Tensor, error) {
	if err := need(args, 2); err != nil {
		return nil, err
	}
	x := args[0]
	ind, err := ints(args[1], "the indices")
	if err != nil {
		return nil, err
	}
	ax, err := axis(attrInt(n, "axis", 0), len(x.Shape))
	if err != nil {
		return nil, err
	}
	dim := x.Shape[ax]
	shape := append(append(slices.Clone(x.Shape[:ax]), args[1].Shape...), x.Shape[ax+1:]...)
	if len(shape) > maxRank {
		return nil, fmt.Errorf("result of rank %d", len(shape))
	}
	outer, inner := numel(x.Shape[:ax]), numel(x.Shape[ax+1:])
	if err := e.alloc(outer * len(ind) * inner); err != nil {
		return nil, err
	}
	idx := make([]int, 0, outer*len(ind)*inner)
	for o := range outer {
		for _, v := range ind {
			if v < -int64(dim) || v >= int64(dim) {
				return nil, fmt.Errorf("index %d out of range [%d, %d)", v, -dim, dim)
			}
			if v < 0 {
				v += int64(dim)
			}
			base := (o*dim + int(v)) * inner
			for i := range inner {
				idx = append(idx, base+i)
			}
		}
	}
	return e.take(x, shape, idx)
}

// broadcast returns the numpy broadcast of shapes a and b.
func broadcast(a, b []int) ([]int, error) {
	r := max(len(a), len(b))
	s := make([]int, r)
	for i := range r {
		da, db := 1, 1
		if k := i - (r - len(a)); k >= 0 {
			da = a[k]
		}
		if k := i - (r - len(b)); k >= 0 {
			db = b[k]
		}
		switch {
		case da == db || db == 1:
			s[i] = da
		case da == 1:
			s[i] = db
		default:
			return nil, fmt.Errorf("shapes %v and %v do not broadcast", a, b)
		}
	}
	return s, nil
}

// bindex returns, for each element of shape (row-major), the index of the
// element of x's shape that broadcasts to it.
func bindex(xs, shape []int) []int {
	st := strides(xs)
	off := len(shape) - len(xs)
	idx := make([]int, 0, numel(shape))
	walk(shape, func(c []int) {
		j := 0
		for i := range xs {
			if xs[i] != 1 {
				j += c[i+off] * st[i]
			}
		}
		idx = append(idx, j)
	})
	return idx
}

func (e *Env) expand(args []*Tensor) (*Tensor, error) {
	if err := need(args, 2); err != nil {
		return nil, err
	}
	want, err := e.shapeFrom(args[1])
	if err != nil {
		return nil, err
	}
	shape, err := broadcast(args[0].Shape, want)
	if err != nil {
		return nil, err
	}
	if _, err := elements(toInt64(shape)); err != nil {
		return nil, err
	}
	if err := e.alloc(numel(shape)); err != nil {
		return nil, err
	}
	return e.take(args[0], shape, bindex(args[0].Shape, shape))
}

func toInt64(s []int) []int64 {
	v := make([]int64, len(s))
	for i, d := range s {
		v[i] = int64(d)
	}
	return v
}

func (e *Env) add(args []*Tensor) (*Tensor, error) {
	if err := need(args, 2); err != nil {
		return nil, err
	}
	a, b := args[0], args[1]
	if a.IsFloat() != b.IsFloat() {
		return nil, fmt.Errorf("adds %s to %s", TypeName(a.DataType), TypeName(b.DataType))
	}
	shape, err := broadcast(a.Shape, b.Shape)
	if err != nil {
		return nil, err
	}
	if err := e.alloc(numel(shape)); err != nil {
		return nil, err
	}
	ia, ib := bindex(a.Shape, shape), bindex(b.Shape, shape)
	t := &Tensor{DataType: a.DataType, Shape: shape}
	if a.IsFloat() {
		t.DataType = TypeDouble
		t.F = make([]float64, len(ia))
		for i := range ia {
			t.F[i] = a.F[ia[i]] + b.F[ib[i]]
		}
	} else {
		t.I = make([]int64, len(ia))
		for i := range ia {
			t.I[i] = a.I[ia[i]] + b.I[ib[i]]
		}
	}
	return t, nil
}

// mul is Mul with broadcasting (float or integer).
func (e *Env) mul(args []*Tensor) (*Tensor, error) {
	if err := need(args, 2); err != nil {
		return nil, err
	}
	a, b := args[0], args[1]
	if a.IsFloat() != b.IsFloat() {
		return nil, fmt.Errorf("multiplies %s by %s", TypeName(a.DataType), TypeName(b.DataType))
	}
	shape, err := broadcast(a.Shape, b.Shape)
	if err != nil {
		return nil, err
	}
	if err := e.alloc(numel(shape)); err != nil {
		return nil, err
	}
	ia, ib := bindex(a.Shape, shape), bindex(b.Shape, shape)
	t := &Tensor{DataType: a.DataType, Shape: shape}
	if a.IsFloat() {
		t.DataType = TypeDouble
		t.F = make([]float64, len(ia))
		for i := range ia {
			t.F[i] = a.F[ia[i]] * b.F[ib[i]]
		}
	} else {
		t.I = make([]int64, len(ia))
		for i := range ia {
			t.I[i] = a.I[ia[i]] * b.I[ib[i]]
		}
	}
	return t, nil
}

// softmax is Softmax: from opset 13 over the one axis (default −1);
// before, over the input coerced to 2-D at axis (default 1): the
// dimensions from axis on as one.
func (e *Env) softmax(opset int64, n *Node, args []*Tensor) (*Tensor, error) {
	if err := need(args, 1); err != nil {
		return nil, err
	}
	x := args[0]
	if !x.IsFloat() {
		return nil, fmt.Errorf("input is %s", TypeName(x.DataType))
	}
	r := len(x.Shape)
	def := int64(-1)
	if opset < 13 {
		def = 1
	}
	a := attrInt(n, "axis", def)
	if opset < 13 && a == int64(r) { // coerced: axis may equal the rank
		a = int64(r - 1)
	}
	k, err := axis(a, max(r, 1))
	if err != nil {
		return nil, err
	}
	f, err := e.floats(len(x.F))
	if err != nil {
		return nil, err
	}
	// outer × size × inner: softmax over size for each (outer, inner).
	outer, size, inner := 1, 1, 1
	for i, d := range x.Shape {
		switch {
		case i < k:
			outer *= d
		case i == k || opset < 13:
			size *= d
		default:
			inner *= d
		}
	}
	for o := range outer {
		for in := range inner {
			base := o*size*inner + in
			m := math.Inf(-1)
			for s := range size {
				m = max(m, x.F[base+s*inner])
			}
			sum := 0.0
			for s := range size {
				v := math.Exp(x.F[base+s*inner] - m)
				f[base+s*inner] = v
				sum += v
			}
			for s := range size {
				f[base+s*inner] /= sum
			}
		}
	}
	return &Tensor{DataType: TypeDouble, Shape: slices.Clone(x.Shape), F: f}, nil
}

func (e *Env) unary(n *Node, args []*Tensor) (*Tensor, error) {
	if err := need(args, 1); err != nil {
		return nil, err
	}
	x := args[0]
	if !x.IsFloat() {
		return nil, fmt.Errorf("input is %s", TypeName(x.DataType))
	}
	f, err := e.floats(len(x.F))
	if err != nil {
		return nil, err
	}
	for i, v := range x.F {
		if n.OpType == "Relu" {
			f[i] = max(v, 0)
		} else {
			f[i] = math.Tanh(v)
		}
	}
	return &Tensor{DataType: TypeDouble, Shape: slices.Clone(x.Shape), F: f}, nil
}

func (e *Env) reduce(n *Node, args []*Tensor) (*Tensor, error) {
	if err := need(args, 1); err != nil {
		return nil, err
	}
	x := args[0]
	if !x.IsFloat() {
		return nil, fmt.Errorf("input is %s", TypeName(x.DataType))
	}
	axes, given, err := axesOf(n, args)
	if err != nil {
		return nil, err
	}
	r := len(x.Shape)
	red := make([]bool, r)
	if !given || len(axes) == 0 {
		if attrInt(n, "noop_with_empty_axes", 0) != 0 {
			return x, nil
		}
		for i := range red {
			red[i] = true
		}
	}
	for _, a := range axes {
		k, err := axis(a, r)
		if err != nil {
			return nil, err
		}
		red[k] = true
	}
	keep := attrInt(n, "keepdims", 1) != 0
	kept := make([]int, r) // the result's shape with reduced axes as 1
	var shape []int
	for i, d := range x.Shape {
		kept[i] = d
		if red[i] {
			kept[i] = 1
			if keep {
				shape = append(shape, 1)
			}
		} else {
			shape = append(shape, d)
		}
	}
	if shape == nil {
		shape = []int{}
	}
	m := numel(kept)
	f, err := e.floats(m)
	if err != nil {
		return nil, err
	}
	cnt := make([]int, m)
	ks := strides(kept)
	walk(x.Shape, func(c []int) {
		j, s := 0, 0
		for i := range c {
			if !red[i] {
				j += c[i] * ks[i]
			}
			s = s*x.Shape[i] + c[i]
		}
		v := x.F[s]
		if cnt[j] == 0 {
			f[j] = v
		} else if n.OpType == "ReduceMax" {
			if v > f[j] || math.IsNaN(v) {
				f[j] = v
			}
		} else {
			f[j] += v
		}
		cnt[j]++
	})
	if n.OpType == "ReduceMean" {
		for j := range f {
			f[j] /= float64(cnt[j])
		}
	}
	if numel(x.Shape) == 0 {
		return nil, fmt.Errorf("reduction of an empty tensor")
	}
	return &Tensor{DataType: TypeDouble, Shape: shape, F: f}, nil
}

// matmul is numpy's matmul for a float A of rank ≥ 1 and a B of rank 1
// or 2 (a Linear layer's weight).
func (e *Env) matmul(args []*Tensor) (*Tensor, error) {
	if err := need(args, 2); err != nil {
		return nil, err
	}
	a, b := args[0], args[1]
	if !a.IsFloat() || !b.IsFloat() {
		return nil, fmt.Errorf("integer inputs")
	}
	if len(b.Shape) > 2 {
		return e.batchMatmul(a, b)
	}
	if len(a.Shape) < 1 || len(b.Shape) < 1 {
		return nil, fmt.Errorf("shapes %v × %v: supported are A of rank ≥ 1 times B of rank 1 or 2", a.Shape, b.Shape)
	}
	k := a.Shape[len(a.Shape)-1]
	nn := 1
	shape := slices.Clone(a.Shape[:len(a.Shape)-1])
	if len(b.Shape) == 2 {
		nn = b.Shape[1]
		shape = append(shape, nn)
	}
	if b.Shape[0] != k {
		return nil, fmt.Errorf("shapes %v × %v do not match", a.Shape, b.Shape)
	}
	rows := numel(a.Shape) / max(k, 1)
	if k == 0 {
		rows = numel(a.Shape[:len(a.Shape)-1])
	}
	if err := e.work(int64(rows) * int64(k) * int64(nn)); err != nil {
		return nil, err
	}
	f, err := e.floats(rows * nn)
	if err != nil {
		return nil, err
	}
	for r := range rows {
		for j := range nn {
			s := 0.0
			for i := range k {
				s += a.F[r*k+i] * b.F[i*nn+j]
			}
			f[r*nn+j] = s
		}
	}
	return &Tensor{DataType: TypeDouble, Shape: shape, F: f}, nil
}

// batchMatmul is MatMul with B of rank ≥ 3 (torch.bmm and batched
// torch.matmul, as attention pooling writes them): A [..., m, k] times
// B [..., k, n], the leading axes broadcast as numpy does.
func (e *Env) batchMatmul(a, b *Tensor) (*Tensor, error) {
	if len(a.Shape) < 2 {
		return nil, fmt.Errorf("shapes %v × %v: a batched product needs A of rank ≥ 2", a.Shape, b.Shape)
	}
	ra, rb := len(a.Shape), len(b.Shape)
	m, k, n := a.Shape[ra-2], a.Shape[ra-1], b.Shape[rb-1]
	if b.Shape[rb-2] != k {
		return nil, fmt.Errorf("shapes %v × %v do not match", a.Shape, b.Shape)
	}
	batch, err := broadcast(a.Shape[:ra-2], b.Shape[:rb-2])
	if err != nil {
		return nil, err
	}
	nb := numel(batch)
	if err := e.work(int64(nb) * int64(m) * int64(k) * int64(n)); err != nil {
		return nil, err
	}
	f, err := e.floats(nb * m * n)
	if err != nil {
		return nil, err
	}
	// The matrix of A and of B each batch index reads.
	ia, ib := bindex(a.Shape[:ra-2], batch), bindex(b.Shape[:rb-2], batch)
	for q := range nb {
		am, bm, out := a.F[ia[q]*m*k:], b.F[ib[q]*k*n:], f[q*m*n:]
		for r := range m {
			for j := range n {
				s := 0.0
				for i := range k {
					s += am[r*k+i] * bm[i*n+j]
				}
				out[r*n+j] = s
			}
		}
	}
	return &Tensor{DataType: TypeDouble, Shape: append(batch, m, n), F: f}, nil
}

func (e *Env) gemm(n *Node, args []*Tensor) (*Tensor, error) {
	if err := need(args, 2); err != nil {
		return nil, err
	}
	a, b := args[0], args[1]
	if !a.IsFloat() || !b.IsFloat() || len(a.Shape) != 2 || len(b.Shape) != 2 {
		return nil, fmt.Errorf("want float matrices, have shapes %v and %v", a.Shape, b.Shape)
	}
	ta, tb := attrInt(n, "transA", 0) != 0, attrInt(n, "transB", 0) != 0
	alpha, beta := attrFloat(n, "alpha", 1), attrFloat(n, "beta", 1)
	m, k := a.Shape[0], a.Shape[1]
	if ta {
		m, k = k, m
	}
	kb, nn := b.Shape[0], b.Shape[1]
	if tb {
		kb, nn = nn, kb
	}
	if kb != k {
		return nil, fmt.Errorf("shapes %v and %v do not match (transA %v, transB %v)", a.Shape, b.Shape, ta, tb)
	}
	at := func(i, j int) float64 {
		if ta {
			return a.F[j*m+i]
		}
		return a.F[i*k+j]
	}
	bt := func(i, j int) float64 {
		if tb {
			return b.F[j*k+i]
		}
		return b.F[i*nn+j]
	}
	if err := e.work(int64(m) * int64(k) * int64(nn)); err != nil {
		return nil, err
	}
	f, err := e.floats(m * nn)
	if err != nil {
		return nil, err
	}
	var ci []int
	if len(args) > 2 && args[2] != nil {
		c := args[2]
		if !c.IsFloat() {
			return nil, fmt.Errorf("input C is %s", TypeName(c.DataType))
		}
		shape, err := broadcast(c.Shape, []int{m, nn})
		if err != nil || !slices.Equal(shape, []int{m, nn}) {
			return nil, fmt.Errorf("input C of shape %v does not broadcast to [%d %d]", c.Shape, m, nn)
		}
		ci = bindex(c.Shape, shape)
	}
	for i := range m {
		for j := range nn {
			s := 0.0
			for l := range k {
				s += at(i, l) * bt(l, j)
			}
			s *= alpha
			if ci != nil {
				s += beta * args[2].F[ci[i*nn+j]]
			}
			f[i*nn+j] = s
		}
	}
	return &Tensor{DataType: TypeDouble, Shape: []int{m, nn}, F: f}, nil
}
