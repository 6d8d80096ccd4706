package evaluate

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// TestPyTorchFixtures is the end-to-end test: sp-fsa and bracket exported
// (whitebox export), loaded into nn.LSTM by testdata/pytorch_ig.py,
// Integrated Gradients run in PyTorch on generate's inputs; its scores,
// evaluated here, give the summaries of our own IG through the same
// evaluator.
func TestPyTorchFixtures(t *testing.T) {
	for _, name := range []string{"sp-fsa", "bracket"} {
		e := evaluator(t, name)
		f, err := os.Open(filepath.Join("testdata", name+".pytorch-ig.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		theirs, ours := NewAccumulator(e.Criteria()), NewAccumulator(e.Criteria())
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		lines := 0
		for sc.Scan() {
			lines++
			l, err := ParseLine(e.Net().Task, sc.Bytes())
			if err != nil {
				t.Fatalf("%s:%d: %v", name, lines, err)
			}
			res, err := attrib.Attribute(t.Context(), e.Net().Model, attrib.IntegratedGradients, cell.OneHot(l.Symbols), attrib.Options{Class: attrib.ClassIndex(l.Class), Float32Weights: true}) // Captum's float32 step sizes
			if err != nil {
				t.Fatal(err)
			}
			big := 0.0
			for _, s := range res.Scores {
				big = max(big, math.Abs(s))
			}
			for i := range l.Scores {
				if d := math.Abs(l.Scores[i] - res.Scores[i]); d > 1e-9*max(big, 1) {
					t.Errorf("%s:%d: score %d is %v in PyTorch, %v here", name, lines, i+1, l.Scores[i], res.Scores[i])
				}
			}
			for _, x := range []struct {
				acc    *Accumulator
				scores []float64
			}{{theirs, l.Scores}, {ours, res.Scores}} {
				v, err := e.Score(l.Symbols, l.Class, x.scores)
				if err != nil {
					t.Fatal(err)
				}
				if err := x.acc.Add(v); err != nil {
					t.Fatal(err)
				}
			}
		}
		f.Close()
		if lines != 200 {
			t.Fatalf("%s: %d lines, want 200", name, lines)
		}
		got, want := theirs.Summaries(), ours.Summaries()
		for i := range got {
			g, w := got[i], want[i]
			if g.Applicable != w.Applicable || g.Defined != w.Defined || g.Met != w.Met || math.Abs(g.Mean-w.Mean) > 1e-9 || math.Abs(g.Std-w.Std) > 1e-9 {
				t.Errorf("%s %s: PyTorch %+v, ours %+v", name, g.Criterion, g, w)
			}
		}
	}
}

// TestFixtureInputs: the fixtures' inputs are generate's.
func TestFixtureInputs(t *testing.T) {
	for _, name := range []string{"sp-fsa", "bracket"} {
		net, _ := whitebox.New(name, whitebox.Config{})
		b, err := os.ReadFile(filepath.Join("testdata", name+".inputs.txt"))
		if err != nil {
			t.Fatal(err)
		}
		rng := whitebox.NewRand(3)
		want := ""
		for range 200 {
			s, _ := net.Task.Generate(rng, 2, 12)
			want += s + "\n"
		}
		if string(b) != want {
			t.Errorf("%s: testdata inputs are not whitebox generate -n 200 -len 2..12 -seed 3", name)
		}
	}
}
