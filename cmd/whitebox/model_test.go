package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/model"
)

const testModel = "../../model/testdata/bi2.safetensors" // Embedding(40, 12) → 2-layer BiLSTM(16) → Linear(32, 4)

// The CLI's scores are the library's with its zero Options (the same
// defaults, Captum's float32 IG weights for a model included), for every
// method, and -features writes the T×E scores.
func TestAttributeModel(t *testing.T) {
	m, err := model.Load(testModel, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ids := []int{3, 1, 4, 1, 5, 9, 2, 6}
	x, err := m.Embed(ids)
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range attrib.AllMethods() {
		// -captum-weights is true for -model; the library's default is false.
		want, err := attrib.Attribute(t.Context(), m.Net, method, x, attrib.Options{Float32Weights: true})
		if err != nil {
			// A method may refuse a model it does not support (contextual
			// decomposition: stacked or bidirectional LSTMs); the command
			// refuses it before reading any input: a usage error, status 2.
			status, _, errOut := runCLI(t, "", "attribute", "-model", testModel, "-method", method.String(), "3 1 4")
			if status != 2 || !strings.Contains(errOut, "contextual decomposition") {
				t.Fatalf("%v: the library refuses (%v), the command: status %d, %q", method, err, status, errOut)
			}
			continue
		}
		status, out, errOut := runCLI(t, "", "attribute", "-model", testModel, "-method", method.String(), "-features", "3 1 4 1 5 9 2 6")
		if status != 0 {
			t.Fatalf("%v: status %d: %s", method, status, errOut)
		}
		rec := decode(t, out)[0]
		if rec.Model != testModel || rec.Head != "hn" || rec.Net != "" || rec.Method != method.String() || len(rec.Tokens) != len(ids) || rec.Tokens[2] != "4" {
			t.Fatalf("%v: record %+v", method, rec)
		}
		for i, s := range want.Scores {
			if rec.Scores[i] != s {
				t.Fatalf("%v: score %d = %v, library %v", method, i, rec.Scores[i], s)
			}
		}
		if method == attrib.Occlusion {
			if rec.Features != nil {
				t.Fatalf("occlusion wrote features")
			}
			continue
		}
		if len(rec.Features) != len(ids) || len(rec.Features[0]) != 12 || rec.Features[7][11] != want.Features[7*12+11] {
			t.Fatalf("%v: features %v", method, rec.Features)
		}
		if (rec.Delta != nil) != (method == attrib.IntegratedGradients || method == attrib.DeepLIFT) {
			t.Fatalf("%v: delta %v", method, rec.Delta)
		}
	}
	// The test can tell: float64 weights give other bits.
	f64, err := attrib.Attribute(t.Context(), m.Net, attrib.IntegratedGradients, x, attrib.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, out, _ := runCLI(t, "", "attribute", "-model", testModel, "-method", "ig", "-captum-weights=false", "3 1 4 1 5 9 2 6")
	if rec := decode(t, out)[0]; rec.Scores[0] != f64.Scores[0] || *rec.Delta == 0 {
		t.Errorf("-captum-weights=false: %v, library %v", rec.Scores[0], f64.Scores[0])
	}
	f32, _ := attrib.Attribute(t.Context(), m.Net, attrib.IntegratedGradients, x, attrib.Options{Float32Weights: true})
	if f32.Scores[0] == f64.Scores[0] {
		t.Errorf("float32 and float64 IG weights gave the same score %v", f32.Scores[0])
	}
}

// Words through -vocab, class names through -classes, -unk, and bad lines
// reported with their line numbers while the others are scored; the same
// bytes whatever the number of cores and the budget.
func TestAttributeModelVocab(t *testing.T) {
	dir := t.TempDir()
	vocab := filepath.Join(dir, "vocab.txt")
	words := make([]string, 40)
	for i := range words {
		words[i] = "w" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	words[0] = "<unk>"
	os.WriteFile(vocab, []byte(strings.Join(words, "\n")+"\n"), 0o644)
	classes := filepath.Join(dir, "classes.txt")
	os.WriteFile(classes, []byte("neg\nneu\npos\nmixed\n"), 0o644)
	in := words[3] + " " + words[7] + "\n" + "nope " + words[2] + "\n\n" + words[5] + "\n"
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var first string
	for _, cfg := range []struct {
		procs  int
		budget string
	}{{2, "256MiB"}, {1, "1MiB"}} {
		runtime.GOMAXPROCS(cfg.procs)
		status, out, errOut := runCLI(t, in, "attribute", "-model", testModel, "-method", "ig", "-vocab", vocab, "-classes", classes, "-class", "pos", "-budget", cfg.budget)
		if status != 1 || !strings.Contains(errOut, `line 2: "nope `) || !strings.Contains(errOut, `unknown token "nope" at position 0`) {
			t.Fatalf("status %d, stderr %q", status, errOut)
		}
		recs := decode(t, out)
		if len(recs) != 2 || recs[0].Class != "pos" || recs[1].Tokens[0] != words[5] || len(recs[0].Logits) != 4 {
			t.Fatalf("records %+v", recs)
		}
		if first == "" {
			first = out
		} else if out != first {
			t.Fatalf("%+v: different output", cfg)
		}
	}
	status, out, errOut := runCLI(t, "nope "+words[2]+"\n", "attribute", "-model", testModel, "-method", "saliency", "-vocab", vocab, "-unk", "<unk>")
	if status != 0 || decode(t, out)[0].Tokens[0] != "nope" {
		t.Fatalf("-unk: status %d, %s %s", status, out, errOut)
	}
	status, out, _ = runCLI(t, "", "attribute", "-model", testModel, "-method", "lrp", "-class", "2", "1 2")
	if status != 0 || decode(t, out)[0].Class != "2" {
		t.Fatalf("-class 2: %d %s", status, out)
	}
}

// Usage errors exit 2 with a message that names the flag.
func TestAttributeModelUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-model", testModel, "-net", "sp-fsa", "-method", "ig"}, "one of -net and -model"},
		{[]string{"-model", testModel, "-method", "ig", "-k", "3"}, "-k applies to -net only"},
		{[]string{"-net", "sp-fsa", "-method", "ig", "-vocab", "x"}, "-vocab applies to -model only"},
		{[]string{"-model", testModel, "-method", "lrp", "-lrp-bias", "2"}, "-lrp-bias 2"},
		{[]string{"-model", testModel, "-method", "ig", "-class", "7"}, `unknown class "7"`},
		{[]string{"-model", "/nonexistent.pt", "-method", "ig"}, "nonexistent.pt"},
		{[]string{"-model", testModel, "-method", "ig", "-unk", "x"}, "-unk needs -vocab"},
		{[]string{"-model", testModel, "-method", "ig", "-lstm", "encoder"}, `LSTMs found: "rnn"`},
	} {
		status, _, errOut := runCLI(t, "", append([]string{"attribute"}, c.args...)...)
		if status != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: status %d, stderr %q; want 2 and %q", c.args, status, errOut, c.want)
		}
	}
}

func TestInspect(t *testing.T) {
	status, out, errOut := runCLI(t, "", "inspect", "-model", testModel)
	if status != 0 {
		t.Fatalf("status %d: %s", status, errOut)
	}
	for _, want := range []string{"rnn: 2 layer(s), bidirectional, H = 16", "embed: 40 tokens × 12", "Linear(32 → 4) on cat(h_n[-2], h_n[-1])", "rnn.weight_ih_l1_reverse"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, out)
		}
	}
	if status, _, errOut := runCLI(t, "", "inspect", "-model", "/nonexistent"); status != 2 || !strings.Contains(errOut, "nonexistent") {
		t.Errorf("missing file: %d %q", status, errOut)
	}
}

// A file that is no model says so, with exit status 2, in every command
// that takes -model.
func TestNotAModelFile(t *testing.T) {
	dir := t.TempDir()
	vocab := filepath.Join(dir, "vocab.txt")
	if err := os.WriteFile(vocab, []byte("the\nof\nand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"inspect", "-model", vocab},
		{"attribute", "-model", vocab, "-method", "ig", "1 2"},
	} {
		status, _, errOut := runCLI(t, "", args...)
		if status != 2 || !strings.Contains(errOut, "not a model file: neither safetensors, a PyTorch zip nor a pickle (it looks like text)") {
			t.Errorf("%v: status %d, stderr %q", args, status, errOut)
		}
	}
}
