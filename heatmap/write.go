package heatmap

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode"

	"github.com/whitebox-lstm/whitebox/internal/visible"
)

// None of the writers appends a trailing newline, so that callers can place
// a heatmap inside a table cell or follow it with more text.

// to8bit converts a component to 0..255 the way matplotlib.colors.to_hex
// does: round(v * 255), Python's round being half-to-even.
func to8bit(v float64) int {
	return int(math.RoundToEven(min(max(v, 0), 1) * 255))
}

// Visible replaces control and other non-printable characters (and invalid
// UTF-8) by Go escape sequences (e.g. a newline becomes `\n`, ESC `\x1b`),
// so that text from an input can neither break the line structure nor inject
// terminal escape sequences. Its result holds no byte below 0x20 and no 0x7f.
// It is the escaping of every name from a file the commands print
// (internal/visible).
func Visible(s string) string { return visible.String(s) }

// formatScore formats a score for plain text: sign always shown except for
// an exact zero, which is the common case of an unattributed token.
func formatScore(s float64) string {
	switch {
	case math.IsNaN(s):
		return "NaN"
	case s == 0:
		return "0.0000"
	case s > 0 && !math.IsInf(s, 1): // FormatFloat already writes "+Inf"
		return "+" + strconv.FormatFloat(s, 'f', 4, 64)
	}
	return strconv.FormatFloat(s, 'f', 4, 64)
}

// WritePlain writes "tok:score" pairs separated by spaces, scores with four
// decimals (e.g. "a:+0.1234 c:0.0000 b:NaN"), for non-terminals and NO_COLOR.
// Tokens that are empty or contain whitespace or ':' are Go-quoted so the
// pairs stay unambiguous.
func WritePlain(w io.Writer, h Heatmap) error {
	if err := h.validate(); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	for i, tok := range h.Tokens {
		if i > 0 {
			bw.WriteByte(' ')
		}
		if tok == "" || strings.ContainsFunc(tok, func(r rune) bool { return r == ':' || unicode.IsSpace(r) }) {
			tok = strconv.Quote(tok)
		} else {
			tok = visible.String(tok)
		}
		bw.WriteString(tok + ":" + formatScore(h.Scores[i]))
	}
	return bw.Flush()
}

// WriteANSI writes each token in black on a 24-bit background colour
// (ESC[38;2;0;0;0;48;2;r;g;bm tok ESC[0m), tokens separated by a space.
// True black rather than palette colour 30 because terminal themes remap the
// palette but the coolwarm backgrounds are always light. NaN tokens get no
// colour and are underlined (ESC[4m).
func WriteANSI(w io.Writer, h Heatmap) error {
	if err := h.validate(); err != nil {
		return err
	}
	colors := h.Colors()
	bw := bufio.NewWriter(w)
	for i, tok := range h.Tokens {
		if i > 0 {
			bw.WriteByte(' ')
		}
		tok = visible.String(tok)
		if math.IsNaN(h.Scores[i]) {
			fmt.Fprintf(bw, "\x1b[4m%s\x1b[0m", tok)
			continue
		}
		c := colors[i]
		fmt.Fprintf(bw, "\x1b[38;2;0;0;0;48;2;%d;%d;%dm%s\x1b[0m", to8bit(c.R), to8bit(c.G), to8bit(c.B), tok)
	}
	return bw.Flush()
}

// latexEscapes maps characters with special meaning in LaTeX text (or that
// the default OT1 font encoding renders wrongly) to commands that print them.
var latexEscapes = map[rune]string{
	'\\': `\textbackslash{}`,
	'{':  `\{`,
	'}':  `\}`,
	'_':  `\_`,
	'%':  `\%`,
	'&':  `\&`,
	'#':  `\#`,
	'$':  `\$`,
	'~':  `\textasciitilde{}`,
	'^':  `\textasciicircum{}`,
	'<':  `\textless{}`,
	'>':  `\textgreater{}`,
	'|':  `\textbar{}`,
	' ':  `\ `, // a bare space inside \textbf{} would be invisible
}

// LaTeXText escapes s as LaTeX text (Visible first, then every character
// with a meaning in LaTeX), so that it prints as itself wherever it is
// written, a comment included: the result holds no control byte and no
// bare \\, {, }, %, ^ or ~.
func LaTeXText(s string) string { return latexEscape(s) }

func latexEscape(tok string) string {
	var b strings.Builder
	for _, r := range visible.String(tok) {
		if e, ok := latexEscapes[r]; ok {
			b.WriteString(e)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// latexNum formats a colour component like the paper: shortest
// round-tripping decimal (Python's float repr), never an exponent, which
// xcolor would reject.
func latexNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// WriteLaTeX writes the paper's form, tokens separated by single spaces:
//
//	\textcolor[rgb]{r,g,b}{\textbf{x}}
//
// (needs the xcolor package). NaN tokens are written uncoloured and
// underlined: \underline{\textbf{x}}.
func WriteLaTeX(w io.Writer, h Heatmap) error {
	if err := h.validate(); err != nil {
		return err
	}
	colors := h.Colors()
	bw := bufio.NewWriter(w)
	for i, tok := range h.Tokens {
		if i > 0 {
			bw.WriteByte(' ')
		}
		tok = latexEscape(tok)
		if math.IsNaN(h.Scores[i]) {
			fmt.Fprintf(bw, `\underline{\textbf{%s}}`, tok)
			continue
		}
		c := colors[i]
		fmt.Fprintf(bw, `\textcolor[rgb]{%s,%s,%s}{\textbf{%s}}`, latexNum(c.R), latexNum(c.G), latexNum(c.B), tok)
	}
	return bw.Flush()
}

// hexColor is matplotlib.colors.to_hex of c.
func hexColor(c RGB) string {
	return fmt.Sprintf("#%02x%02x%02x", to8bit(c.R), to8bit(c.G), to8bit(c.B))
}

// Hex returns c as #rrggbb, rounded as matplotlib.colors.to_hex does.
func (c RGB) Hex() string { return hexColor(c) }

// ANSI returns the escape sequence that sets black text on background c,
// and the one that resets it.
func (c RGB) ANSI() (set, reset string) {
	return fmt.Sprintf("\x1b[38;2;0;0;0;48;2;%d;%d;%dm", to8bit(c.R), to8bit(c.G), to8bit(c.B)), "\x1b[0m"
}

// WriteHTML writes an inline fragment of spans separated by spaces,
//
//	<span style="background-color:#rrggbb;color:#000" title="score">tok</span>
//
// with the raw score (full precision) as tooltip and the token HTML-escaped.
// The text colour is fixed to black so that the light coolwarm backgrounds
// stay readable on dark-themed pages. NaN tokens have no background and a
// wavy underline.
func WriteHTML(w io.Writer, h Heatmap) error {
	if err := h.validate(); err != nil {
		return err
	}
	colors := h.Colors()
	bw := bufio.NewWriter(w)
	for i, tok := range h.Tokens {
		if i > 0 {
			bw.WriteByte(' ')
		}
		tok = html.EscapeString(visible.String(tok))
		s := h.Scores[i]
		if math.IsNaN(s) {
			fmt.Fprintf(bw, `<span style="text-decoration:underline wavy" title="NaN">%s</span>`, tok)
			continue
		}
		fmt.Fprintf(bw, `<span style="background-color:%s;color:#000" title="%s">%s</span>`,
			hexColor(colors[i]), strconv.FormatFloat(s, 'g', -1, 64), tok)
	}
	return bw.Flush()
}

// pageCSS keeps the document self-contained: no external stylesheet, font or
// script. white-space:pre keeps whitespace tokens visible.
const pageCSS = `body{font-family:sans-serif;margin:1.5em}
table{border-collapse:collapse}
td,th{padding:.3em .6em;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}
td.hm{font-family:monospace;font-size:1.1em;font-weight:bold}
td.hm span{white-space:pre;padding:0 .1em}
td.num{font-family:monospace;color:#555}`

// HTMLPage writes one self-contained HTML document (inline CSS, no external
// assets) with a table of labelled heatmaps and each row's max |score|,
// since every row is scaled by its own maximum.
func HTMLPage(w io.Writer, title string, rows []Row) error {
	for _, r := range rows {
		if err := r.Heatmap.validate(); err != nil {
			return fmt.Errorf("row %q: %w", r.Label, err)
		}
	}
	bw := bufio.NewWriter(w)
	t := html.EscapeString(visible.String(title))
	fmt.Fprintf(bw, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n<h1>%s</h1>\n", t, pageCSS, t)
	bw.WriteString("<p>Colours: matplotlib coolwarm, blue negative, red positive; each row scaled by its own max |score|; rows with all |score| &lt; 1e-5 are blank; wavy underline marks NaN.</p>\n")
	bw.WriteString("<table>\n<tr><th>label</th><th>heatmap</th><th>max |score|</th></tr>\n")
	for _, r := range rows {
		fmt.Fprintf(bw, "<tr><td>%s</td><td class=\"hm\">", html.EscapeString(visible.String(r.Label)))
		if err := WriteHTML(bw, r.Heatmap); err != nil {
			return err
		}
		fmt.Fprintf(bw, "</td><td class=\"num\">%s</td></tr>\n", strconv.FormatFloat(r.Heatmap.MaxAbs(), 'g', 4, 64))
	}
	bw.WriteString("</table>\n</body>\n</html>\n")
	return bw.Flush()
}

// IsTerminal reports whether coloured output should be written to f: f must
// be a character device and NO_COLOR (https://no-color.org) must be unset or
// empty. Standard library only, so this is the ModeCharDevice test rather
// than an isatty ioctl; /dev/null therefore also counts, which is harmless
// since its output is discarded.
func IsTerminal(f *os.File) bool {
	if os.Getenv("NO_COLOR") != "" || f == nil {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
