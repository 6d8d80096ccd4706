package bench

import (
	"slices"
	"testing"
)

// TestSplitMix64 checks the generator against the first outputs of Vigna's
// splitmix64.c seeded with 1234567.
func TestSplitMix64(t *testing.T) {
	want := []uint64{6457827717110365317, 3203168211198807973, 9817491932198370423, 4593380528125082431, 16408922859458223821}
	s := splitMix64{state: 1234567}
	for i, w := range want {
		if got := s.next(); got != w {
			t.Fatalf("output %d = %d, want %d", i, got, w)
		}
	}
}

// TestTokenIDs checks the ids are below v, differ between lengths, and are
// the same on every call; bench/torch/bench_ig.py asserts the same first ids.
func TestTokenIDs(t *testing.T) {
	a := TokenIDs(200, 200)
	if len(a) != 200 || !slices.Equal(a, TokenIDs(200, 200)) {
		t.Fatalf("TokenIDs(200, 200) is not one fixed sequence of 200")
	}
	for i, id := range a {
		if id < 0 || id >= 200 {
			t.Fatalf("id %d = %d, not below 200", i, id)
		}
	}
	if slices.Equal(a[:50], TokenIDs(1000, 200)[:50]) {
		t.Errorf("lengths 200 and 1000 start with the same ids")
	}
	// the same numbers are asserted by bench/torch/bench_ig.py
	if first := []int{137, 81, 178, 47, 78, 165, 149, 118}; !slices.Equal(a[:8], first) {
		t.Errorf("TokenIDs(200, 200)[:8] = %v, want %v", a[:8], first)
	}
	if TokenIDs(3, 0) != nil || TokenIDs(-1, 5) != nil {
		t.Errorf("TokenIDs of a bad size is not nil")
	}
}
