package model

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/onnx"
)

// The exports of testdata/onnx/length (gen_length.py) agree with the plain
// model of their weights at the lengths Load probes and differ from some
// length on. Those that cut the time axis are refused by Load (package
// onnx tests CheckInput on them too); for the others PyTorch's float64
// logits say where: where the engine's logits equal them, CheckGraph must
// pass; where they do not, the model read is not the user's, and CheckGraph
// must refuse the input.
func TestCheckGraphLengthDependent(t *testing.T) {
	paths, err := filepath.Glob("testdata/onnx/length/*.json")
	if err != nil || len(paths) < 5 {
		t.Fatalf("fixtures: %v, %v", paths, err)
	}
	for _, p := range paths {
		var fx struct {
			File  string `json:"file"`
			Fixed int    `json:"fixed"`
			Cases []struct {
				IDs    []int     `json:"ids"`
				Logits []float64 `json:"logits"`
			} `json:"cases"`
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &fx); err != nil {
			t.Fatal(err)
		}
		t.Run(fx.File, func(t *testing.T) {
			m, err := Load(filepath.Join("testdata/onnx/length", fx.File), Options{})
			if strings.Contains(fx.File, "8") && !strings.HasPrefix(fx.File, "h0") {
				if err == nil || !strings.Contains(err.Error(), "keeps time steps") {
					t.Fatalf("a graph cutting the time axis: %v; want it refused", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err) // accepted at load: no probe can see it
			}
			if m.FixedLength != fx.Fixed {
				t.Fatalf("FixedLength %d, want %d", m.FixedLength, fx.Fixed)
			}
			run, err := cell.NewRunner(m.Net)
			if err != nil {
				t.Fatal(err)
			}
			defer run.Close()
			differs := 0
			for _, c := range fx.Cases {
				x, err := m.Embed(c.IDs)
				if fx.Fixed > 0 && len(c.IDs) != fx.Fixed {
					if err == nil {
						t.Errorf("%d tokens: embedded for a graph of fixed length %d", len(c.IDs), fx.Fixed)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				y, err := run.Forward(x)
				if err != nil {
					t.Fatal(err)
				}
				same := maxRel(y, c.Logits) < 1e-8
				err = m.CheckGraph(c.IDs, x, y, 1<<24)
				var le *onnx.LengthError
				switch {
				case same && err != nil:
					t.Errorf("%d tokens: the engine equals PyTorch, but CheckGraph says %v", len(c.IDs), err)
				case !same && !errors.As(err, &le):
					t.Errorf("%d tokens: the engine differs from PyTorch by %.3g, but CheckGraph says %v", len(c.IDs), maxRel(y, c.Logits), err)
				}
				if !same {
					differs++
				}
			}
			if fx.Fixed == 0 && differs == 0 {
				t.Errorf("no case where the graph depends on the length: the fixture tests nothing")
			}
		})
	}
}

// CheckGraph's memory is bounded: an evaluation that needs more values
// than it may is refused with an *onnx.EvalBudgetError, and GraphBytes
// estimates the need.
func TestCheckGraphBudget(t *testing.T) {
	m, err := Load("testdata/onnx/mean_bi2_o17.onnx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	per, fixed := m.GraphBytes()
	if per <= 0 || fixed < 0 {
		t.Fatalf("GraphBytes: %d per token, %d fixed", per, fixed)
	}
	ids := make([]int, 300)
	for i := range ids {
		ids[i] = (7 * i) % m.Vocab
	}
	x, y := embedForward(t, m, ids)
	need := per*int64(len(ids)) + fixed
	if err := m.CheckGraph(ids, x, y, need+need/4); err != nil {
		t.Fatalf("with the estimate (%d bytes) and a quarter more: %v", need, err)
	}
	var be *onnx.EvalBudgetError
	if err := m.CheckGraph(ids, x, y, need/2); !errors.As(err, &be) {
		t.Fatalf("with half the estimate: %v, want an *onnx.EvalBudgetError", err)
	}
	// Other formats have no graph: nothing to check, nothing to count.
	st, err := Load("testdata/bi2.safetensors", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p, f := st.GraphBytes(); p != 0 || f != 0 || st.CheckGraph([]int{1}, cell.Input{}, nil, 0) != nil {
		t.Fatal("a safetensors model has a graph to check")
	}
}

// embedForward embeds ids and runs the engine on them: the input and the
// engine's logits.
func embedForward(t *testing.T, m *Model, ids []int) (cell.Input, []float64) {
	t.Helper()
	x, err := m.Embed(ids)
	if err != nil {
		t.Fatal(err)
	}
	run, err := cell.NewRunner(m.Net)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	y, err := run.Forward(x)
	if err != nil {
		t.Fatal(err)
	}
	return x, y
}

func maxRel(a, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	scale, d := 1.0, 0.0
	for i := range a {
		scale = max(scale, math.Abs(b[i]))
		d = max(d, math.Abs(a[i]-b[i]))
	}
	return d / scale
}

// A graph of fixed length counts all its values per token (its one length).
func TestGraphBytesFixedLength(t *testing.T) {
	m, err := Load("testdata/onnx/hn_bi2_fixed_o17.onnx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	per, fixed := m.GraphBytes()
	ids := []int{4, 11, 0, 7, 7, 13, 2}
	x, y := embedForward(t, m, ids)
	need := per*int64(len(ids)) + fixed
	if per <= 0 || m.CheckGraph(ids, x, y, need) != nil {
		t.Fatalf("GraphBytes %d per token, %d fixed: not enough for the check (%v)", per, fixed, m.CheckGraph(ids, x, y, need))
	}
}
