package score

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/whitebox-lstm/whitebox/attrib"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/internal/visible"
	"github.com/whitebox-lstm/whitebox/model"
	"github.com/whitebox-lstm/whitebox/tensorfile"
	"github.com/whitebox-lstm/whitebox/verify"
)

// LoadModel loads the model file with the flags -head (hn, hn-bf, last,
// mean, max, auto; "": the file's metadata, else hn), -act (relu, tanh;
// "") and -verify (a verify file, ""). With -verify the model's logits
// must match the file's (package verify): a mismatch is an error that
// names the worst line and the head that would match; -head auto takes
// the head that matches. The verify file is read one line at a time, each
// line within budget (-budget; 0: no bound). The errors are the commands'
// messages. pad is -pad: a token id, none, or "" for the file's
// metadata's, if any (see loadModel).
func LoadModel(path string, names model.Names, head, act, pad, verifyFile string, budget int64) (*model.Model, error) {
	m, err := loadModel(path, names, head, act, pad, verifyFile, budget)
	return m, withFlags(err)
}

// loadModel is LoadModel with -pad (a token id, or none; "": the file's
// metadata, else none), set before -verify runs: a verify line recorded
// with its pads (scripts/record_logits.py) runs as the model runs inputs.
func loadModel(path string, names model.Names, head, act, pad, verifyFile string, budget int64) (*model.Model, error) {
	o := model.Options{Names: names}
	switch pad {
	case "":
	case "none":
		o.Pad = new(model.NoPad)
	default:
		p, err := model.ParsePad(pad)
		if err != nil {
			return nil, fmt.Errorf("-pad %s: a token id (an integer ≥ 0; with -vocab, the pad token's line number from 0) or none", visible.Quote(pad))
		}
		o.Pad = &p
	}
	auto := head == "auto"
	switch {
	case auto && verifyFile == "":
		return nil, errors.New("-head auto needs -verify FILE: the logits of your own model, to find the head")
	case auto, head == "":
	default:
		h, err := cell.ParseHead(head)
		if err != nil {
			return nil, fmt.Errorf("-head: %v (or auto, with -verify)", err)
		}
		o.Head = &h
	}
	if act != "" {
		a, err := cell.ParseActivation(act)
		if err != nil || a == cell.ActNone {
			return nil, fmt.Errorf("-act %q: the activations are relu and tanh", act)
		}
		o.Act = a
	}
	if model.IsONNX(path) { // the graph gives the head and the activation
		m, err := model.Load(path, o)
		if err != nil || verifyFile == "" {
			return m, err
		}
		return applyVerify(m, verifyFile, auto, act != "", budget)
	}
	f, err := tensorfile.Open(path)
	if err != nil {
		return nil, err
	}
	m, err := model.FromFile(f, o)
	if err != nil && verifyFile != "" && act == "" && o.Act == cell.ActNone {
		// Two Linear layers need an activation to be built: auto tries
		// both, starting from relu; otherwise the error says which
		// activation the logits match.
		o.Act = cell.ActReLU
		m2, err2 := model.FromFile(f, o)
		switch {
		case err2 == nil && auto:
			m, err = m2, nil
		case err2 == nil:
			if hint := verifyHint(m2, verifyFile, budget); hint != "" {
				err = fmt.Errorf("%w; %s", err, hint)
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("model: %s: %w", filepath.Base(path), err)
	}
	m.Path = path
	if verifyFile == "" {
		return m, nil
	}
	return applyVerify(m, verifyFile, auto, act != "", budget)
}

// applyVerify checks m against the verify file (verify.File.Apply), read
// one line at a time within budget.
func applyVerify(m *model.Model, verifyFile string, auto, fixAct bool, budget int64) (*model.Model, error) {
	if m.Embedding == nil {
		return nil, fmt.Errorf("-verify: the model reads features, not token ids; -verify needs a model with an embedding")
	}
	vf, err := verify.Open(verifyFile, m.Vocab, m.Net.Classes(), budget)
	if err != nil {
		return nil, verifyFlags(err, verifyFile, false)
	}
	defer vf.Close()
	mv, err := vf.Apply(m, auto, fixAct)
	if err != nil {
		return nil, verifyFlags(err, verifyFile, auto)
	}
	return mv, nil
}

// InspectVerify is inspect's -verify: the verdict of every head of m on
// the verify file (read one line at a time within budget), in the
// command's terms, and the model they point to (verify.Pick's: the
// match, when there is one) for the description beside them.
func InspectVerify(m *model.Model, verifyFile string, budget int64) (*model.Model, string, error) {
	if m.Embedding == nil {
		return nil, "", fmt.Errorf("-verify: the model reads features, not token ids; -verify needs a model with an embedding")
	}
	vf, err := verify.Open(verifyFile, m.Vocab, m.Net.Classes(), budget)
	if err != nil {
		return nil, "", verifyFlags(err, verifyFile, false)
	}
	defer vf.Close()
	all, err := vf.All(m)
	if err != nil {
		return nil, "", verifyFlags(fmt.Errorf("verify %s: %w", verifyFile, err), verifyFile, false)
	}
	shown, err := verify.Pick(m, all)
	if err != nil {
		return nil, "", withFlags(err)
	}
	return shown, flagNames.Replace(verify.Render(all, vf.Len(), shown)), nil
}

// verifyFlags is an error of package verify in the command's terms: its
// options as flags (flagNames), and its "verify FILE: " as "-verify FILE: "
// ("-head auto -verify FILE: " when auto was to choose the head).
func verifyFlags(err error, file string, auto bool) error {
	msg := flagNames.Replace(err.Error())
	flag := "-verify "
	if auto {
		flag = "-head auto -verify "
	}
	if rest, ok := strings.CutPrefix(msg, "verify "+file+": "); ok {
		msg = flag + file + ": " + rest
	} else if rest, ok := strings.CutPrefix(msg, "verify: "); ok {
		msg = "-verify: " + rest
	}
	if msg == err.Error() {
		return err
	}
	return &flagError{msg, err}
}

// verifyHint says which heads the verify file's logits match on m, or ""
// when the file cannot be read (the error comes later, where it is used).
func verifyHint(m *model.Model, verifyFile string, budget int64) string {
	if m.Embedding == nil {
		return ""
	}
	vf, err := verify.Open(verifyFile, m.Vocab, m.Net.Classes(), budget)
	if err != nil {
		return ""
	}
	defer vf.Close()
	all, err := vf.All(m)
	if err != nil {
		return ""
	}
	return "-verify " + verifyFile + ": " + flagNames.Replace(verify.Hint(all))
}

// baselineRow reads -baseline: "" or zero is nil (the zero row); id:N is
// the embedding row of token N, for IG, occlusion and DeepLIFT on a model
// with an embedding.
func baselineRow(spec string, subj subject, m attrib.Method) ([]float64, error) {
	if spec == "" || spec == "zero" {
		return nil, nil
	}
	rest, ok := strings.CutPrefix(spec, "id:")
	if !ok {
		return nil, fmt.Errorf("-baseline %q: zero or id:N (the embedding row of token N)", spec)
	}
	ms, isModel := subj.(*modelSubject)
	if !isModel || ms.m.Embedding == nil {
		return nil, fmt.Errorf("-baseline %s: needs a model with an embedding", spec)
	}
	if m != attrib.IntegratedGradients && m != attrib.Occlusion && m != attrib.DeepLIFT {
		return nil, fmt.Errorf("-baseline %s: for ig, occlusion and deeplift only, not %v", spec, m)
	}
	n, err := strconv.Atoi(rest)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, fmt.Errorf("-baseline %s: %s is not an integer token id (id:N, 0 ≤ N < %d)", quoteWindow(spec), visible.Quote(rest), ms.m.Vocab)
	}
	if err != nil || n < 0 || n >= ms.m.Vocab {
		return nil, fmt.Errorf("-baseline %s: the token id must be in [0, %d)", quoteWindow(spec), ms.m.Vocab)
	}
	e := ms.m.Input()
	return ms.m.Embedding[n*e : (n+1)*e], nil
}
