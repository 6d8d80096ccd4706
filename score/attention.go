package score

import (
	"github.com/whitebox-lstm/whitebox/cell"
)

// attnState is a Scorer's attention weights of its last input, for a
// model with an attention head (cell.HeadAttention): every record carries
// them ("attention", one per token; a removed trailing pad token's is 0).
type attnState struct {
	runner *cell.Runner
	alpha  []float64 // nil: the model has no attention head
}

// attention computes the attention weights of x (the model's input, its
// pads removed) for a record of n tokens into s.attn.alpha, or leaves it
// nil for a model without an attention head.
func (s *Scorer) attention(x cell.Input, n int) error {
	s.attn.alpha = nil
	st, ok := s.subj.model().(*cell.Model)
	if !ok || st.Head() != cell.HeadAttention {
		return nil
	}
	if s.attn.runner == nil {
		r, err := cell.NewRunner(st)
		if err != nil {
			return err
		}
		s.attn.runner = r
	}
	a := make([]float64, max(n, x.Len()))
	if err := s.attn.runner.AttentionWeights(x, a[:x.Len()]); err != nil {
		return err
	}
	s.attn.alpha = a[:n]
	return nil
}

// Attention returns the attention weights α of the last input scored, one
// per token (what its record's "attention" holds), or nil for a model
// without an attention head. The slice is the Scorer's: it changes with
// the next input.
func (s *Scorer) Attention() []float64 { return s.attn.alpha }
