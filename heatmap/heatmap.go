// Package heatmap renders token-level attribution heatmaps the way the paper
// "Evaluating Attribution Methods using White-Box LSTMs" (Hao 2020) does:
// matplotlib's coolwarm diverging colormap (blue negative, red positive),
// each heatmap scaled by its own max |score|, and near-zero heatmaps blank.
//
// Output formats: 24-bit ANSI terminal colour, plain text with numbers,
// LaTeX in the paper's \textcolor[rgb]{r,g,b}{\textbf{x}} form, and HTML.
//
// NaN scores never panic. They are excluded from the scaling, get NaNColor
// from Colors, and every writer marks them distinctly: no background colour
// and underlined (ANSI, LaTeX, HTML), or "NaN" as the number (plain).
package heatmap

import (
	"fmt"
	"math"
)

// BlankThreshold is the magnitude below which every score of a heatmap must
// fall for the heatmap to be shown blank (all tokens at the colormap
// midpoint). Without it, own-max scaling would blow numerical noise of an
// all-zero attribution up to full red/blue.
const BlankThreshold = 1e-5

// NaNColor is what Colors reports for a NaN score: white, i.e. "uncoloured",
// which is not a coolwarm colour (the map's lightest entry is grey).
var NaNColor = RGB{1, 1, 1}

// Heatmap is a token sequence with one attribution score per token.
type Heatmap struct {
	Tokens []string
	Scores []float64
}

// validate reports a length mismatch, the one malformed input that cannot be
// rendered sensibly.
func (h Heatmap) validate() error {
	if len(h.Tokens) != len(h.Scores) {
		return fmt.Errorf("heatmap: %d tokens but %d scores", len(h.Tokens), len(h.Scores))
	}
	return nil
}

// MaxAbs returns the largest |score|, ignoring NaNs (0 if there is none).
func (h Heatmap) MaxAbs() float64 {
	m := 0.0
	for _, s := range h.Scores {
		if a := math.Abs(s); a > m { // false for NaN
			m = a
		}
	}
	return m
}

// Blank reports whether every non-NaN score has |score| < BlankThreshold.
// An empty heatmap, or one of only NaNs, is blank.
func (h Heatmap) Blank() bool {
	return h.MaxAbs() < BlankThreshold
}

// normalized returns the scores scaled to [-1, 1] by the heatmap's own
// max |score|, all zeros if the heatmap is blank, NaN kept as NaN. If some
// score is infinite, infinities map to ±1 and finite scores to 0 rather
// than Inf/Inf = NaN.
func (h Heatmap) normalized() []float64 {
	v := make([]float64, len(h.Scores))
	if h.Blank() {
		for i, s := range h.Scores {
			if math.IsNaN(s) {
				v[i] = s
			}
		}
		return v
	}
	m := h.MaxAbs()
	for i, s := range h.Scores {
		switch {
		case math.IsInf(m, 1) && !math.IsInf(s, 0) && !math.IsNaN(s):
			v[i] = 0
		case math.IsInf(s, 0):
			v[i] = math.Copysign(1, s)
		default:
			v[i] = s / m
		}
	}
	return v
}

// Colors returns one colour per token: Coolwarm((score/max|score| + 1) / 2),
// the midpoint Coolwarm(0.5) for every token of a blank heatmap, and
// NaNColor for NaN scores. It panics if len(Tokens) != len(Scores).
func (h Heatmap) Colors() []RGB {
	if err := h.validate(); err != nil {
		panic(err)
	}
	v := h.normalized()
	c := make([]RGB, len(v))
	for i, x := range v {
		c[i] = Coolwarm((x + 1) / 2) // NaN propagates to NaNColor
	}
	return c
}

// Row is one labelled heatmap of an HTML page.
type Row struct {
	Label   string
	Heatmap Heatmap
}

// Levels returns the colormap entry (0 … 255) of each token, the quantity
// the paper's colours encode, or −1 for NaN. Colors()[i] is
// LevelColor(Levels()[i]).
func (h Heatmap) Levels() []int {
	if err := h.validate(); err != nil {
		panic(err)
	}
	v := h.normalized()
	l := make([]int, len(v))
	for i, x := range v {
		l[i] = -1
		if !math.IsNaN(x) {
			l[i] = lutIndex((x + 1) / 2)
		}
	}
	return l
}

// LevelColor returns entry i (0 … 255) of the colormap; NaNColor outside.
func LevelColor(i int) RGB {
	if i < 0 || i >= lutSize {
		return NaNColor
	}
	return coolwarmLUT[i]
}

// LevelOf returns the colormap entry equal to c within tol per channel, or
// −1: it reads the level back from a colour printed in a paper.
func LevelOf(c RGB, tol float64) int {
	for i, e := range coolwarmLUT {
		if math.Abs(e.R-c.R) <= tol && math.Abs(e.G-c.G) <= tol && math.Abs(e.B-c.B) <= tol {
			return i
		}
	}
	return -1
}
