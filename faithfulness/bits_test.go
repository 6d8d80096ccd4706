package faithfulness

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// wantBits is the SHA-256 of every float of the tables below, written in
// hexadecimal: the same bits on amd64 (AVX-512, AVX2), purego and arm64
// (CI runs this test on each).
const wantBits = "0ea75b0fa5c6a317a248c5a9f96e625a4b8fd7cbf888fb07a7a3e386ef79d1a5"

func TestRunBits(t *testing.T) {
	h := sha256.New()
	for _, name := range whitebox.Names() {
		net, err := whitebox.New(name, whitebox.Config{})
		if err != nil {
			t.Fatal(err)
		}
		rng := whitebox.NewRand(3)
		var in []string
		for range 5 {
			s, err := net.Task.Generate(rng, 2, 8)
			if err != nil {
				t.Fatal(err)
			}
			in = append(in, s)
		}
		tab, err := Run(context.Background(), net, in, AttribMethods(attrib.DefaultOptions()), Config{Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%x %x %x %x %x %v\n", tab.Truth, tab.Means, tab.Tau, tab.CriterionTruth, tab.CriterionTau, tab.Agree)
	}
	if got := fmt.Sprintf("%x", h.Sum(nil)); got != wantBits {
		t.Errorf("tables hash to %s, want %s", got, wantBits)
	}
}
