package score

import (
	"strconv"
	"testing"
)

func TestParseSpan(t *testing.T) {
	for s, want := range map[string][2]int{"0:0": {0, 0}, "2:4": {2, 4}, "007:8": {7, 8}} {
		sp, err := ParseSpan(s)
		if err != nil || sp.Start != want[0] || sp.Stop != want[1] {
			t.Errorf("ParseSpan(%q) = %v, %v", s, sp, err)
		}
	}
	for _, s := range []string{"", ":", "1", "1:", ":2", "4:2", "-1:2", "+1:2", " 1:2", "1:2 ", "1:2:3", "1.0:2", "0x1:2", "1:99999999999999999999", "١:٢"} {
		if sp, err := ParseSpan(s); err == nil {
			t.Errorf("ParseSpan(%q) = %v, want an error", s, sp)
		}
	}
}

// FuzzParseSpan: -span is outside data. Whatever the string, ParseSpan
// never panics, and what it accepts is a valid span that prints back as
// the canonical i:j it reads again.
func FuzzParseSpan(f *testing.F) {
	for _, s := range []string{"0:0", "2:4", "4:2", "-1:3", "1:", "9223372036854775807:9223372036854775807", "9223372036854775808:1", "1:2:3", "\xff:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := ParseSpan(s)
		if err != nil {
			return
		}
		if sp.Start < 0 || sp.Stop < sp.Start {
			t.Fatalf("%q: accepted %v", s, sp)
		}
		canon := strconv.Itoa(sp.Start) + ":" + strconv.Itoa(sp.Stop)
		if sp.String() != canon {
			t.Fatalf("%q: %v prints as %q", s, sp, sp.String())
		}
		if back, err := ParseSpan(canon); err != nil || back != sp {
			t.Fatalf("%q: %v reads back as %v, %v", s, sp, back, err)
		}
	})
}
