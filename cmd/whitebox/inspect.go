package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/internal/regfile"
	"github.com/whitebox-lstm/whitebox/model"
	"github.com/whitebox-lstm/whitebox/score"
	"github.com/whitebox-lstm/whitebox/verify"
)

// inspect prints what was read from a model file: its tensors, the parts
// and sizes they make, the classes and the parameter count.
func inspect(args []string, stdout, stderr io.Writer) int {
	var mf struct{ path, embedding, lstm, decoder, head, act, verify string }
	fs := flag.NewFlagSet("whitebox inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&mf.path, "model", "", "the model file: a PyTorch state_dict (torch.save), .safetensors, or an ONNX export (.onnx)")
	fs.StringVar(&mf.embedding, "embedding", "", "the embedding's name in the file (default: detected; none: no embedding)")
	fs.StringVar(&mf.lstm, "lstm", "", "the LSTM's name in the file (default: detected)")
	fs.StringVar(&mf.decoder, "decoder", "", "the decoder's name in the file (default: detected)")
	fs.StringVar(&mf.head, "head", "", "how the LSTM's outputs reach the classifier: hn, hn-bf, last, mean, max (default: the file's metadata, else hn)")
	fs.StringVar(&mf.act, "act", "", "the activation between a classifier's two Linear layers: relu or tanh")
	fs.StringVar(&mf.verify, "verify", "", "a file of JSON lines {\"ids\": [...], \"logits\": [...]} from your own model: prints the verdict of every head")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: whitebox inspect -model FILE [-embedding NAME] [-lstm NAME] [-decoder NAME]
                       [-head HEAD] [-act ACT] [-verify FILE]

Prints how the model file was read: the embedding, the LSTM's layers and
directions, the decoder, the classes, the parameter count, and every
tensor with its dtype, shape and role. With -verify FILE (JSON lines
{"ids": [...], "logits": [...]} recorded from your own model) it also
prints, for every head, whether the logits match (relative 1e-4) and the
worst line. Exit status: 0 read; 2 a usage error or a file that could not
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
	names := model.Names{Embedding: mf.embedding, LSTM: mf.lstm, Decoder: mf.decoder}
	m, err := score.LoadModel(mf.path, names, mf.head, mf.act, "", 0)
	if err != nil && mf.verify != "" && mf.act == "" {
		// Two Linear layers without -act: the verdicts try both.
		if m2, err2 := score.LoadModel(mf.path, names, mf.head, "relu", "", 0); err2 == nil {
			m, err = m2, nil
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "whitebox inspect: %s\n", errText(err))
		return 2
	}
	fmt.Fprint(stdout, m.Summary())
	if mf.verify == "" {
		return 0
	}
	if m.Embedding == nil {
		fmt.Fprintln(stderr, "whitebox inspect: -verify: the model reads features, not token ids; -verify needs a model with an embedding")
		return 2
	}
	// One line at a time, each within attribute's default -budget.
	vf, err := verify.Open(mf.verify, m.Vocab, m.Net.Classes(), attrib.DefaultBudget)
	if err == nil {
		defer vf.Close()
		var report string
		if report, err = vf.Report(m); err == nil {
			fmt.Fprint(stdout, report)
			return 0
		}
	}
	fmt.Fprintf(stderr, "whitebox inspect: %s\n", errText(err))
	return 2
}
