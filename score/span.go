package score

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/whitebox-lstm/whitebox/attrib"
)

// ParseSpan reads -span's value "i:j": token positions i through j,
// counted from 0 and both included (the authors' CD(start=i, stop=j)),
// decimal digits only, 0 ≤ i ≤ j. Whether j lies within an input is
// checked when the input is scored.
func ParseSpan(s string) (attrib.Span, error) {
	a, b, ok := strings.Cut(s, ":")
	i, errA := spanIndex(a)
	j, errB := spanIndex(b)
	if !ok || errA != nil || errB != nil {
		return attrib.Span{}, fmt.Errorf("-span %q: want i:j, two token positions counted from 0 (e.g. 2:4)", s)
	}
	if j < i {
		return attrib.Span{}, fmt.Errorf("-span %q: the span ends at %d, before it starts at %d", s, j, i)
	}
	return attrib.Span{Start: i, Stop: j}, nil
}

// spanIndex reads a token position: decimal digits only (no sign, no
// space), within an int.
func spanIndex(s string) (int, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("not a position: %q", s)
	}
	return strconv.Atoi(s)
}
