package evaluate

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/whitebox-lstm/whitebox/ablation"
)

// OneShotAblation is the ablation test on fixed scores: it deletes symbols
// in order of decreasing score (leftmost first on ties), the scores not
// recomputed, until stop holds or one symbol is left, and returns how many
// it deleted. The stop condition is package ablation's, so the count is
// comparable with ablation.Optimal; a string that meets it from the start
// deletes nothing. A length mismatch and the errors of ablation.Stop.Done
// are errors.
func OneShotAblation(stop ablation.Stop, symbols []int, scores []float64) (int, error) {
	if len(scores) != len(symbols) {
		return 0, fmt.Errorf("evaluate: %d scores for %d symbols", len(scores), len(symbols))
	}
	order := make([]int, len(symbols))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(scores[j], scores[i]) })
	removed := make([]bool, len(symbols))
	s := make([]int, 0, len(symbols))
	for deleted := 0; ; deleted++ {
		s = s[:0]
		for i, k := range symbols {
			if !removed[i] {
				s = append(s, k)
			}
		}
		done, err := stop.Done(s)
		if err != nil {
			return deleted, err
		}
		if done || len(s) <= 1 {
			return deleted, nil
		}
		removed[order[deleted]] = true
	}
}
