package heatmap

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func render(t *testing.T, write func(*strings.Builder) error) string {
	t.Helper()
	var b strings.Builder
	if err := write(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func checkColors(t *testing.T, h Heatmap, want []RGB) {
	t.Helper()
	got := h.Colors()
	if len(got) != len(want) {
		t.Fatalf("Colors(%v): %d colours, want %d", h.Scores, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Colors(%v)[%d] = %v, want %v", h.Scores, i, got[i], want[i])
		}
	}
}

func TestOwnMaxScaling(t *testing.T) {
	// v = [1, -0.5] → positions [1, 0.25].
	checkColors(t, Heatmap{[]string{"a", "b"}, []float64{2, -1}},
		[]RGB{Coolwarm(1), Coolwarm(0.25)})
	// Same relative scores at a different scale give the same colours.
	checkColors(t, Heatmap{[]string{"a", "b"}, []float64{2e-3, -1e-3}},
		[]RGB{Coolwarm(1), Coolwarm(0.25)})
	// The largest magnitude may be negative.
	checkColors(t, Heatmap{[]string{"a", "b", "c"}, []float64{-4, 0, 1}},
		[]RGB{Coolwarm(0), Coolwarm(0.5), Coolwarm(0.625)})
}

func TestBlank(t *testing.T) {
	tiny := Heatmap{[]string{"a", "b", "c"}, []float64{9.9e-6, -9.9e-6, 0}}
	if !tiny.Blank() {
		t.Error("all |score| < 1e-5 should be blank")
	}
	mid := Coolwarm(0.5)
	checkColors(t, tiny, []RGB{mid, mid, mid})

	one := Heatmap{[]string{"a", "b", "c"}, []float64{BlankThreshold, 1e-6, 0}}
	if one.Blank() {
		t.Error("a score of exactly 1e-5 should not be blank")
	}
	checkColors(t, one, []RGB{Coolwarm(1), Coolwarm((0.1 + 1) / 2), mid})

	if !(Heatmap{}).Blank() {
		t.Error("empty heatmap should be blank")
	}
}

func TestNaNAndInf(t *testing.T) {
	nan := math.NaN()
	h := Heatmap{[]string{"a", "b", "c"}, []float64{nan, 1, -0.5}}
	if m := h.MaxAbs(); m != 1 {
		t.Errorf("MaxAbs ignores NaN: got %v, want 1", m)
	}
	checkColors(t, h, []RGB{NaNColor, Coolwarm(1), Coolwarm(0.25)})

	allNaN := Heatmap{[]string{"a", "b"}, []float64{nan, nan}}
	if !allNaN.Blank() {
		t.Error("all-NaN heatmap should be blank")
	}
	checkColors(t, allNaN, []RGB{NaNColor, NaNColor})
	// NaN stays distinct in a blank heatmap too.
	checkColors(t, Heatmap{[]string{"a", "b"}, []float64{nan, 0}}, []RGB{NaNColor, Coolwarm(0.5)})

	// Inf/Inf would be NaN; infinities saturate and finite scores vanish.
	inf := Heatmap{[]string{"a", "b", "c"}, []float64{math.Inf(1), 3, math.Inf(-1)}}
	checkColors(t, inf, []RGB{Coolwarm(1), Coolwarm(0.5), Coolwarm(0)})

	if got, want := render(t, func(b *strings.Builder) error { return WriteLaTeX(b, h) }),
		`\underline{\textbf{a}} `; !strings.HasPrefix(got, want) {
		t.Errorf("LaTeX NaN token: got %q, want prefix %q", got, want)
	}
	if got, want := render(t, func(b *strings.Builder) error { return WriteANSI(b, h) }),
		"\x1b[4ma\x1b[0m "; !strings.HasPrefix(got, want) {
		t.Errorf("ANSI NaN token: got %q, want prefix %q", got, want)
	}
	if got := render(t, func(b *strings.Builder) error { return WriteHTML(b, h) }); !strings.HasPrefix(got,
		`<span style="text-decoration:underline wavy" title="NaN">a</span> `) {
		t.Errorf("HTML NaN token: got %q", got)
	}
	if got, want := render(t, func(b *strings.Builder) error { return WritePlain(b, inf) }),
		"a:+Inf b:+3.0000 c:-Inf"; got != want {
		t.Errorf("plain Inf: got %q, want %q", got, want)
	}
}

func TestLaTeXExact(t *testing.T) {
	h := Heatmap{[]string{"a", "b", "["}, []float64{0, 1, -1}}
	want := `\textcolor[rgb]{0.8674276350862745,0.864376599772549,0.8626024620196079}{\textbf{a}} ` +
		`\textcolor[rgb]{0.705673158,0.01555616,0.150232812}{\textbf{b}} ` +
		`\textcolor[rgb]{0.2298057,0.298717966,0.753683153}{\textbf{[}}`
	if got := render(t, func(b *strings.Builder) error { return WriteLaTeX(b, h) }); got != want {
		t.Errorf("WriteLaTeX:\n got %s\nwant %s", got, want)
	}
}

func TestLaTeXEscaping(t *testing.T) {
	cases := map[string]string{
		"_":    `\_`,
		"%&#":  `\%\&\#`,
		"$":    `\$`,
		"{}":   `\{\}`,
		`\`:    `\textbackslash{}`,
		"~^":   `\textasciitilde{}\textasciicircum{}`,
		" ":    `\ `,
		"\n":   `\textbackslash{}n`,
		"[]()": "[]()",
	}
	for tok, want := range cases {
		if got := latexEscape(tok); got != want {
			t.Errorf("latexEscape(%q) = %q, want %q", tok, got, want)
		}
	}
}

func TestPlain(t *testing.T) {
	h := Heatmap{[]string{"a", "c", "b", "n", " ", "x:y"}, []float64{0.12344, 0, -1, math.NaN(), 2, 1e-9}}
	want := `a:+0.1234 c:0.0000 b:-1.0000 n:NaN " ":+2.0000 "x:y":+0.0000`
	if got := render(t, func(b *strings.Builder) error { return WritePlain(b, h) }); got != want {
		t.Errorf("WritePlain:\n got %s\nwant %s", got, want)
	}
}

func TestANSI(t *testing.T) {
	h := Heatmap{[]string{"a", "b", "\x1b"}, []float64{0, 1, -1}}
	got := render(t, func(b *strings.Builder) error { return WriteANSI(b, h) })
	// to_hex(coolwarm(0.5)) = #dddcdc, (1) = #b40426, (0) = #3b4cc0.
	want := "\x1b[38;2;0;0;0;48;2;221;220;220ma\x1b[0m " +
		"\x1b[38;2;0;0;0;48;2;180;4;38mb\x1b[0m " +
		"\x1b[38;2;0;0;0;48;2;59;76;192m\\x1b\x1b[0m"
	if got != want {
		t.Errorf("WriteANSI:\n got %q\nwant %q", got, want)
	}
}

func TestHTML(t *testing.T) {
	h := Heatmap{[]string{"<b>", "&", `"`}, []float64{1, 0, -0.5}}
	frag := render(t, func(b *strings.Builder) error { return WriteHTML(b, h) })
	want := `<span style="background-color:#b40426;color:#000" title="1">&lt;b&gt;</span> ` +
		`<span style="background-color:#dddcdc;color:#000" title="0">&amp;</span> ` +
		`<span style="background-color:#8db0fe;color:#000" title="-0.5">&#34;</span>`
	if frag != want {
		t.Errorf("WriteHTML:\n got %s\nwant %s", frag, want)
	}

	rows := []Row{
		{Label: "IG <x&y>", Heatmap: h},
		{Label: "blank", Heatmap: Heatmap{[]string{"a"}, []float64{0}}},
	}
	page := render(t, func(b *strings.Builder) error { return HTMLPage(b, "a < b", rows) })
	for _, s := range []string{"<!DOCTYPE html>", "<style>", "<title>a &lt; b</title>", "IG &lt;x&amp;y&gt;", frag, "</html>"} {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %q", s)
		}
	}
	// Self-contained: nothing fetched from elsewhere.
	for _, s := range []string{"http", "src=", "href=", "<link", "<script", "@import", "url("} {
		if strings.Contains(page, s) {
			t.Errorf("page contains external reference %q", s)
		}
	}
	if strings.Contains(page, "<b>") || strings.Contains(page, "<x&y>") {
		t.Error("unescaped user text in page")
	}
}

func TestLengthMismatch(t *testing.T) {
	bad := Heatmap{[]string{"a", "b"}, []float64{1}}
	var b strings.Builder
	for name, err := range map[string]error{
		"plain": WritePlain(&b, bad),
		"ansi":  WriteANSI(&b, bad),
		"latex": WriteLaTeX(&b, bad),
		"html":  WriteHTML(&b, bad),
		"page":  HTMLPage(&b, "t", []Row{{"r", bad}}),
	} {
		if err == nil {
			t.Errorf("%s: no error for 2 tokens / 1 score", name)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Colors did not panic on length mismatch")
		}
	}()
	bad.Colors()
}

func TestIsTerminal(t *testing.T) {
	devNull, err := os.Open(os.DevNull) // a character device
	if err != nil {
		t.Skip(err)
	}
	defer devNull.Close()
	regular, err := os.Create(filepath.Join(t.TempDir(), "out.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer regular.Close()

	t.Setenv("NO_COLOR", "") // empty means colour allowed
	if !IsTerminal(devNull) {
		t.Error("character device should count as terminal")
	}
	if IsTerminal(regular) {
		t.Error("regular file counted as terminal")
	}
	if IsTerminal(nil) {
		t.Error("nil file counted as terminal")
	}
	t.Setenv("NO_COLOR", "1")
	if IsTerminal(devNull) {
		t.Error("NO_COLOR=1 should disable colour")
	}
}

func TestLevels(t *testing.T) {
	h := Heatmap{Tokens: []string{"a", "b", "c", "d"}, Scores: []float64{2, -1, 0, math.NaN()}}
	got := h.Levels()
	want := []int{255, 64, 128, -1}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Levels = %v, want %v", got, want)
		}
	}
	for i, c := range h.Colors() {
		if got[i] >= 0 && c != LevelColor(got[i]) {
			t.Errorf("token %d: colour %v, level colour %v", i, c, LevelColor(got[i]))
		}
	}
	if l := LevelOf(RGB{0.705673158, 0.01555616, 0.150232812}, 1e-12); l != 255 {
		t.Errorf("LevelOf(top) = %d", l)
	}
	if l := LevelOf(RGB{0.1, 0.2, 0.3}, 1e-12); l != -1 {
		t.Errorf("LevelOf(not a colour) = %d", l)
	}
}
