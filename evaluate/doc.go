// Package evaluate scores explanations of the white-box networks against
// the ground truth of their tasks, whatever tool made them. An explanation
// is one score per input symbol for an explained class c (by default the
// network's prediction, which for these networks is always the correct
// label). A score s counts as nonzero when |s| > Threshold (1e-5, the
// paper's blank threshold).
//
// Counting (more a's than b's?). The expected sign of an a is +1 when c is
// True and −1 when c is False; a b expects the opposite sign.
//   - sign: the fraction of positions whose score is nonzero with the
//     expected sign. Met when every position agrees (a's and b's then have
//     opposite signs, the a's the sign of c).
//   - spread: the coefficient of variation of |score| over all positions,
//     std(|s|)/mean(|s|) (population standard deviation). Met when at most
//     SpreadTolerance (0.1); undefined (and not met) for an all-zero
//     explanation.
//
// SP (sp-counter, sp-fsa: does the string contain one of the subsequences
// ab, bc, cd, dc?). Applies to strings labelled True explained for True.
// The ground-truth set G is every position that is part of SOME occurrence
// of a contained subsequence: position i is in G when some j > i makes
// (x_i, x_j) one of the four pairs, or some j < i makes (x_j, x_i) one.
// Z is the set of nonzero positions.
//   - precision: |Z ∩ G| / |Z|; undefined (not met) when Z is empty; met
//     when Z ⊆ G.
//   - recall: |Z ∩ G| / |G|; met when G ⊆ Z.
//   - pointing: 1 when the largest |score| is nonzero and every position
//     attaining it is in G, else 0 (the pointing game; a tie with a
//     position outside G misses). Met when 1.
//   - ablation: the ablation test of Table 5 on the given scores: delete
//     the symbol with the highest score (signed, leftmost on ties), then the
//     next highest of the rest, and so on, without recomputing scores,
//     until the string no longer contains a subsequence (ablation.Stop on
//     whitebox.SPAutomaton) or one symbol is left. The value is the
//     percentage of the string deleted; met when it equals the optimum.
//   - ablation-optimal: the optimum of the same test (ablation.Optimal,
//     by dynamic programming), as a percentage: the reference for ablation.
//     Always met.
//
// The recomputed ablation test of Table 5 (the heatmap recomputed after
// every deletion) needs the attribution method, not just its scores; it is
// package ablation's Evaluator, which the command runs for its own methods.
//
// Bracket. Applies to prefixes with an unclosed bracket, explained for the
// class that closes it.
//   - last-unclosed: 1 when the last unclosed bracket's |score| is nonzero
//     and strictly larger than every other position's, else 0. Met when 1.
//
// A Summary of one criterion over many explanations gives the number of
// inputs it applies to, the number where it is defined, the mean and the
// population standard deviation of the defined values, and the percentage
// of the applicable inputs that meet the expectation.
package evaluate
