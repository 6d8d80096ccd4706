// Package cell is the engine of recurrent classifiers: a model is
// PyTorch's nn.LSTM or nn.GRU (one or more layers, one or two directions)
// followed by a head (h_n, output[:, -1], mean, max or attention pooling)
// and a classifier (one Linear layer, or two with ReLU or tanh between).
// The white-box networks of package whitebox are its one-layer,
// one-direction LSTM models with head hn and one Linear decoder.
//
// A Runner runs a model on one input at a time: the forward pass
// (also from a given state, ForwardFrom, with the state reached, Final),
// the analytic gradient of a logit with respect to every input feature
// (backpropagation through time), layer-wise relevance propagation (the
// ε-rule through the LSTM, as in Arras et al. 2017, or the white-box
// paper's variant: LRPRule), DeepLIFT against a reference input (the
// Rescale multiplier at every sigmoid, tanh and ReLU, the symmetric
// (Shapley) split m_a = b₀ + Δb/2, m_b = a₀ + Δa/2 at every product of two
// varying quantities, gradients through Linear layers and the mean head,
// and max pooling's change split between the maximising steps a (of the
// input) and b (of the reference) in the proportion λ = (h_a − h_b) /
// ((h_a − h_b) + (h₀_b − h₀_a)) to 1 − λ, so that the scores sum to the
// change of the logit; deeplift.go has the rules), and the
// batched methods: the α-scaled copies of Integrated Gradients and the
// occluded copies of Occlusion as lanes of a batch, in chunks on several
// goroutines, within a memory budget (RunOptions), with checkpointed
// backprop for long inputs; their results are the bits of the one-lane
// passes whatever the number of goroutines, lanes or budget. A CDRunner
// computes contextual decomposition.
//
// Long inputs whose whole trace does not fit the budget run checkpointed
// (checkpoint.go): the state before each segment of ⌈√T⌉ steps (wider
// where the budget allows) and, on models of two layers or more, the
// layers' outputs and their gradients kept whole, so that backprop
// recomputes each step of each layer and direction once: one more forward
// pass, whatever T and the depth. This is Chen et al.'s sublinear-memory
// schedule (2016) with the layers' outputs as its stored boundaries.
// Attribution computes no weight gradients, so a backward step costs about
// what a forward step does, and the extra forward pass adds about half the
// whole trace's time, not training's third; only keeping part of the
// forward trace would recompute less, and a budget that holds that holds
// more lanes first (BENCHMARKS.md, "256-bit last vectors and weights
// without ±0").
// Griewank and Walther's binomial checkpointing ("revolve") needs less
// memory for more recomputation (a factor that grows with log T); it
// pays only where even the √T checkpoints do not fit, and those are
// 2H words per segment, lane and cell (64 KiB a lane and cell for 1,000
// tokens of H = 128), far less than a segment's trace, which both
// schedules hold: a budget too small for them is refused instead. Plans
// (plan.go) choose the lanes per batch, the workers, a team for each time
// step and whether the boundaries are kept, from the memory each choice
// needs and the measured costs written beside each rule; IG on one worker
// runs batches of 8 lanes on the whole trace rather than checkpoints where
// the budget holds them and the model's weights hold no ±0 (narrowWhole:
// the extra forward pass costs more than the narrower batches). Three
// things keep the recomputation cheap: under a mean or max head the
// forward pass keeps the top layer's outputs in the gradient buffer
// backprop has not begun to use, so the head pools them without a third
// pass of the top layer; a layer above the first computes the input
// products of several steps at a time (wide_inputs.go), since the
// boundaries it reads are kept; and on two cores one recomputes the next
// segment while the other runs backprop over this one, the two directions
// of a layer running side by side in the forward pass (pipeline.go).
//
// One-hot input has a fast path in the first layer: gates without
// recurrent weights come from per-symbol tables (tables.go) and
// IG sums each lane's input gradient. A model is immutable and
// safe for concurrent use; each goroutine brings its own runner, which
// reuses its buffers, so that steady-state calls allocate nothing.
package cell
