package tensorfile

import (
	"encoding/binary"
	"sort"
	"strconv"
)

// namedRef is a tensor of a pickle under its name.
type namedRef struct {
	name string
	t    *ptensor
}

const (
	maxNesting = 32      // nested dicts, lists and tuples below the root
	maxVisits  = 1 << 22 // values visited while collecting tensors
)

// collect finds the tensors of the object a torch.save pickle holds: the
// root must be a dict; nested dicts, lists and tuples are flattened with
// dotted names; values that are not tensors are ignored.
func collect(c *ctx, root any) ([]namedRef, error) {
	d, ok := root.(*pdict)
	if !ok {
		switch root.(type) {
		case *ptensor:
			return nil, c.errf(ErrUnsupported, "the file holds a single tensor, not a dict of named tensors (a state_dict)")
		}
		return nil, c.errf(ErrUnsupported, "the file holds %s, not a dict of named tensors (a state_dict)", describe(root))
	}
	w := &walker{c: c, seen: make(map[string]bool)}
	if err := w.dict(d, "", 0); err != nil {
		return nil, err
	}
	sort.Slice(w.refs, func(i, j int) bool { return w.refs[i].name < w.refs[j].name })
	return w.refs, nil
}

type walker struct {
	c      *ctx
	refs   []namedRef
	seen   map[string]bool
	visits int
}

func (w *walker) dict(d *pdict, prefix string, depth int) error {
	for i, k := range d.keys {
		var key string
		switch k := k.(type) {
		case string:
			key = k
		case int64:
			key = strconv.FormatInt(k, 10)
		default:
			if hasTensors(d.vals[i]) {
				return w.c.errf(ErrUnsupported, "a dict key %s (under %q) holds tensors; only str and int keys name tensors", describe(k), prefix)
			}
			continue
		}
		if err := w.value(d.vals[i], prefix+key, depth); err != nil {
			return err
		}
	}
	return nil
}

func hasTensors(v any) bool {
	switch v.(type) {
	case *ptensor, *pdict, *plist, ptuple:
		return true
	}
	return false
}

func (w *walker) value(v any, name string, depth int) error {
	w.visits++
	if w.visits > maxVisits {
		return w.c.errf(ErrLimit, "the pickled object has more than %d values to walk (shared or cyclic containers?)", maxVisits)
	}
	var items []any
	switch v := v.(type) {
	case *ptensor:
		if w.seen[name] {
			return w.c.terrf(ErrFormat, name, "two tensors have this name (after flattening nested dicts with dots)")
		}
		w.seen[name] = true
		w.refs = append(w.refs, namedRef{name, v})
		return nil
	case *pdict:
		if depth >= maxNesting {
			return w.c.errf(ErrLimit, "dicts nest more than %d deep under %q", maxNesting, name)
		}
		return w.dict(v, name+".", depth+1)
	case *plist:
		items = v.items
	case ptuple:
		items = v
	default:
		return nil // numbers, strings, None, storages: not tensors
	}
	if depth >= maxNesting {
		return w.c.errf(ErrLimit, "lists nest more than %d deep under %q", maxNesting, name)
	}
	for i, it := range items {
		if err := w.value(it, name+"."+strconv.Itoa(i), depth+1); err != nil {
			return err
		}
	}
	return nil
}

// plan is a tensor whose view has been checked against its storage's
// declared size.
type plan struct {
	namedRef
	numel   int64
	maxElem int64 // the last storage element the tensor reads (−1 when empty)
}

// maxBlowUp and blowUpSlack bound the elements of all the tensors of a
// PyTorch file to maxBlowUp per byte of the file, plus blowUpSlack: views
// with stride 0 (expanded tensors) and tensors sharing a storage could
// otherwise make a small file claim gigabytes, which no real state_dict
// does.
const (
	maxBlowUp   = 8
	blowUpSlack = 1 << 20
)

// checkViews checks every tensor's size, strides and offset against its
// storage's declared element count, and the limits.
func checkViews(c *ctx, refs []namedRef, fileSize int64) ([]plan, error) {
	plans := make([]plan, len(refs))
	total := int64(0)
	maxTotal := c.opt.MaxTotalBytes / 8
	blowUp := mul(fileSize, maxBlowUp) + blowUpSlack
	for i, r := range refs {
		t := r.t
		for j := range t.size {
			if t.size[j] < 0 {
				return nil, c.terrf(ErrFormat, r.name, "size %v has a negative dimension", t.size)
			}
			if t.stride[j] < 0 {
				return nil, c.terrf(ErrUnsupported, r.name, "stride %v is negative", t.stride)
			}
		}
		if t.offset < 0 {
			return nil, c.terrf(ErrFormat, r.name, "storage offset %d is negative", t.offset)
		}
		n, ok := numel(t.size, c.opt.MaxTensorElements)
		if !ok {
			return nil, c.terrf(ErrLimit, r.name, "size %v has more than %d elements (MaxTensorElements)", t.size, c.opt.MaxTensorElements)
		}
		if total, ok = addCheck(total, n, maxTotal); !ok {
			return nil, c.terrf(ErrLimit, r.name, "the tensors hold more than %d bytes as float64 (MaxTotalBytes)", c.opt.MaxTotalBytes)
		}
		if total > blowUp {
			return nil, c.terrf(ErrLimit, r.name, "the tensors have more than %d elements, %d per byte of the file plus %d: expanded (stride 0) or shared views blow the file up", blowUp, maxBlowUp, blowUpSlack)
		}
		last := int64(-1)
		if n > 0 {
			// last = offset + Σ (size_i − 1)·stride_i, overflow-checked.
			last = t.offset
			for j := range t.size {
				p, ok := mulCheck(t.size[j]-1, t.stride[j], 1<<62)
				if !ok {
					return nil, c.terrf(ErrFormat, r.name, "size %v and stride %v reach past any storage", t.size, t.stride)
				}
				if last, ok = addCheck(last, p, 1<<62); !ok {
					return nil, c.terrf(ErrFormat, r.name, "size %v, stride %v and offset %d reach past any storage", t.size, t.stride, t.offset)
				}
			}
			if last >= t.storage.numel {
				es := t.storage.dt.size()
				return nil, c.terrf(ErrFormat, r.name, "storage %q has %d %s elements (%d bytes), the tensor needs %d (%d bytes: offset %d, size %v, stride %v)",
					t.storage.key, t.storage.numel, t.storage.dt, mul(t.storage.numel, es), last+1, mul(last+1, es), t.offset, t.size, t.stride)
			}
		}
		plans[i] = plan{namedRef: r, numel: n, maxElem: last}
	}
	return plans, nil
}

// mul multiplies for messages, saturating instead of overflowing.
func mul(a, b int64) int64 {
	p, ok := mulCheck(a, b, 1<<62)
	if !ok {
		return 1 << 62
	}
	return p
}

// materialize reads the tensors of checked plans, loading each storage
// once (load returns exactly numel·elemsize bytes) and in turn, and returns
// them sorted by name.
func materialize(c *ctx, plans []plan, load func(name string, st *pstorage) ([]byte, error), bo binary.ByteOrder) ([]*Tensor, error) {
	order := make([]*plan, len(plans))
	for i := range plans {
		order[i] = &plans[i]
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].t.storage.key < order[j].t.storage.key })
	out := make([]*Tensor, 0, len(plans))
	var cur *pstorage
	var data []byte
	loaded := false
	for _, p := range order {
		t := p.t
		if t.storage != cur {
			cur, data, loaded = t.storage, nil, false
		}
		if p.numel > 0 && !loaded {
			var err error
			if data, err = load(p.name, cur); err != nil {
				return nil, err
			}
			loaded = true
		}
		shape, ok := intShape(t.size)
		if !ok {
			return nil, c.terrf(ErrLimit, p.name, "size %v does not fit this platform's int", t.size)
		}
		tt := &Tensor{Name: p.name, DType: cur.dt.String(), Shape: shape, Data: make([]float64, p.numel)}
		if p.numel > 0 {
			if err := gather(c, tt, data, t, bo); err != nil {
				return nil, err
			}
		}
		out = append(out, tt)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// gather reads a checked view of data (the storage's bytes) into tt.Data
// in row-major order.
func gather(c *ctx, tt *Tensor, data []byte, t *ptensor, bo binary.ByteOrder) error {
	dt := t.storage.dt
	es := dt.size()
	n := int64(len(tt.Data))
	fail := func(elem int64, at int64) error {
		return c.terrf(ErrFormat, tt.Name, "element %d: %s", elem, badValue(dt, data[at*es:], bo))
	}
	// Contiguous: one run.
	contiguous, want := true, int64(1)
	for j := len(t.size) - 1; j >= 0; j-- {
		if t.size[j] != 1 && t.stride[j] != want {
			contiguous = false
			break
		}
		want *= t.size[j]
	}
	if contiguous {
		src := data[t.offset*es : (t.offset+n)*es]
		if bad := decode(tt.Data, src, dt, bo); bad >= 0 {
			return fail(int64(bad), t.offset+int64(bad))
		}
		return nil
	}
	// Strided: walk the multi-index, the last dimension fastest.
	rank := len(t.size)
	idx := make([]int64, rank)
	pos := t.offset
	for i := int64(0); i < n; i++ {
		if bad := decode(tt.Data[i:i+1], data[pos*es:(pos+1)*es], dt, bo); bad >= 0 {
			return fail(i, pos)
		}
		for j := rank - 1; j >= 0; j-- {
			idx[j]++
			pos += t.stride[j]
			if idx[j] < t.size[j] {
				break
			}
			pos -= t.stride[j] * t.size[j]
			idx[j] = 0
		}
	}
	return nil
}
