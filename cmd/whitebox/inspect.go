package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/internal/regfile"
	"github.com/whitebox-lstm/whitebox/internal/visible"
	"github.com/whitebox-lstm/whitebox/model"
	"github.com/whitebox-lstm/whitebox/score"
)

// inspect prints what was read from a model file: its tensors, the parts
// and sizes they make, the classes and the parameter count.
func inspect(args []string, stdout, stderr io.Writer) int {
	var mf struct{ path, embedding, lstm, decoder, attention, head, act, pad, verify string }
	fs := flag.NewFlagSet("whitebox inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&mf.path, "model", "", "the model file: a PyTorch state_dict (torch.save), .safetensors, or an ONNX export (.onnx)")
	fs.StringVar(&mf.embedding, "embedding", "", "the embedding's name in the file (default: detected; none: no embedding)")
	fs.StringVar(&mf.lstm, "lstm", "", "the LSTM's name in the file (default: detected)")
	fs.StringVar(&mf.decoder, "decoder", "", "the decoder's name in the file (default: detected)")
	fs.StringVar(&mf.attention, "attention", "", "the attention head's scoring layers' name in the file (default: detected by name: attention, attn, att)")
	fs.StringVar(&mf.head, "head", "", "how the LSTM's outputs reach the classifier: hn, hn-bf, last, mean, max, attention (default: the file's metadata, else hn, or attention when the file has attention layers)")
	fs.StringVar(&mf.act, "act", "", "the activation between a classifier's two Linear layers: relu or tanh")
	fs.StringVar(&mf.pad, "pad", "", "the padding token id, or none: trailing pads are removed before -verify's lines run, as attribute -pad removes them (default: the file's metadata, else none)")
	fs.StringVar(&mf.verify, "verify", "", "a file of JSON lines {\"ids\": [...], \"logits\": [...]} from your own model: prints the verdict of every head")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: whitebox inspect -model FILE [-embedding NAME] [-lstm NAME] [-decoder NAME]
                       [-head HEAD] [-act ACT] [-pad ID|none] [-verify FILE]

Prints how the model file was read: the embedding, the LSTM's layers and
directions, the decoder, the classes, the parameter count, and every
tensor with its dtype, shape and role. A classifier of two Linear layers
whose activation neither -act nor the file gives is shown with it
unknown, and the ways to choose it. With -verify FILE (JSON lines
{"ids": [...], "logits": [...]} recorded from your own model) it also
prints, for every head, whether the logits match (relative 1e-4) and the
worst line, and the decoder shown is the one that matches. Exit status: 0 read; 2 a usage error or a file that could not
be read as a model (or a verify file that could not be read).

Flags:
`)
		fs.PrintDefaults()
	}
	rest, status, ok := parseInterleaved(fs, args)
	if !ok {
		return status
	}
	if len(rest) == 1 && mf.path == "" {
		mf.path = rest[0]
	} else if len(rest) > 0 || mf.path == "" {
		fmt.Fprintln(stderr, "whitebox inspect: give one model file (-model FILE)")
		return 2
	}
	for _, file := range []struct{ flag, path string }{{"-model", mf.path}, {"-verify", mf.verify}} {
		if file.path == "" {
			continue
		}
		if err := regfile.Flag(file.flag, file.path); err != nil {
			fmt.Fprintf(stderr, "whitebox inspect: %s\n", errText(err))
			return 2 // as for a file that does not read as a model
		}
	}
	if mf.head == "auto" {
		fmt.Fprintln(stderr, "whitebox inspect: -head auto is for attribute; inspect -verify FILE prints the verdict of every head")
		return 2
	}
	// The model as given (its head is not checked here: -verify's report
	// says which heads match).
	names := model.Names{Embedding: mf.embedding, LSTM: mf.lstm, Decoder: mf.decoder, Attention: mf.attention}
	m, err := score.LoadModel(mf.path, names, mf.head, mf.act, mf.pad, "", 0)
	actUnknown := false
	if errors.Is(err, model.ErrNoActivation) && mf.act == "" {
		// Two Linear layers, and nothing says the activation between
		// them: the model is built with relu to be read at all (and for
		// -verify, which tries both), and shown with it unknown.
		if m2, err2 := score.LoadModel(mf.path, names, mf.head, "relu", mf.pad, "", 0); err2 == nil {
			m, err, actUnknown = m2, nil, true
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "whitebox inspect: %s\n", errText(err))
		return 2
	}
	if actUnknown {
		c := *m
		c.Act = cell.ActNone // Summary: "activation unknown"
		m = &c
	}
	if mf.verify == "" {
		fmt.Fprint(stdout, m.Summary())
		if actUnknown {
			fmt.Fprintf(stdout, "activation: unknown (nothing in the file says what is between %s and %s); choose it:\n"+
				"  -act relu or -act tanh, if you know it;\n"+
				"  -verify FILE (logits recorded from your model, scripts/record_logits.py): inspect -verify FILE\n"+
				"  says which heads and activations match, and attribute -head auto -verify FILE takes the one that does\n",
				visible.String(m.Names.Decoder), visible.String(m.OutputLayer))
		}
		return 0
	}
	// One line at a time, each within attribute's default -budget; the
	// summary shows the head and activation that match, when one does.
	shown, report, err := score.InspectVerify(m, mf.verify, attrib.DefaultBudget)
	if err != nil {
		fmt.Fprint(stdout, m.Summary()) // what was read, before what went wrong
		fmt.Fprintf(stderr, "whitebox inspect: %s\n", errText(err))
		return 2
	}
	fmt.Fprint(stdout, shown.Summary())
	fmt.Fprint(stdout, report)
	return 0
}
