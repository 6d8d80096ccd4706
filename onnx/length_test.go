package onnx

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
)

// lengthFixture is an export of ../model/testdata/onnx/length (gen_length.py)
// with PyTorch's float64 logits at lengths where it is the plain model of its
// weights and where it is not.
type lengthFixture struct {
	File  string `json:"file"`
	Fixed int    `json:"fixed"`
	Cases []struct {
		IDs    []int     `json:"ids"`
		Logits []float64 `json:"logits"`
	} `json:"cases"`
}

func loadLengthFixture(t *testing.T, name string) (lengthFixture, *Model) {
	t.Helper()
	var fx lengthFixture
	b, err := os.ReadFile(filepath.Join(fixtureDir, "length", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	if b, err = os.ReadFile(filepath.Join(fixtureDir, "length", fx.File)); err != nil {
		t.Fatal(err)
	}
	m, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return fx, m
}

// A Slice that keeps a part of the time axis fixed in position is refused
// at load, naming it: a truncation, a window from the start, a window at the
// end.
func TestTimeWindowsRefused(t *testing.T) {
	for name, want := range map[string]string{
		"trunc8":       `Slice node "/Slice" keeps time steps [0:8:1] of 11 ([0:8:1] of 13) of "ids"`,
		"window_mean8": `Slice node "/Slice" keeps time steps [0:8:1] of 11`,
		"tail_max8":    `Slice node "/Slice" keeps time steps [3:11:1] of 11 ([5:13:1] of 13)`,
	} {
		_, m := loadLengthFixture(t, name)
		if _, err := Recognize(m); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "depend on the length") {
			t.Errorf("%s: %v; want an error containing %q", name, err, want)
		}
	}
	for _, name := range []string{"h0_from8", "fixed5_pick4"} { // nothing cut: the check of each input decides
		if _, m := loadLengthFixture(t, name); func() error { _, err := Recognize(m); return err }() != nil {
			t.Errorf("%s refused at load", name)
		}
	}
}

// CheckInput, the guard behind the recogniser, catches every graph that
// depends on the length, also those timeWindows refuses first: where the
// engine's logits equal PyTorch's it passes, where they do not it is a
// *LengthError naming the node that differs first.
func TestCheckInputAgainstPyTorch(t *testing.T) {
	for _, name := range []string{"trunc8", "window_mean8", "tail_max8", "h0_from8", "fixed5_pick4"} {
		fx, m := loadLengthFixture(t, name)
		r, err := recognizeProbed(m)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		net, err := cell.NewModel(r.Params)
		if err != nil {
			t.Fatal(err)
		}
		run, err := cell.NewRunner(net)
		if err != nil {
			t.Fatal(err)
		}
		differs := 0
		for _, c := range fx.Cases {
			e := r.Params.Input
			x := make([]float64, 0, len(c.IDs)*e)
			for _, id := range c.IDs {
				x = append(x, r.Embedding[id*e:(id+1)*e]...)
			}
			y, err := run.Forward(cell.Dense(x, len(c.IDs)))
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.CheckInput(net, c.IDs, nil, y, 1<<20)
			if fx.Fixed > 0 && len(c.IDs) != fx.Fixed {
				if err == nil || !strings.Contains(err.Error(), "fixed sequence length of 5") {
					t.Errorf("%s, %d tokens: %v; want the fixed length refused", name, len(c.IDs), err)
				}
				continue
			}
			var le *LengthError
			same := relDiff(y, c.Logits) < 1e-8
			switch {
			case same && err != nil:
				t.Errorf("%s, %d tokens: the engine equals PyTorch, but CheckInput says %v", name, len(c.IDs), err)
			case !same && !errors.As(err, &le):
				t.Errorf("%s, %d tokens: the engine differs from PyTorch by %.3g, but CheckInput says %v", name, len(c.IDs), relDiff(y, c.Logits), err)
			case !same && !strings.Contains(le.Node, "node"):
				t.Errorf("%s: the error names no node: %v", name, err)
			}
			if !same {
				differs++
			}
		}
		run.Close()
		if fx.Fixed == 0 && differs == 0 {
			t.Errorf("%s: no case where the graph depends on the length: the fixture tests nothing", name)
		}
	}
}
