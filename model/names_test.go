package model

import (
	"strings"
	"testing"
)

// A malformed head in the file's metadata is echoed once, by its start
// and length: a value of a megabyte does not fill the terminal (issue
// 39, case 3).
func TestHeadMetadataEchoedOnce(t *testing.T) {
	for _, v := range []string{"avg" + strings.Repeat("m", 1<<20), "mean+gelu" + strings.Repeat("r", 1<<20)} {
		_, err := load(t, baseModel("emb", "lstm", "fc"), map[string]string{HeadMetadataKey: v}, Options{})
		if err == nil || len(err.Error()) > 300 || strings.Count(err.Error(), v[:9]) != 1 ||
			!strings.Contains(err.Error(), `safetensors metadata "whitebox.head": head spec "`) || !strings.Contains(err.Error(), "… (1048") {
			t.Errorf("%.20s…: %.400v", v, err)
		}
	}
	if _, _, err := ParseHeadSpec("avg"); err == nil || err.Error() != `head spec "avg": unknown head (heads: hn, hn-bf, last, mean, max, attention, each optionally followed by +relu or +tanh)` {
		t.Errorf("avg: %v", err)
	}
	if _, _, err := ParseHeadSpec("max+gelu"); err == nil || err.Error() != `head spec "max+gelu": unknown activation after the + (activations: relu, tanh)` {
		t.Errorf("max+gelu: %v", err)
	}
}

// Summary shows the file's names escaped: a Go program that prints it
// sends no escape sequence of the file's to its terminal (issue 39, case 1).
func TestSummaryEscapesNames(t *testing.T) {
	m, err := load(t, baseModel("\x1b]0;pwned\x07emb", "lstm\x1b[2J", "fc\u009b"), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := m.Summary()
	for _, r := range s {
		if r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r <= 0x9f {
			t.Fatalf("control character %U in\n%s", r, s)
		}
	}
	for _, want := range []string{`\x1b]0;pwned\aemb.weight`, `lstm:       lstm\x1b[2J: 2 layer(s)`, `decoder:    fc\u009b: Linear`} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
}
