package export

import (
	"errors"
	"strconv"
	"strings"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// StateDict returns the tensors of a PyTorch classifier that computes what
// net computes on one-hot input:
//
//	embedding.weight   D×D identity (nn.Embedding(D, D): id k embeds as row k of the one-hot input)
//	lstm.weight_ih_l0  4H×D
//	lstm.weight_hh_l0  4H×H
//	lstm.bias_ih_l0    4H, the network's B
//	lstm.bias_hh_l0    4H, zeros
//	fc.weight          C×H
//	fc.bias            C
//
// in PyTorch's gate order (i, f, g, o), read from the engine's parameters
// (cell.Params). The logits are fc(h_n[-1]). A nil network is an
// error, and so is a model of another shape than the white-box networks':
// one LSTM layer, one direction, head hn, one Linear decoder with a bias.
func StateDict(net *cell.Model) ([]Tensor, error) {
	if net == nil {
		return nil, errors.New("export: nil network")
	}
	p := net.Params()
	if p.Layers != 1 || p.Bidirectional || p.Kind != cell.LayerLSTM || p.Head != cell.HeadHN || p.Act != cell.ActNone || p.By == nil {
		return nil, errors.New("export: a state dict is written for a one-layer, one-direction LSTM with head hn and one Linear decoder with a bias (a white-box network's shape)")
	}
	d, h, c := p.Input, p.Hidden, p.Classes
	lstm := p.Cells[0]
	if lstm.B == nil {
		lstm.B = make([]float64, 4*h)
	}
	eye := make([]float64, d*d)
	for k := range d {
		eye[k*d+k] = 1
	}
	return []Tensor{
		{"embedding.weight", []int{d, d}, eye},
		{"lstm.weight_ih_l0", []int{4 * h, d}, lstm.Wih},
		{"lstm.weight_hh_l0", []int{4 * h, h}, lstm.Whh},
		{"lstm.bias_ih_l0", []int{4 * h}, lstm.B},
		{"lstm.bias_hh_l0", []int{4 * h}, make([]float64, 4*h)},
		{"fc.weight", []int{c, h}, p.Wy},
		{"fc.bias", []int{c}, p.By},
	}, nil
}

// Metadata describes a white-box network for the file's "__metadata__":
// its name, parameters, alphabet (token id = position) and classes (logit
// order), and the PyTorch sizes. A nil network, or one without a task,
// has none.
func Metadata(net *whitebox.Net) map[string]string {
	if net == nil || net.Model == nil || net.Task == nil {
		return nil
	}
	p := net.Model.Params()
	m := map[string]string{
		"format":          "pt",
		"whitebox.net":    net.Name,
		"whitebox.m":      strconv.FormatFloat(net.Params.M, 'g', -1, 64),
		"vocab":           strings.Join(net.Task.Alphabet, " "),
		"classes":         strings.Join(net.Task.Classes, " "),
		"embedding_dim":   strconv.Itoa(p.Input),
		"hidden_size":     strconv.Itoa(p.Hidden),
		"num_classes":     strconv.Itoa(p.Classes),
		"architecture":    "nn.Embedding(V, V) -> nn.LSTM(V, H, batch_first=True) -> nn.Linear(H, C) on h_n[-1]",
		"whitebox.source": "github.com/whitebox-lstm/whitebox",
	}
	if net.Params.U != 0 {
		m["whitebox.u"] = strconv.FormatFloat(net.Params.U, 'g', -1, 64)
	}
	if net.Params.K != 0 {
		m["whitebox.k"] = strconv.Itoa(net.Params.K)
	}
	return m
}
