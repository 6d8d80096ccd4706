package visible

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"embedding.weight":    "embedding.weight",
		"a b→ŷ…\uFFFD":        "a b→ŷ…\uFFFD",
		"\x1b]0;pwned\x07":    `\x1b]0;pwned\a`,
		"\x1b[2J":             `\x1b[2J`,
		"a\nb\tc\rd":          `a\nb\tc\rd`,
		"\x7f\u0085\u2028":    `\x7f\u0085\u2028`,
		"\xff\xfeok\xc3":      `\xff\xfeok\xc3`,
		`quote " backslash \`: `quote " backslash \`,
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"", "abc", "\x1b]0;TITLE\a", "\xff", "\u0085", "\uFFFD"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 in %q", out)
		}
		for _, r := range out {
			if r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f {
				t.Fatalf("control character %U in %q", r, out)
			}
		}
		if String(out) != out {
			t.Fatalf("String is not idempotent on %q", out)
		}
	})
}

// Quote echoes a long value once, by its start and its length.
func TestQuote(t *testing.T) {
	if got := Quote("mean\x1b"); got != `"mean\x1b"` {
		t.Errorf("short: %s", got)
	}
	long := strings.Repeat("é", 1<<19) // 1 MiB
	got := Quote(long)
	if len(got) > 80 || !strings.HasSuffix(got, "… (1048576 bytes)") || !utf8.ValidString(got) {
		t.Errorf("long: %s", got)
	}
}
