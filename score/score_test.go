package score

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
)

// The README's line for accb, from a Config made by the flags.
func TestLine(t *testing.T) {
	cfg := DefaultConfig()
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	cfg.RegisterFlags(fs, "wb-")
	if err := fs.Parse([]string{"-wb-net", "sp-counter", "-wb-method", "ig"}); err != nil {
		t.Fatal(err)
	}
	cfg.MarkSet(fs, "wb-")
	if !cfg.Set["net"] || cfg.Set["m"] {
		t.Fatalf("Set %v", cfg.Set)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := s.Line(context.Background(), "accb", &b); err != nil {
		t.Fatal(err)
	}
	const want = `{"net":"sp-counter","method":"ig","input":"accb","tokens":["a","c","c","b"],"class":"True","prediction":"True","truth":"True","correct":true,"logits":{"False":0.02700751434750449,"True":0.5325204920919716},"scores":[0.4876287535217073,1.1656742582290198e-22,1.1656742582290198e-22,0.04489173994633828],"delta":1.37607403249973e-09}` + "\n"
	if b.String() != want {
		t.Fatalf("got  %s\nwant %s", b.String(), want)
	}
	// A bad input is an error and leaves out as it was.
	if err := s.Line(context.Background(), "abx", &b); err == nil || b.String() != want {
		t.Fatalf("bad input: %v, %q", err, b.String())
	}
}

// Clones score at once, each the same bytes as one Scorer alone.
func TestClone(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Model, cfg.Method, cfg.Steps = "../model/testdata/bi2.safetensors", "ig", "20"
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	inputs := []string{"3 1 4", "1 5 9 2 6 5", "35 8 9 7 9 3 2 3 8", "4"}
	var want bytes.Buffer
	for _, in := range inputs {
		if err := s.Line(context.Background(), in, &want); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	got := make([]bytes.Buffer, 4)
	for g := range got {
		wg.Go(func() {
			c := s.Clone()
			for _, in := range inputs {
				if err := c.Line(context.Background(), in, &got[g]); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for g := range got {
		if got[g].String() != want.String() {
			t.Fatalf("clone %d differs", g)
		}
	}
}

// New refuses what attribute refuses, with its messages.
func TestNewErrors(t *testing.T) {
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) {}, "-method and one of -net and -model are required"},
		{func(c *Config) { c.Net, c.Method = "counting", "nope" }, "nope"},
		{func(c *Config) { c.Net, c.Method, c.Steps = "counting", "ig", "0" }, "-steps 0 must be auto"},
		{func(c *Config) { c.Net, c.Method, c.Budget = "counting", "ig", "1k" }, "too little"},
		{func(c *Config) {
			c.Net, c.Method, c.Vocab, c.Set = "counting", "ig", "v.txt", map[string]bool{"vocab": true}
		}, "-vocab applies to -model only"},
		{func(c *Config) { c.Net, c.Method, c.Set = "counting", "ig", map[string]bool{"vocab": true} }, "-vocab: empty; give a file"},
		{func(c *Config) { c.Model, c.Method = "/nonexistent.pt", "ig" }, "nonexistent"},
	} {
		cfg := DefaultConfig()
		c.edit(&cfg)
		if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", cfg, err, c.want)
		}
	}
}

func ExampleScorer_Line() {
	cfg := DefaultConfig()
	cfg.Net, cfg.Method = "sp-fsa", "lrp"
	s, err := New(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	var b bytes.Buffer
	if err := s.Line(context.Background(), "aacb", &b); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(b.String()[:59], "…\n")
	// Output: {"net":"sp-fsa","method":"lrp","input":"aacb","tokens":["a"…
}

// Issue 24: the library's messages name Go options; the command's name
// its flags, and errors.Is still sees the library's error.
func TestFlagNames(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Net, cfg.Method, cfg.K, cfg.Set = "bracket", "saliency", 2, map[string]bool{"k": true}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Score(context.Background(), "(((")
	if err == nil || !strings.Contains(err.Error(), "(raise -k)") || strings.Contains(err.Error(), "Config.K") {
		t.Errorf("stack overflow: %v", err)
	}
	lib := errors.New("several LSTMs: a, b; name one with Names.LSTM")
	if got := withFlags(lib); got.Error() != "several LSTMs: a, b; name one with -lstm" || !errors.Is(got, lib) {
		t.Errorf("withFlags: %v", got)
	}
	if got := flagNames.Replace("name one with Names.Embedding (or Names.Embedding = NoEmbedding)"); got != "name one with -embedding (or -embedding none)" {
		t.Errorf("%q", got)
	}
}

// Truth: a white-box network's answer and whether the prediction is it;
// nothing after a failed input or for a model.
func TestTruth(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Net, cfg.Method = "bracket", "saliency"
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	deep := "[" + strings.Repeat("(", 38) + strings.Repeat(")", 38)
	if _, _, err := s.Score(context.Background(), deep); err != nil {
		t.Fatal(err)
	}
	if truth, correct, known := s.Truth(); truth != "]" || correct || !known {
		t.Errorf("depth 39: Truth() = %q, %v, %v", truth, correct, known)
	}
	if _, _, err := s.Score(context.Background(), "(x"); err == nil {
		t.Fatal("bad input: no error")
	}
	if _, _, known := s.Truth(); known {
		t.Error("Truth after a failed input")
	}
	cfg = DefaultConfig()
	cfg.Model, cfg.Method = "../model/testdata/uni1.pt", "saliency"
	if s, err = New(cfg); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Score(context.Background(), "1 2 3"); err != nil {
		t.Fatal(err)
	}
	if _, _, known := s.Truth(); known {
		t.Error("Truth for a model")
	}
}

// A refusal for want of memory names the input's share of -budget and
// where it comes from, not only the number the method was given.
func TestBudgetShareInError(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Model, cfg.Method, cfg.Budget, cfg.Workers = "../model/testdata/bench_h256.safetensors", "lrp", "4MiB", 1
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tokens := make([]string, 200)
	for i := range tokens {
		tokens[i] = fmt.Sprint(i % 50)
	}
	_, _, err = s.Score(context.Background(), strings.Join(tokens, " "))
	var be *cell.BudgetError
	if !errors.As(err, &be) || be.Budget != 2<<20 || be.Need <= be.Budget {
		t.Fatalf("error %v: want a cell.BudgetError of 2 MiB", err)
	}
	if want := "-budget 4MiB / 1 worker(s) / 2 = 2097152 bytes"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}

// A Scorer that borrows idle Scorers' cores (corpus.Lent) writes the same
// bytes, and runs on their share of the cores too.
func TestBorrow(t *testing.T) {
	for _, method := range []string{"ig", "occlusion"} {
		cfg := DefaultConfig()
		cfg.Model, cfg.Method, cfg.Steps, cfg.Head, cfg.Workers = "../model/testdata/bench_h256.safetensors", method, "20", "hn", 2
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		in := "3 1 4 1 5 9 2 6 5 3 5 8 9 7 9 3 2 3 8 4 6 2 6 4 3 3 8 3 2 7 9 5 0 2 8 8 4 1 9 7"
		var want, got bytes.Buffer
		if err := s.Line(context.Background(), in, &want); err != nil {
			t.Fatal(err)
		}
		own := s.opt.Workers
		s.Borrow(1)
		if s.opt.Workers != 2*own {
			t.Fatalf("%s: Borrow(1) runs on %d workers, want %d", method, s.opt.Workers, 2*own)
		}
		if err := s.Line(context.Background(), in, &got); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("%s: borrowing cores changed the result", method)
		}
		if s.Borrow(0); s.opt.Workers != own {
			t.Fatalf("%s: Borrow(0) runs on %d workers, want its own %d", method, s.opt.Workers, own)
		}
	}
}
