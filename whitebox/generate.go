package whitebox

import (
	"fmt"
	"math/rand/v2"
)

// NewRand returns the generator every seeded function of this package uses:
// PCG, whose output is fixed by its specification, so a seed gives the same
// strings on every platform and Go version.
func NewRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }

// Generate returns a string of the task's domain with a length drawn
// uniformly from [minLen, maxLen]. Counting and SP strings are uniform over
// their alphabets; bracket strings are random valid prefixes that close a
// bracket with probability 1/2 when one is open (never deeper than the
// task's stack allows), so they end in every class. A nil rng is an error.
func (t *Task) Generate(rng *rand.Rand, minLen, maxLen int) (string, error) {
	if rng == nil {
		return "", fmt.Errorf("%s: nil random generator", t.Name)
	}
	if minLen < 1 || maxLen < minLen {
		return "", fmt.Errorf("%s: lengths %d..%d: want 1 ≤ min ≤ max", t.Name, minLen, maxLen)
	}
	n := minLen + rng.IntN(maxLen-minLen+1)
	symbols := make([]int, 0, n)
	if t.Name != "bracket" {
		for range n {
			symbols = append(symbols, rng.IntN(len(t.Alphabet)))
		}
		return t.Decode(symbols), nil
	}
	var stack []int
	for range n {
		canOpen := true
		if _, err := t.label(append(symbols, OpenParen)); err != nil {
			canOpen = false // the stack is full
		}
		if len(stack) > 0 && (!canOpen || rng.IntN(2) == 0) {
			symbols = append(symbols, stack[len(stack)-1]+2)
			stack = stack[:len(stack)-1]
			continue
		}
		k := rng.IntN(2)
		symbols = append(symbols, k)
		stack = append(stack, k)
	}
	return t.Decode(symbols), nil
}
