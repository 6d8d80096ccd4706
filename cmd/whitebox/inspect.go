package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/whitebox-lstm/whitebox/model"
)

// inspect prints what was read from a model file: its tensors, the parts
// and sizes they make, the classes and the parameter count.
func inspect(args []string, stdout, stderr io.Writer) int {
	var mf struct{ path, embedding, lstm, decoder string }
	fs := flag.NewFlagSet("whitebox inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&mf.path, "model", "", "the model file: a PyTorch state_dict (torch.save) or .safetensors")
	fs.StringVar(&mf.embedding, "embedding", "", "the embedding's name in the file (default: detected; none: no embedding)")
	fs.StringVar(&mf.lstm, "lstm", "", "the LSTM's name in the file (default: detected)")
	fs.StringVar(&mf.decoder, "decoder", "", "the decoder's name in the file (default: detected)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: whitebox inspect -model FILE [-embedding NAME] [-lstm NAME] [-decoder NAME]

Prints how the model file was read: the embedding, the LSTM's layers and
directions, the decoder, the classes, the parameter count, and every
tensor with its dtype, shape and role. Exit status: 0 read; 2 a usage
error or a file that could not be read as a model.

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
	m, err := model.Load(mf.path, model.Options{Names: model.Names{Embedding: mf.embedding, LSTM: mf.lstm, Decoder: mf.decoder}})
	if err != nil {
		fmt.Fprintf(stderr, "whitebox inspect: %v\n", err)
		return 2
	}
	fmt.Fprint(stdout, m.Summary())
	return 0
}
