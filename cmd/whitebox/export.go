package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/whitebox-lstm/whitebox/export"
	"github.com/whitebox-lstm/whitebox/internal/regfile"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

func exportCmd(args []string, stdout, stderr io.Writer) int {
	var nf netFlags
	var out, dfa string
	fs := flag.NewFlagSet("whitebox export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	nf.register(fs)
	fs.StringVar(&dfa, "dfa", "", "instead of -net: a JSON automaton {\"alphabet\", \"delta\", \"classes\", \"class_of\"} compiled to an LSTM (-m, -u apply)")
	fs.StringVar(&out, "o", "", "the output file: FILE.safetensors, or FILE.pt for torch.save's format")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: whitebox export -net NET [-m M] [-u U] [-k K] -o FILE.safetensors|FILE.pt
       whitebox export -dfa AUTOMATON.json [-m M] [-u U] -o FILE.safetensors|FILE.pt

Writes the white-box network as a PyTorch classifier's state_dict, F64:
embedding.weight (the V×V identity: token id k embeds as the one-hot row
of symbol k), lstm.weight_ih_l0, lstm.weight_hh_l0, lstm.bias_ih_l0 (the
network's bias), lstm.bias_hh_l0 (zeros), fc.weight and fc.bias; the logits
are fc(h_n[-1]). A .safetensors file's metadata names the alphabet (token
ids in order) and the classes; a .pt file is what torch.save(state_dict)
writes, readable by torch.load(path, weights_only=True). "whitebox attribute -model FILE" reads it back with the same
logits to the bit; README.md shows how to load it into nn.LSTM.

Exit status: 0 success; 1 the file could not be written; 2 a usage error.

Flags:
`)
		fs.PrintDefaults()
	}
	if status, ok := parseFlagsOnly(fs, args); !ok {
		return status
	}
	ext := strings.ToLower(filepath.Ext(out))
	if ext != ".safetensors" && ext != ".pt" && ext != ".pth" {
		fmt.Fprintf(stderr, "whitebox export: -o %q: want FILE.safetensors or FILE.pt\n", out)
		return 2
	}
	net, err := exportNet(&nf, dfa, fs)
	if err != nil {
		fmt.Fprintf(stderr, "whitebox export: %v\n", err)
		return 2
	}
	sd, err := export.StateDict(net.Model)
	if err == nil {
		err = writeFileAtomic(out, func(w io.Writer) error {
			if ext == ".safetensors" {
				return export.WriteSafetensors(w, sd, export.Metadata(net))
			}
			return export.WritePyTorch(w, sd)
		})
	}
	if err != nil {
		fmt.Fprintf(stderr, "whitebox export: -o %s: %v\n", out, err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s: %s, %d hidden units, alphabet %s, classes %s\n", out, net.Name, net.Model.Hidden(), strings.Join(net.Task.Alphabet, " "), strings.Join(net.Task.Classes, " "))
	return 0
}

// exportNet builds the -net network or compiles the -dfa automaton.
func exportNet(nf *netFlags, dfa string, fs *flag.FlagSet) (*whitebox.Net, error) {
	if dfa == "" {
		return nf.build(fs)
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	switch {
	case set["net"]:
		return nil, fmt.Errorf("give -net or -dfa, not both")
	case set["k"]:
		return nil, fmt.Errorf("-k applies to -net bracket only")
	case set["m"] && nf.m == 0, set["u"] && nf.u == 0:
		return nil, fmt.Errorf("-m and -u must not be zero")
	}
	if err := regfile.Flag("-dfa", dfa); err != nil {
		return nil, err
	}
	f, err := os.Open(dfa)
	if err != nil {
		return nil, fmt.Errorf("-dfa: %v", err)
	}
	defer f.Close()
	a, err := export.ReadDFA(f)
	if err != nil {
		return nil, fmt.Errorf("-dfa %s: %v", dfa, err)
	}
	return export.DFANet(a, nf.m, nf.u)
}

// writeFileAtomic writes path through a temporary file in its directory,
// renamed into place once complete, so that a failed write leaves no
// partial file.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".whitebox-export-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
