package evaluate

import "github.com/whitebox-lstm/whitebox/whitebox"

// spPairs lists the subsequences of the SP task as (first, second) symbol
// indices: ab, bc, cd, dc.
var spPairs = [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 2}}

// SPPositions returns, for symbols over {a, b, c, d} (0..3), whether each
// position is part of some occurrence of a contained subsequence ab, bc,
// cd or dc: position i is when a later position completes a pair that
// x_i begins, or an earlier one begins a pair that x_i completes. Symbols
// outside 0..3 are never part of one.
func SPPositions(symbols []int) []bool {
	in := make([]bool, len(symbols))
	var before, after [4]bool
	for i, k := range symbols {
		if k < 0 || k > 3 {
			continue
		}
		for _, p := range spPairs {
			if p[1] == k && before[p[0]] {
				in[i] = true
			}
		}
		before[k] = true
	}
	for i := len(symbols) - 1; i >= 0; i-- {
		k := symbols[i]
		if k < 0 || k > 3 {
			continue
		}
		for _, p := range spPairs {
			if p[0] == k && after[p[1]] {
				in[i] = true
			}
		}
		after[k] = true
	}
	return in
}

// LastUnclosed returns the position of the last unclosed bracket of a
// bracket prefix (symbols as in whitebox.BracketTask), or −1 when every
// bracket is closed. It does not check that the prefix is valid.
func LastUnclosed(symbols []int) int {
	var stack []int
	for i, k := range symbols {
		switch k {
		case whitebox.OpenParen, whitebox.OpenSquare:
			stack = append(stack, i)
		default:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	if len(stack) == 0 {
		return -1
	}
	return stack[len(stack)-1]
}
