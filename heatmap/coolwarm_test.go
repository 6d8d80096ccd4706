package heatmap

import (
	"math"
	"os"
	"regexp"
	"strconv"
	"testing"
)

// Colours copied from the paper's LaTeX tables (matplotlib output).
var (
	paperRed = RGB{0.705673158, 0.01555616, 0.150232812}
	paperMid = RGB{0.8674276350862745, 0.864376599772549, 0.8626024620196079}
)

func TestCoolwarmVectors(t *testing.T) {
	cases := []struct {
		x    float64
		want RGB
	}{
		{1.0, paperRed},
		{0.5, paperMid},
		{0.0, RGB{0.2298057, 0.298717966, 0.753683153}}, // first control point
	}
	for _, c := range cases {
		if got := Coolwarm(c.x); got != c.want { // bit-exact, like matplotlib
			t.Errorf("Coolwarm(%v) = %v, want %v", c.x, got, c.want)
		}
	}
}

func TestLUTIndexBoundaries(t *testing.T) {
	below1 := math.Nextafter(1, 0)
	cases := []struct {
		x    float64
		want int
	}{
		{0, 0},
		{math.Nextafter(1.0/256, 0), 0},
		{1.0 / 256, 1},
		{0.25, 64},
		{math.Nextafter(0.5, 0), 127},
		{0.5, 128},
		{1 - 1.0/256, 255},
		{below1, 255},
		{1, 255}, // in range: matplotlib maps x == 1 to N-1, not to "over"
		{-0.5, 0},
		{1.5, 255},
		{math.Inf(-1), 0},
		{math.Inf(1), 255},
	}
	for _, c := range cases {
		if got := lutIndex(c.x); got != c.want {
			t.Errorf("lutIndex(%v) = %d, want %d", c.x, got, c.want)
		}
		if got, want := Coolwarm(c.x), coolwarmLUT[c.want]; got != want {
			t.Errorf("Coolwarm(%v) = %v, want LUT[%d] = %v", c.x, got, c.want, want)
		}
	}
	if got := Coolwarm(math.NaN()); got != NaNColor {
		t.Errorf("Coolwarm(NaN) = %v, want NaNColor", got)
	}
}

// The colour map must be a smooth blue→grey→red ramp; a mistyped control
// point would show up as a jump between neighbouring entries.
func TestLUTShape(t *testing.T) {
	for i := 1; i < lutSize; i++ {
		a, b := coolwarmLUT[i-1], coolwarmLUT[i]
		for _, d := range []float64{b.R - a.R, b.G - a.G, b.B - a.B} {
			if math.Abs(d) > 0.04 {
				t.Fatalf("LUT jump between %d and %d: %v -> %v", i-1, i, a, b)
			}
		}
	}
	if c := coolwarmLUT[0]; !(c.B > c.R && c.B > c.G) {
		t.Errorf("LUT[0] = %v is not blue", c)
	}
	if c := coolwarmLUT[255]; !(c.R > c.G && c.R > c.B) {
		t.Errorf("LUT[255] = %v is not red", c)
	}
}

// Every colour in the paper's tables was produced by matplotlib's coolwarm,
// so each must be one of our 256 entries.
func TestPaperColorsAreLUTEntries(t *testing.T) {
	src, err := os.ReadFile("/work/shared/paper/whitebox-lstms.tex")
	if err != nil {
		t.Skipf("paper source not available: %v", err)
	}
	re := regexp.MustCompile(`\\textcolor\[rgb\]\{([^,}]+),([^,}]+),([^,}]+)\}`)
	matches := re.FindAllSubmatch(src, -1)
	if len(matches) == 0 {
		t.Fatal(`no \textcolor[rgb]{...} triples found in the paper`)
	}
	seen := map[RGB]bool{}
	for _, m := range matches {
		var c [3]float64
		for k := range c {
			if c[k], err = strconv.ParseFloat(string(m[k+1]), 64); err != nil {
				t.Fatalf("parsing %q: %v", m[0], err)
			}
		}
		rgb := RGB{c[0], c[1], c[2]}
		if seen[rgb] {
			continue
		}
		seen[rgb] = true
		found := false
		for _, e := range coolwarmLUT {
			if math.Abs(e.R-rgb.R) <= 1e-12 && math.Abs(e.G-rgb.G) <= 1e-12 && math.Abs(e.B-rgb.B) <= 1e-12 {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("paper colour %v is not a coolwarm LUT entry", rgb)
		}
	}
	t.Logf("checked %d distinct colours (%d occurrences)", len(seen), len(matches))
}
