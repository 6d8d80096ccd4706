package server

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/whitebox-lstm/whitebox/score"
)

// modelKeys are the keys of a -model value after NAME=FILE, each an
// attribute flag of the same name.
var modelKeys = []string{"head", "act", "verify", "vocab", "unk", "classes", "pad", "embedding", "lstm", "decoder", "attention"}

// ParseModel reads serve's -model value: NAME=FILE, then the model's
// attribute flags as KEY=VALUE, separated by commas:
//
//	m=model.pt,head=mean,verify=verify.jsonl,vocab=vocab.txt
//
// The keys are head, act, verify, vocab, unk, classes, pad, embedding,
// lstm, decoder and attention. A file name may not hold a comma.
func ParseModel(spec string) (Model, error) {
	parts := strings.Split(spec, ",")
	name, file, ok := strings.Cut(parts[0], "=")
	if !ok || name == "" || file == "" {
		return Model{}, fmt.Errorf("-model %q: want NAME=FILE[,KEY=VALUE…] (keys: %s)", spec, strings.Join(modelKeys, ", "))
	}
	cfg := score.DefaultConfig()
	cfg.Model, cfg.Set = file, map[string]bool{"model": true}
	fields := map[string]*string{"head": &cfg.Head, "act": &cfg.Act, "verify": &cfg.Verify, "vocab": &cfg.Vocab, "unk": &cfg.Unk,
		"classes": &cfg.Classes, "pad": &cfg.Pad, "embedding": &cfg.Embedding, "lstm": &cfg.LSTM, "decoder": &cfg.Decoder, "attention": &cfg.Attention}
	for _, kv := range parts[1:] {
		k, v, ok := strings.Cut(kv, "=")
		dst := fields[k]
		if !ok || dst == nil {
			return Model{}, fmt.Errorf("-model %s: %q is not KEY=VALUE with a key of %s", name, kv, strings.Join(modelKeys, ", "))
		}
		if cfg.Set[k] {
			return Model{}, fmt.Errorf("-model %s: %s given twice", name, k)
		}
		*dst, cfg.Set[k] = v, true
	}
	return Model{Name: name, Config: cfg}, nil
}

// ParseNet reads serve's -net value: a white-box network (its name is
// the model's), or NAME=NETWORK, then its parameters m, u and k as
// KEY=VALUE, separated by commas: sp-fsa, or fsa=sp-fsa,m=60.
func ParseNet(spec string) (Model, error) {
	parts := strings.Split(spec, ",")
	name, net, ok := strings.Cut(parts[0], "=")
	if !ok {
		net = name
	}
	if name == "" || net == "" {
		return Model{}, fmt.Errorf("-net %q: want NETWORK or NAME=NETWORK[,m=M,u=U,k=K]", spec)
	}
	cfg := score.DefaultConfig()
	cfg.Net, cfg.Set = net, map[string]bool{"net": true}
	for _, kv := range parts[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || (k != "m" && k != "u" && k != "k") {
			return Model{}, fmt.Errorf("-net %s: %q is not m=, u= or k=", name, kv)
		}
		if cfg.Set[k] {
			return Model{}, fmt.Errorf("-net %s: %s given twice", name, k)
		}
		cfg.Set[k] = true
		var err error
		switch k {
		case "m":
			cfg.M, err = strconv.ParseFloat(v, 64)
		case "u":
			cfg.U, err = strconv.ParseFloat(v, 64)
		case "k":
			cfg.K, err = strconv.Atoi(v)
		}
		if err != nil {
			return Model{}, fmt.Errorf("-net %s: %s=%q is not a number", name, k, v)
		}
	}
	return Model{Name: name, Config: cfg}, nil
}
