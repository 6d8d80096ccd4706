package attrib_test

// The golden files under testdata/golden hold, as hexadecimal float64
// bits, what every method gives on every white-box network for a few
// inputs (short and long, every symbol), the engine's raw passes (logits,
// LRP with the paper's rule, the final state, a pass continued from a
// given state), the DFA check's verdicts and Table 4. They were recorded
// from the engine before cell/ became one engine (go test ./attrib -run
// TestGolden -update) and pin its bits: a change of one bit fails here.

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/reproduce"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden from the current code")

// golden collects "key: bits…" lines.
type golden struct{ lines []string }

func (g *golden) add(key string, v ...float64) {
	var b strings.Builder
	b.WriteString(key)
	b.WriteString(":")
	for _, x := range v {
		fmt.Fprintf(&b, " %x", math.Float64bits(x))
	}
	g.lines = append(g.lines, b.String())
}

func (g *golden) err(key string, err error) { g.lines = append(g.lines, key+": error "+err.Error()) }

func (g *golden) check(t *testing.T, name string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".txt")
	if *updateGolden {
		if err := os.WriteFile(path, []byte(strings.Join(g.lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		want = append(want, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i := range max(len(want), len(g.lines)) {
		var w, got string
		if i < len(want) {
			w = want[i]
		}
		if i < len(g.lines) {
			got = g.lines[i]
		}
		if w != got {
			if bad++; bad <= 5 {
				t.Errorf("%s line %d:\n got %.300s\nwant %.300s", path, i+1, got, w)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d lines differ", path, bad)
	}
}

// goldenInputs are the inputs of net: short, medium and long, with every
// symbol, from a fixed seed.
func goldenInputs(net *whitebox.Net) [][]int {
	s := len(net.Task.Alphabet)
	rng := rand.New(rand.NewPCG(1, uint64(s)))
	var out [][]int
	for _, n := range []int{1, 4, 17, 70} {
		x := make([]int, n)
		for i := range x {
			x[i] = (i + rng.IntN(s)) % s
		}
		out = append(out, x)
	}
	return out
}

func addResult(g *golden, key string, r *attrib.Result) {
	g.add(key+" logits", r.Logits...)
	g.add(key+" features", r.Features...)
	g.add(key+" scores", r.Scores...)
	g.add(key+" extra", r.Delta, r.Relevance.Output, r.Relevance.Bias, r.Relevance.Initial, float64(r.IGSteps), r.SpanScore, float64(r.Prediction), float64(r.Class.Int()))
}

func TestGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("golden files: the long run")
	}
	ctx := context.Background()
	for _, name := range whitebox.Names() {
		t.Run(name, func(t *testing.T) {
			net, err := whitebox.New(name, whitebox.Config{})
			if err != nil {
				t.Fatal(err)
			}
			g := new(golden)
			eps := 0.1
			type run struct {
				name string
				m    attrib.Method
				opt  attrib.Options
			}
			runs := []run{
				{"occlusion", attrib.Occlusion, attrib.Options{}},
				{"saliency", attrib.Saliency, attrib.Options{}},
				{"gxi", attrib.GradientXInput, attrib.Options{}},
				{"ig", attrib.IntegratedGradients, attrib.Options{}},
				{"ig-3", attrib.IntegratedGradients, attrib.Options{Steps: 3}},
				{"ig-20", attrib.IntegratedGradients, attrib.Options{Steps: 20}},
				{"ig-riemann-7", attrib.IntegratedGradients, attrib.Options{Steps: 7, Quadrature: attrib.RiemannTrapezoid}},
				{"lrp", attrib.LRP, attrib.Options{}},
				{"lrp-eps0.1", attrib.LRP, attrib.Options{Epsilon: &eps}},
				{"deeplift", attrib.DeepLIFT, attrib.Options{}},
				{"cd", attrib.ContextualDecomposition, attrib.Options{}},
			}
			e, err := attrib.NewExplainer(net.Model)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Release()
			for i, sym := range goldenInputs(net) {
				x := cell.OneHot(sym)
				for _, r := range runs {
					for _, class := range []attrib.Class{attrib.Predicted} {
						key := fmt.Sprintf("x%d %s class %d", i, r.name, class.Int())
						opt := r.opt
						opt.Class = class
						var res attrib.Result
						if err := e.Attribute(ctx, r.m, x, opt, &res); err != nil {
							g.err(key, err)
							continue
						}
						addResult(g, key, &res)
					}
					key := fmt.Sprintf("x%d %s all", i, r.name)
					var all attrib.MultiResult
					if err := e.AttributeAll(ctx, r.m, x, r.opt, &all); err != nil {
						g.err(key, err)
						continue
					}
					for c := range all.Results {
						addResult(g, fmt.Sprintf("%s %d", key, c), &all.Results[c])
					}
				}
				engineRecords(t, g, net, fmt.Sprintf("x%d engine", i), sym)
			}
			g.check(t, name)
		})
	}
}

// TestGoldenReproduce pins Table 4 (on 200 strings) and the DFA check's
// verdicts.
func TestGoldenReproduce(t *testing.T) {
	if testing.Short() {
		t.Skip("golden files: the long run")
	}
	g := new(golden)
	data, err := reproduce.GenerateTable4(whitebox.NewRand(7), 200)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := reproduce.Table4(context.Background(), reproduce.Config{Table4Data: data, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		g.add(fmt.Sprintf("table4 m=%d", r.M), r.Sigma, r.MeanC, r.Accuracy, r.Blank)
	}
	for _, mu := range [][2]float64{{50, 1}, {10, 1}, {3, 1}, {1, 1}, {50, 0.5}, {50, 0.05}, {0.5, 2}} {
		key := fmt.Sprintf("dfa sp m=%v u=%v", mu[0], mu[1])
		if _, err := whitebox.CompileDFA(whitebox.SPAutomaton(), mu[0], mu[1]); err != nil {
			g.err(key, err)
			continue
		}
		g.add(key)
	}
	g.check(t, "reproduce")
}
