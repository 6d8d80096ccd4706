// Package model loads a trained LSTM classifier of PyTorch's usual shape —
// Embedding → nn.LSTM (one or more layers, one or two directions) → head →
// Linear, or Linear → ReLU/Tanh → Linear — from a PyTorch state_dict
// (torch.save) or a .safetensors file, and makes it a cell.Model model
// that package attrib attributes.
//
// The architecture is inferred from PyTorch's names and shapes: an nn.LSTM
// is the set <prefix>.weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k},
// bias_hh_l{k} and their _reverse twins; the embedding is a 2-D
// <prefix>.weight of shape (V, E) whose E is layer 0's input size; the
// decoder is the Linear of shape (C, H·directions), with or without a
// bias, or two Linear layers chained by their shapes (Units × H·directions,
// then C × Units) and ordered by their names (fc1 → fc2, classifier.0 →
// classifier.2, hidden → out). Where the names leave a choice, Load lists
// the candidates and Names picks them.
//
// The head — how the LSTM's outputs become the classifier's input — and
// the activation between two Linear layers are not in a state_dict: they
// come from Options (Head, Act), else from a safetensors
// file's metadata (key HeadMetadataKey, "whitebox.head", a head spec such
// as "mean" or "max+relu", see ParseHeadSpec), else the head is cell.HeadHN
// (h_n: the behaviour of every earlier version). A classifier of two
// Linear layers without an activation is an error that lists the choices
// (relu, tanh); an activation for one Linear layer is an error too. An nn.GRU in
// place of the LSTM is read as GRU layers (cell.LayerGRU), and scoring
// layers of an attention head as cell.HeadAttention. A file with tensors
// beyond these, or with proj_size or other layers, is refused: a model this package cannot run exactly is an error,
// never an approximation.
//
// A model trained on padded batches with pack_padded_sequence never runs
// a row's trailing pad tokens. Its pad id, from Options (Pad)
// or a safetensors file's metadata (key PadMetadataKey, "whitebox.pad"),
// makes Embed remove them likewise (Unpadded); without one every token
// runs, pads included.
//
// A file named *.onnx is an ONNX export (torch.onnx.export), read by
// package onnx: the graph gives the head and the classifier, and the model
// is checked against the graph evaluated node by node.
//
// The tensors are read by package tensorfile (no pickle is executed; every
// size is checked against the file before anything is allocated). Weights
// become float64 exactly; all arithmetic is float64.
package model

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/internal/visible"
	"github.com/whitebox-lstm/whitebox/onnx"
	"github.com/whitebox-lstm/whitebox/tensorfile"
)

// Names are the prefixes of the model's three parts in the state_dict, as
// `-embedding`, `-lstm` and `-decoder` give them. An empty field is
// detected; Embedding "none" says the model has no embedding (its input is
// dense features).
type Names struct {
	Embedding, LSTM, Decoder string

	// Attention is the prefix of an attention head's scoring layers
	// (attention.go; `-attention`): one Linear(D, 1), or a module holding
	// Linear(D, A) and Linear(A, 1). "": detected.
	Attention string
}

// NoEmbedding, as Names.Embedding, says that the model reads dense features.
const NoEmbedding = "none"

// Options say how to read a model file. The zero value detects the parts'
// names and uses the head written in the file's metadata, or HeadHN.
type Options struct {
	Names Names

	// Head, if not nil, is the model's head (new(cell.HeadMean), …; an
	// explicit new(cell.HeadHN) included). nil: the file's metadata's
	// (safetensors __metadata__ key "whitebox.head"), or HeadHN. It is
	// read once, by Load.
	Head *cell.Head

	// Act is the activation of a classifier with two Linear layers; it is
	// required for such a file (unless its metadata gives it) and must be
	// ActNone for a single Linear layer.
	Act cell.Activation

	// Pad is the padding token id (0 is a usual one; &NoPad: none,
	// whatever the metadata says). Nil: the file's metadata's (safetensors
	// __metadata__ key "whitebox.pad"), or none. Embed then removes an
	// input's trailing pad tokens, as pack_padded_sequence with the true
	// lengths does.
	Pad *int
}

// Where a model's head came from (Model.HeadSource).
const (
	HeadFromOptions  = "options"  // Options.Head
	HeadFromMetadata = "metadata" // the file's whitebox.head
	HeadDefault      = "default"  // nothing said: HeadHN assumed
	HeadFromGraph    = "graph"    // an ONNX model's graph
	HeadFromVerify   = "verified" // the one head whose logits match those recorded from the user's model (package verify)
)

// Model is a loaded classifier.
type Model struct {
	Path   string // the file
	Format string // tensorfile's format name
	DType  string // the dtype of the weights (e.g. "F32"; "mixed" if they differ)
	Names  Names  // the prefixes found (Embedding "" for none)

	// Embedding is the V×E embedding matrix, row-major; nil for a model
	// that reads dense features.
	Embedding []float64
	Vocab     int // V (0 without embedding)

	Net *cell.Model

	// OutputLayer is the prefix of the classifier's second Linear layer
	// when it has two (Names.Decoder is then the first, the hidden layer
	// on the head's output); "" for one.
	OutputLayer string

	// Head and Act are the head and hidden-layer activation the model runs
	// with (also Net.Head() and Net.Activation()); HeadSource says where
	// the head came from (HeadFromOptions, HeadFromMetadata, HeadDefault,
	// HeadFromGraph, HeadFromVerify).
	Head       cell.Head
	Act        cell.Activation
	HeadSource string

	// Pad is the padding token id when HasPad (Options.Pad, else the
	// file's metadata PadMetadataKey): Embed removes an input's trailing
	// pad tokens, which a model trained with pack_padded_sequence never
	// runs (Unpadded).
	Pad    int
	HasPad bool

	// Tensors lists every tensor of the file with the part it was read as.
	Tensors []TensorInfo

	// Graph says, for an ONNX model, the graph's opset and sequence axis
	// and how closely the graph, evaluated by package onnx, equals the
	// model; "" for other formats.
	Graph string

	// FixedLength is the sequence length of an ONNX graph exported without
	// a dynamic axis: inputs of any other length are refused, as
	// onnxruntime refuses them. 0: any length.
	FixedLength int

	graph *onnx.Recognized // an ONNX model's graph, for CheckGraph

	attnName string // the attention head's scoring layers (AttentionName)
}

// TensorInfo describes one tensor of the file.
type TensorInfo struct {
	Name  string
	DType string
	Shape []int
	Role  string // e.g. "embedding", "layer 0 weight_ih", "decoder bias"
}

// Load reads the model in the file at path. o may be zero.
//
// A file named *.onnx is read as an ONNX export instead (see package
// onnx): its head and classifier come from the graph (HeadSource
// HeadFromGraph), Options.Head must agree with it, and the model is
// checked against the graph evaluated node by node before it is returned.
func Load(path string, o Options) (*Model, error) {
	if IsONNX(path) {
		m, err := loadONNX(path, o)
		if err != nil {
			return nil, fmt.Errorf("model: %s: %w", filepath.Base(path), err)
		}
		return m, nil
	}
	f, err := tensorfile.Open(path)
	if err != nil {
		return nil, err
	}
	m, err := FromFile(f, o)
	if err != nil {
		return nil, fmt.Errorf("model: %s: %w", filepath.Base(path), err)
	}
	m.Path = path
	return m, nil
}

// FromFile builds the model from tensors already read.
func FromFile(f *tensorfile.File, o Options) (*Model, error) {
	if f == nil {
		return nil, fmt.Errorf("nil file")
	}
	b := &builder{f: f, used: map[string]string{}}
	head, act, source, err := resolveHead(f, o)
	if err != nil {
		return nil, err
	}
	b.head, b.act, b.actFromMeta = head, act, o.Act == cell.ActNone && act != cell.ActNone
	b.headSource = source
	m, err := b.build(o.Names)
	if err != nil {
		return nil, err
	}
	if b.head != head { // attention layers found by name (attention.go)
		head, source = b.head, HeadFromTensors
	}
	m.Head, m.Act, m.HeadSource = head, act, source
	if err := m.resolvePad(f, o); err != nil {
		return nil, err
	}
	m.Format = f.Format
	for _, t := range f.Tensors {
		m.Tensors = append(m.Tensors, TensorInfo{Name: t.Name, DType: t.DType, Shape: t.Shape, Role: b.used[t.Name]})
	}
	return m, nil
}

// builder infers the architecture from the tensors of f.
type builder struct {
	f           *tensorfile.File
	used        map[string]string // tensor name → role
	head        cell.Head
	act         cell.Activation
	actFromMeta bool // act is the metadata's
	headSource  string
}

func (b *builder) build(names Names) (*Model, error) {
	lstm, err := b.lstmPrefix(names.LSTM)
	if err != nil {
		return nil, err
	}
	p, err := b.lstm(lstm)
	if err != nil {
		return nil, err
	}
	dirs := 1
	if p.Bidirectional {
		dirs = 2
	}
	al, hasAttn, err := b.findAttention(names, p.Hidden*dirs)
	if err != nil {
		return nil, err
	}
	var attn *cell.Attention
	if hasAttn {
		if b.head != cell.HeadAttention {
			if b.headSource != HeadDefault {
				return nil, fmt.Errorf("the file has attention scoring layers (%s): its head is attention, not %v (%s)", visible.String(al.first), b.head, b.headSource)
			}
			b.head = cell.HeadAttention
		}
		if attn, err = b.attention(al); err != nil {
			return nil, err
		}
	}
	emb, cls, err := b.headAndEmbedding(names, p.Input, p.Hidden*dirs)
	if err != nil {
		return nil, err
	}
	if err := checkAct(b.act, cls.second != "", cls.first, cls.second); err != nil {
		if b.actFromMeta {
			err = fmt.Errorf("%w (the activation is the file's metadata %q)", err, HeadMetadataKey)
		}
		return nil, err
	}
	dec := cls.first
	m := &Model{Names: Names{LSTM: lstm, Decoder: dec}, OutputLayer: cls.second}
	if emb != "" {
		t := b.f.Get(emb + ".weight")
		if err := finite(t); err != nil {
			return nil, err
		}
		b.used[t.Name] = "embedding"
		m.Names.Embedding = emb
		m.Embedding, m.Vocab = t.Data, t.Shape[0]
	}
	p.Head, p.Act = b.head, b.act
	p.Attention = attn
	if hasAttn {
		m.Names.Attention, m.attnName = attnModuleName(al), al.first
		if al.second != "" {
			m.attnName += " → " + al.second
		}
	}
	if cls.second == "" {
		p.Classes, p.Wy, p.By, err = b.linear(dec, "decoder", "classes")
	} else {
		p.Units, p.W1, p.B1, err = b.linear(dec, "hidden layer", "units")
		if err == nil {
			p.Classes, p.Wy, p.By, err = b.linear(cls.second, "decoder", "classes")
		}
	}
	if err != nil {
		return nil, err
	}
	if err := b.leftovers(root(m.Names.Embedding, m.Names.LSTM, m.Names.Decoder, m.OutputLayer, al.first, al.second)); err != nil {
		return nil, err
	}
	m.Net, err = cell.NewModel(p)
	if err != nil {
		return nil, err
	}
	m.DType = b.dtype()
	return m, nil
}

// linear reads the Linear layer at prefix: its rows, weight and bias
// (nil without), recording their roles (role + " weight"/" bias"); rows
// names what its outputs are in errors.
func (b *builder) linear(prefix, role, rows string) (n int, w, bias []float64, err error) {
	wt := b.f.Get(prefix + ".weight")
	if err := finite(wt); err != nil {
		return 0, nil, nil, err
	}
	b.used[wt.Name] = role + " weight"
	n = wt.Shape[0]
	if bt := b.f.Get(prefix + ".bias"); bt != nil {
		if len(bt.Shape) != 1 || bt.Shape[0] != n {
			return 0, nil, nil, fmt.Errorf("tensor %q has shape %v, want [%d] (the %s's %s)", bt.Name, bt.Shape, n, role, rows)
		}
		if err := finite(bt); err != nil {
			return 0, nil, nil, err
		}
		b.used[bt.Name] = role + " bias"
		bias = bt.Data
	}
	return n, wt.Data, bias, nil
}

// lstmPrefix returns the prefix of the nn.LSTM: given, or the only one.
func (b *builder) lstmPrefix(given string) (string, error) {
	var found []string
	for _, t := range b.f.Tensors {
		if p, ok := strings.CutSuffix(t.Name, ".weight_ih_l0"); ok {
			found = append(found, p)
		} else if t.Name == "weight_ih_l0" {
			found = append(found, "")
		}
	}
	if given != "" {
		for _, p := range found {
			if p == given {
				return p, nil
			}
		}
		return "", fmt.Errorf("no LSTM called %q (no tensor %q); LSTMs found: %s", given, given+".weight_ih_l0", list(found))
	}
	switch len(found) {
	case 0:
		if gru := b.f.Get("gru.weight_ih_l0"); gru != nil {
			return "", fmt.Errorf("no nn.LSTM: a GRU is not supported")
		}
		return "", fmt.Errorf("no nn.LSTM found (no tensor named <prefix>.weight_ih_l0); tensors: %s", list(b.names()))
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("several LSTMs: %s; name one with Names.LSTM", list(found))
}

// lstm reads the layers of the LSTM at prefix.
func (b *builder) lstm(prefix string) (cell.Params, error) {
	name := func(s string) string {
		if prefix == "" {
			return s
		}
		return prefix + "." + s
	}
	var p cell.Params
	if b.f.Get(name("weight_hr_l0")) != nil {
		return p, fmt.Errorf("LSTM %q has proj_size (tensor %q): not supported", prefix, name("weight_hr_l0"))
	}
	hh := b.f.Get(name("weight_hh_l0"))
	if hh == nil {
		return p, fmt.Errorf("LSTM %q has no tensor %q", prefix, name("weight_hh_l0"))
	}
	if len(hh.Shape) != 2 || hh.Shape[1] < 1 {
		return p, fmt.Errorf("tensor %q has shape %v, want [4H, H]", hh.Name, hh.Shape)
	}
	h := hh.Shape[1]
	gates := 4
	switch hh.Shape[0] {
	case 4 * h:
	case 3 * h: // an nn.GRU: gates r, z, n
		gates = 3
		p.Kind = cell.LayerGRU
	default:
		return p, fmt.Errorf("tensor %q has shape %v, want [4H, H] (an LSTM's four gates) or [3H, H] (a GRU's three)", hh.Name, hh.Shape)
	}
	p.Hidden = h
	p.Bidirectional = b.f.Get(name("weight_ih_l0_reverse")) != nil
	dirs := 1
	if p.Bidirectional {
		dirs = 2
	}
	hasBias := b.f.Get(name("bias_ih_l0")) != nil
	for k := 0; b.f.Get(name(fmt.Sprintf("weight_ih_l%d", k))) != nil; k++ {
		p.Layers = k + 1
		for d := range dirs {
			c, in, err := b.direction(name, k, d, h, dirs, gates, hasBias)
			if err != nil {
				return p, err
			}
			if k == 0 && d == 0 {
				p.Input = in
			} else if k == 0 && in != p.Input {
				return p, fmt.Errorf("tensor %q has %d columns, want %d like the forward direction", name("weight_ih_l0_reverse"), in, p.Input)
			}
			p.Cells = append(p.Cells, c)
		}
	}
	if p.Layers == 0 {
		return p, fmt.Errorf("LSTM %q has no layer 0", prefix)
	}
	return p, nil
}

// direction reads direction d of layer k (the tensors named by name(…)):
// its weights, the sum of its biases (a GRU's, gates = 3: both biases),
// and its input size.
func (b *builder) direction(name func(string) string, k, d, h, dirs, gates int, hasBias bool) (cell.CellParams, int, error) {
	suffix, role := fmt.Sprintf("_l%d", k), fmt.Sprintf("layer %d", k)
	if d == 1 {
		suffix += "_reverse"
		role += " (reverse)"
	}
	in := h * dirs
	if k == 0 {
		in = 0 // any: layer 0's input size is read from the tensor
	}
	wih, err := b.matrix(name("weight_ih"+suffix), gates*h, in, role+" weight_ih")
	if err != nil {
		return cell.CellParams{}, 0, err
	}
	whh, err := b.matrix(name("weight_hh"+suffix), gates*h, h, role+" weight_hh")
	if err != nil {
		return cell.CellParams{}, 0, err
	}
	c := cell.CellParams{Wih: wih.Data, Whh: whh.Data}
	bi, bh := b.f.Get(name("bias_ih"+suffix)), b.f.Get(name("bias_hh"+suffix))
	if (bi != nil) != hasBias || (bh != nil) != hasBias {
		return c, 0, fmt.Errorf("%s has %s; want both bias_ih and bias_hh in every layer or none", role, present(bi, bh))
	}
	if hasBias {
		for _, t := range []*tensorfile.Tensor{bi, bh} {
			if len(t.Shape) != 1 || t.Shape[0] != gates*h {
				return c, 0, fmt.Errorf("tensor %q has shape %v, want [%d] (%dH)", t.Name, t.Shape, gates*h, gates)
			}
			if err := finite(t); err != nil {
				return c, 0, err
			}
		}
		b.used[bi.Name], b.used[bh.Name] = role+" bias_ih", role+" bias_hh"
		if gates == 3 { // a GRU keeps them apart: b_hn is inside r⊙(W_hn·h + b_hn)
			c.B, c.Bhh = bi.Data, bh.Data
			return c, wih.Shape[1], nil
		}
		// PyTorch adds b_ih and b_hh to the same pre-activation.
		c.B = make([]float64, 4*h)
		for i := range c.B {
			c.B[i] = bi.Data[i] + bh.Data[i]
		}
	}
	return c, wih.Shape[1], nil
}

func present(bi, bh *tensorfile.Tensor) string {
	switch {
	case bi != nil && bh == nil:
		return "bias_ih but no bias_hh"
	case bi == nil && bh != nil:
		return "bias_hh but no bias_ih"
	case bi == nil:
		return "no biases unlike layer 0"
	}
	return "biases unlike layer 0"
}

// matrix returns the 2-D tensor name of shape rows×cols (cols 0: any),
// finite, and records its role.
func (b *builder) matrix(name string, rows, cols int, role string) (*tensorfile.Tensor, error) {
	t := b.f.Get(name)
	if t == nil {
		return nil, fmt.Errorf("missing tensor %q (%s)", name, role)
	}
	if len(t.Shape) != 2 || t.Shape[0] != rows || (cols > 0 && t.Shape[1] != cols) || t.Shape[1] < 1 {
		want := fmt.Sprintf("[%d, %d]", rows, cols)
		if cols == 0 {
			want = fmt.Sprintf("[%d, E]", rows)
		}
		return nil, fmt.Errorf("tensor %q (%s) has shape %v, want %s", name, role, t.Shape, want)
	}
	if err := finite(t); err != nil {
		return nil, err
	}
	b.used[name] = role
	return t, nil
}

func finite(t *tensorfile.Tensor) error {
	for i, v := range t.Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("tensor %q holds %v at flat index %d; weights must be finite", t.Name, v, i)
		}
	}
	return nil
}

// headAndEmbedding finds the classifier (see classifier) and the
// embedding (a .weight of shape (V, e)) among the tensors the LSTM does
// not use.
func (b *builder) headAndEmbedding(names Names, e, hd int) (emb string, cls classifierParts, err error) {
	var embs []string
	for _, t := range b.f.Tensors {
		p, ok := strings.CutSuffix(t.Name, ".weight")
		if !ok || b.used[t.Name] != "" || len(t.Shape) != 2 {
			continue
		}
		if t.Shape[1] == e && b.f.Get(p+".bias") == nil {
			embs = append(embs, p)
		}
	}
	cls, err = b.classifier(names, hd)
	if err != nil {
		return "", cls, err
	}
	embs = remove(remove(embs, cls.first), cls.second)
	switch names.Embedding {
	case NoEmbedding:
		return "", cls, nil
	case "":
		embs = prefer(embs, func(p string) bool { return strings.Contains(strings.ToLower(p), "emb") })
		if len(embs) > 1 {
			return "", cls, fmt.Errorf("several embedding candidates of shape [V, %d]: %s; name one with Names.Embedding (or Names.Embedding = NoEmbedding)", e, list(embs))
		}
		if len(embs) == 1 {
			emb = embs[0]
		}
		if emb == "" {
			if err := b.misfitEmbedding(e, cls); err != nil {
				return "", cls, err
			}
		}
	default:
		t := b.f.Get(names.Embedding + ".weight")
		if t == nil || len(t.Shape) != 2 || t.Shape[1] != e {
			return "", cls, fmt.Errorf("embedding %q: want a tensor %q of shape [V, %d]; candidates: %s", names.Embedding, names.Embedding+".weight", e, list(embs))
		}
		emb = names.Embedding
	}
	if emb != "" && b.f.Get(emb + ".weight").Shape[0] < 1 {
		return "", cls, fmt.Errorf("embedding %q has no rows", emb)
	}
	return emb, cls, nil
}

// misfitEmbedding names an unused tensor that is an embedding by its name
// (<…emb…>.weight, 2-D, no bias) but whose width is not the LSTM's input
// size: without it the tensor would be reported as an unsupported extra.
func (b *builder) misfitEmbedding(e int, cls classifierParts) error {
	for _, t := range b.f.Tensors {
		p, ok := strings.CutSuffix(t.Name, ".weight")
		if !ok || p == cls.first || p == cls.second || b.used[t.Name] != "" || len(t.Shape) != 2 || b.f.Get(p+".bias") != nil ||
			!strings.Contains(strings.ToLower(p), "emb") {
			continue
		}
		return fmt.Errorf("embedding %q has shape %v: its width %d does not match the LSTM's input size %d", p, t.Shape, t.Shape[1], e)
	}
	return nil
}

// prefer keeps the candidates that ok accepts, if any does.
func prefer(c []string, ok func(string) bool) []string {
	var kept []string
	for _, p := range c {
		if ok(p) {
			kept = append(kept, p)
		}
	}
	if len(kept) > 0 {
		return kept
	}
	return c
}

func remove(c []string, s string) []string {
	var kept []string
	for _, p := range c {
		if p != s {
			kept = append(kept, p)
		}
	}
	return kept
}

// leftovers refuses tensors that are not part of the model: a model with
// more layers than this package runs would otherwise be attributed as
// something it is not.
//
// Only tensors under the model's root count: the dotted prefix its parts
// share, as in a training checkpoint {"model": state_dict, "optimizer":
// …}, whose other entries (the optimizer's state) are listed as ignored.
func (b *builder) leftovers(root string) error {
	var rest []string
	for _, t := range b.f.Tensors {
		if b.used[t.Name] != "" {
			continue
		}
		if !strings.HasPrefix(t.Name, root) {
			b.used[t.Name] = "ignored: outside " + strings.TrimSuffix(root, ".")
			continue
		}
		rest = append(rest, fmt.Sprintf("%q %v", clip(t.Name), t.Shape))
	}
	if len(rest) > 0 {
		return fmt.Errorf("tensors beyond Embedding → LSTM → Linear: %s; this architecture is not supported (extra layers are not; an attention head is read from Linear layers named attention, attn or att, or named with Names.Attention)", cut(rest, 5))
	}
	return nil
}

// root returns the dotted prefix the given part names share ("model." for
// model.embedding, model.lstm and model.fc), or "" when they share none.
// An empty name (no embedding) does not count.
func root(names ...string) string {
	var common []string
	first := true
	for _, n := range names {
		if n == "" {
			continue
		}
		parts := strings.Split(n, ".")
		parts = parts[:len(parts)-1] // the part's own name is not a root
		if first {
			common, first = parts, false
			continue
		}
		k := 0
		for k < len(common) && k < len(parts) && common[k] == parts[k] {
			k++
		}
		common = common[:k]
	}
	if len(common) == 0 {
		return ""
	}
	return strings.Join(common, ".") + "."
}

func (b *builder) dtype() string {
	d := ""
	for _, t := range b.f.Tensors {
		if d == "" {
			d = t.DType
		} else if d != t.DType {
			return "mixed"
		}
	}
	return d
}

func (b *builder) names() []string {
	var n []string
	for _, t := range b.f.Tensors {
		n = append(n, t.Name)
	}
	return n
}

// list quotes and joins names, sorted, at most 20, so that a file with
// many tensors still gives a short message.
func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	s := append([]string(nil), names...)
	sort.Strings(s)
	q := make([]string, min(len(s), 20))
	for i := range q {
		q[i] = fmt.Sprintf("%q", clip(s[i]))
	}
	return cut(append(q, s[len(q):]...), len(q))
}

// cut joins the first most items and counts the others: "a, b and
// 499,995 more".
func cut(items []string, most int) string {
	if len(items) <= most {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:most], ", ") + " and " + thousands(len(items)-most) + " more"
}

// clip shortens a name longer than 80 bytes for a message.
func clip(name string) string {
	if len(name) <= 80 {
		return name
	}
	return strings.ToValidUTF8(name[:80], "") + "…"
}

// thousands writes n with commas between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Input returns E, the size of one embedded token (or of one feature row).
func (m *Model) Input() int { return m.Net.Input() }

// Classes returns C, the number of logits. With Input, it makes a *Model
// an attrib.Model: attrib.NewExplainer(m) is attrib.NewExplainer(m.Net).
func (m *Model) Classes() int { return m.Net.Classes() }

// Stacked returns the engine, m.Net (nil for a nil Model).
func (m *Model) Stacked() *cell.Model {
	if m == nil {
		return nil
	}
	return m.Net
}

// Embed returns the embedded input of the token ids: row t is the
// embedding of ids[t]. An id outside [0, V) is an error naming its
// position. With a pad id (HasPad) the trailing pad tokens are removed
// first, as pack_padded_sequence does: the input has Unpadded(ids) rows.
// It allocates the T×E values; EmbedInto reuses a buffer.
func (m *Model) Embed(ids []int) (cell.Input, error) {
	return m.EmbedInto(nil, ids)
}

// EmbedInto is Embed writing the rows into dst, from its start, as append
// does: into dst's array when its capacity holds the T×E values (then it
// allocates nothing), else into a new one. The returned input's
// DenseValues is that slice: pass it as the next call's dst to reuse it.
// dst must not be in use by an input still being attributed.
func (m *Model) EmbedInto(dst []float64, ids []int) (cell.Input, error) {
	if m == nil || m.Net == nil {
		return cell.Input{}, fmt.Errorf("model: no model (nil or not made by Load)")
	}
	if m.Embedding == nil {
		return cell.Input{}, fmt.Errorf("model: the model has no embedding: give dense features")
	}
	if len(ids) == 0 {
		return cell.Input{}, cell.ErrEmptyInput
	}
	n, err := m.Unpadded(ids)
	if err != nil {
		return cell.Input{}, err
	}
	ids = ids[:n]
	if err := m.CheckLength(len(ids)); err != nil {
		return cell.Input{}, err
	}
	e := m.Input()
	for t, id := range ids { // before dst is touched: a refused call leaves it as it was
		if id < 0 || id >= m.Vocab {
			return cell.Input{}, fmt.Errorf("model: token %d at position %d is out of range [0, %d)", id, t, m.Vocab)
		}
	}
	x := dst[:0]
	if need := len(ids) * e; cap(x) < need {
		x = make([]float64, need)
	} else {
		x = x[:need]
	}
	for t, id := range ids {
		copy(x[t*e:(t+1)*e], m.Embedding[id*e:(id+1)*e])
	}
	return cell.Dense(x, len(ids)), nil
}

// Summary is a few lines that say what was understood: parts, sizes,
// parameters.
func (m *Model) Summary() string {
	var b strings.Builder
	n := m.Net
	dirs := "unidirectional"
	if n.Directions() == 2 {
		dirs = "bidirectional"
	}
	// Every name is the file's (or the user's): shown escaped, so that a
	// tensor or node name cannot send escape sequences to the terminal.
	v := visible.String
	fmt.Fprintf(&b, "file:       %s (%s, %s)\n", v(m.Path), v(m.Format), v(m.DType))
	if m.Embedding != nil {
		fmt.Fprintf(&b, "embedding:  %s: %d tokens × %d\n", v(m.Names.Embedding), m.Vocab, n.Input())
	} else {
		fmt.Fprintf(&b, "embedding:  none (dense input of %d features)\n", n.Input())
	}
	bias := "with biases"
	if !n.HasLSTMBias() {
		bias = "no biases"
	}
	if n.Kind() == cell.LayerGRU {
		fmt.Fprintf(&b, "gru:        %s: GRU, %d layer(s), %s, H = %d, %s\n", v(m.Names.LSTM), n.Layers(), dirs, n.Hidden(), bias)
	} else {
		fmt.Fprintf(&b, "lstm:       %s: %d layer(s), %s, H = %d, %s\n", v(m.Names.LSTM), n.Layers(), dirs, n.Hidden(), bias)
	}
	dbias := "with bias"
	if !n.HasDecoderBias() {
		dbias = "no bias"
	}
	head := fmt.Sprintf("%s (head %s, %s)", HeadExpression(m.Head, n.Directions()), m.Head, m.HeadSource)
	if m.OutputLayer == "" {
		fmt.Fprintf(&b, "decoder:    %s: Linear(%d → %d) on %s, %s\n", v(m.Names.Decoder), n.Hidden()*n.Directions(), n.Classes(), head, dbias)
	} else {
		fmt.Fprintf(&b, "decoder:    %s: Linear(%d → %d) → %s → %s: Linear(%d → %d) on %s, %s\n", v(m.Names.Decoder), n.Hidden()*n.Directions(), n.Units(), m.actName(), v(m.OutputLayer), n.Units(), n.Classes(), head, dbias)
	}
	if a := n.Attention(); a != nil && m.Head == cell.HeadAttention {
		d := n.Hidden() * n.Directions()
		name := m.attnName
		if name == "" { // a graph's: its score nodes
			name = m.Names.Attention
		}
		if a.Units == 0 {
			fmt.Fprintf(&b, "attention:  %s: Linear(%d → 1), softmax over the steps\n", v(name), d)
		} else {
			fmt.Fprintf(&b, "attention:  %s: Linear(%d → %d) → tanh → Linear(%d → 1), softmax over the steps\n", v(name), d, a.Units, a.Units)
		}
	}
	if m.Graph != "" {
		fmt.Fprintf(&b, "graph:      %s\n", v(m.Graph)) // the producer's name is the file's
	}
	if m.HasPad {
		fmt.Fprintf(&b, "padding:    token id %d: an input's trailing pad tokens are removed (pack_padded_sequence)\n", m.Pad)
	}
	params := n.Weights() + len(m.Embedding)
	fmt.Fprintf(&b, "classes:    %d\nparameters: %d\n", n.Classes(), params)
	fmt.Fprintf(&b, "tensors:\n")
	for _, t := range m.Tensors {
		fmt.Fprintf(&b, "  %-32s %-5s %-14s %s\n", v(t.Name), v(t.DType), fmt.Sprint(t.Shape), v(t.Role))
	}
	return b.String()
}
