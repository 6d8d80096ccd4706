// Package faithfulness implements the standard faithfulness metrics of
// attribution methods and measures them against the ground truth of the
// white-box networks: for each network, each metric's ranking of the
// methods is compared with the ranking by package evaluate's criteria.
//
// Conventions shared by every metric. x is an input of T tokens and R_t
// the token scores of a method for class c, the class the network predicts
// on x (for the white-box networks, the correct label), kept fixed on every
// perturbed input. f(x′) is c's probability, the softmax of the network's
// logits on x′: the white-box networks output logits, and the metrics'
// papers measure the predicted class's probability. Tokens are ranked by
// their signed score, highest first ("most relevant first"); equal scores
// go leftmost first. A token is removed in one of two ways (Removal),
// both reported:
//   - Delete ("-del"): the token is taken out and the sequence gets
//     shorter. Removing every token leaves the empty input, whose output
//     is the decoder applied to the zero initial state, ŷ = b_y.
//   - Zero ("-zero"): the token's one-hot row is replaced by the zero row,
//     the input of no symbol at all. No symbol of the four tasks is
//     neutral (a and b move the counter; each of a, b, c, d begins or ends
//     one of the subsequences ab, bc, cd, dc; each bracket opens or closes
//     one), so the neutral "symbol" is the zero row, the same baseline as
//     Occlusion's and IG's: a metric in this mode shares those methods'
//     notion of absence.
//
// The metrics (↑: higher is better, ↓: lower is better):
//   - comp (↑), comprehensiveness as AOPC (DeYoung et al. 2020, ERASER):
//     (1/|B|)·Σ_{b∈B} [f(x) − f(x without its k_b most relevant tokens)],
//     B = {1, 5, 10, 20, 50} %, k_b = ⌈b·T⌉ (at least 1; Bins, BinSize).
//     ERASER's paper divides by |B|+1 with an empty 0 % bin: 5/6 of ours,
//     the same ranking.
//   - suff (↓), sufficiency as AOPC (ibid.): the same mean of f(x) − f(x
//     with only its k_b most relevant tokens kept).
//   - morf (↓) and lerf (↑), deletion curves (Samek et al. 2017): remove
//     the tokens one by one, most relevant first (MoRF) or least relevant
//     first (LeRF); p_k = f(x after k removals), k = 0…T; the value is the
//     area under the curve over abscissae k/T by the trapezoid rule,
//     (1/T)·Σ_{k=1..T} (p_{k−1} + p_k)/2 (Curve).
//   - ins (↑), the insertion curve (Petsiuk et al. 2018): start with every
//     token removed and put them back most relevant first; the same area.
//   - infidelity (↓), Yeh et al. 2019, at the optimal scale of the scores
//     (their scaled variant; Captum's normalize=True), with perturbations
//     that zero the rows of a random token subset S (the token version of
//     their square removal; replacement only, since the perturbation is a
//     difference of inputs): each token is in S with probability ½,
//     independently, 50 subsets per input (Config.InfidelitySamples);
//     a_j = Σ_{t∈S_j} R_t, d_j = f(x) − f(x with S_j zeroed), value
//     min_β (1/N)·Σ_j (β·a_j − d_j)² (Infidelity).
//   - max-sens (↓), max-sensitivity (Yeh et al. 2019) as Captum's
//     sensitivity_max computes it: max_j ‖R(x+δ_j) − R(x)‖₂ / ‖R(x)‖₂ over
//     10 noisy copies (Config.SensitivitySamples) with every entry of the
//     T×D one-hot matrix moved by uniform noise in [−r, r], r = 0.02
//     (Captum's default radius; Config.Radius); the method is re-run on
//     each copy, as dense input, for the class c of x (MaxSensitivity).
//
// The perturbations of input i come from a PCG generator seeded with
// (Config.Seed, i) and are the same for every method, so methods are
// compared on the same perturbed inputs, and a run gives the same bits for
// every number of workers.
//
// Ground truth. On each input, evaluate.Evaluator.Score judges every
// method's scores by the criteria of the network (evaluate's package doc):
// counting sign and spread; SP precision, recall, pointing and ablation
// (ablation-optimal, met by every explanation, is left out; so is the
// recomputed ablation test, which needs more than the scores); bracket
// last-unclosed. Only inputs where the criteria apply count (SP: strings
// labelled True; bracket: prefixes with an unclosed bracket), for the
// metrics too. A method's ground-truth score on one input is the fraction
// of the criteria it meets; its score on the network is the mean over
// criteria of the percentage of inputs meeting each (Table.Truth).
//
// Comparison. Each metric ranks the methods by its mean over the inputs
// (oriented so that better is higher); Kendall's τ-b with ties
// (KendallTauB) compares that ranking with the ranking by Table.Truth:
// +1 the same order, −1 the reverse, undefined (NaN, printed —) when
// either ranks every method equal. The per-input agreement (Agreement)
// takes every input and every pair of methods that the input's
// ground-truth scores order (pairs they tie are skipped) and counts the
// share that the metric's values on that input order the same way, a tie
// of the metric counting ½: 100 % always right, 50 % no better than a
// coin. Both take values equal up to rounding as tied (Tied): metric
// values equal in exact arithmetic differ in their last bits.
//
// A method is a Method: a name and a constructor of an Explain per
// goroutine. AttribMethods wraps package attrib's five, AttribMethodsOf
// any of its methods (DeepLIFT and contextual decomposition too); another
// method plugs in as one more Method and becomes one more row.
package faithfulness
