package heatmap

import (
	"html"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzWriters feeds every writer one hostile token: the plain, LaTeX and
// HTML outputs hold no control byte, the ANSI output none but its own
// colour sequences, and the HTML output unescapes back to Visible(token).
func FuzzWriters(f *testing.F) {
	for _, s := range []string{"\r\\immediate\\write18{x}", "\x1b]0;TITLE\a", "\xff\xfe", "%{}<&>\\", "\x00\x7f\u0085", "\uFFFD"} {
		f.Add(s, 0.5)
	}
	f.Fuzz(func(t *testing.T, tok string, score float64) {
		h := Heatmap{Tokens: []string{tok, "x"}, Scores: []float64{score, -1}}
		for name, write := range map[string]func(*strings.Builder) error{
			"plain": func(b *strings.Builder) error { return WritePlain(b, h) },
			"latex": func(b *strings.Builder) error { return WriteLaTeX(b, h) },
			"html":  func(b *strings.Builder) error { return WriteHTML(b, h) },
			"ansi":  func(b *strings.Builder) error { return WriteANSI(b, h) },
		} {
			var b strings.Builder
			if err := write(&b); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			out := b.String()
			if name == "ansi" {
				out = stripSGR(out)
			}
			for i := 0; i < len(out); i++ {
				if out[i] < 0x20 || out[i] == 0x7f {
					t.Fatalf("%s: control byte %#x in %q", name, out[i], out)
				}
			}
			if !utf8.ValidString(out) {
				t.Fatalf("%s: invalid UTF-8 in %q", name, out)
			}
			if name == "html" {
				start := strings.Index(out, ">") + 1
				end := strings.Index(out, "</span>")
				if got := html.UnescapeString(out[start:end]); got != Visible(tok) {
					t.Fatalf("html: token %q reads back as %q", Visible(tok), got)
				}
			}
		}
	})
}

// stripSGR removes the writer's own "ESC [ … m" sequences.
func stripSGR(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "\x1b[")
		if i < 0 {
			return b.String() + s
		}
		b.WriteString(s[:i])
		j := strings.IndexByte(s[i:], 'm')
		if j < 0 {
			return b.String() + s[i:]
		}
		s = s[i+j+1:]
	}
}
