package corpus

import (
	"bytes"
	"testing"
)

// Off a terminal, and as a nil *Progress, the bar draws nothing: only what
// Printf prints reaches standard error, and every method is safe.
func TestProgressOffTerminal(t *testing.T) {
	var b bytes.Buffer
	for _, p := range []*Progress{NewProgress(&b), nil} {
		if f := p.Callback(); f != nil {
			t.Fatal("a progress callback off a terminal")
		}
		p.Set("stage", 1, 2)
		p.ItemDone()
		p.Printf(&b, "line %d\n", 3)
		p.Finish()
		p.Finish()
	}
	if got := b.String(); got != "line 3\nline 3\n" {
		t.Fatalf("stderr %q", got)
	}
}
