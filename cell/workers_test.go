package cell

import (
	"math/rand/v2"
	"testing"
)

// TestCallWorkers checks that a call too small to gain from a second
// worker gets one, and a sparse model's split of few lanes the higher bar.
func TestCallWorkers(t *testing.T) {
	defer func(p, s int64) { parallelMinWork, sparseSplitMinWork = p, s }(parallelMinWork, sparseSplitMinWork)
	parallelMinWork, sparseSplitMinWork = 1<<20, 1<<24
	rng := rand.New(rand.NewPCG(41, 42))
	dense := randomStacked(t, rng, 4, 8, 1, false, 3, 1, true)
	// W_hh 4·8·8, 4 per unit for the input's row and 16 for the gate step.
	if got := dense.laneStepWork(); got != 416 {
		t.Fatalf("dense laneStepWork = %d, want 416", got)
	}
	p := dense.Params()
	for i := range p.Cells[0].Whh { // 4 nonzero terms in W_hh
		p.Cells[0].Whh[i] = 0
	}
	for i := range p.Cells[0].Wih {
		p.Cells[0].Wih[i] = 0
	}
	p.Cells[0].Whh[0], p.Cells[0].Whh[9], p.Cells[0].Whh[70], p.Cells[0].Whh[255] = 1, -2, 0.5, 3
	p.Cells[0].Wih[1], p.Cells[0].Wih[100] = 1, 1
	sparse, err := NewModel(p)
	if err != nil {
		t.Fatal(err)
	}
	if !sparse.sparse() {
		t.Fatal("the model with 4 nonzero recurrent weights runs dense products")
	}
	if got := sparse.laneStepWork(); got != 4+20*8 {
		t.Fatalf("sparse laneStepWork = %d, want %d", got, 4+20*8)
	}
	for _, c := range []struct {
		s                     *Model
		workers, lanes, steps int
		want                  int
	}{
		{dense, 1, 52, 1 << 20, 1}, // one stays one
		{dense, 2, 52, 16, 1},      // 52·16·512 = 4.3·10⁵ < 2²⁰
		{dense, 2, 52, 64, 2},      // 1.7·10⁶
		{dense, 8, 1002, 16, 8},    // 8.2·10⁶
		{sparse, 2, 1002, 16, 2},   // 2.1·10⁶, 501 lanes a worker
		{sparse, 2, 1002, 4, 1},    // 5.4·10⁵
		{sparse, 2, 52, 1024, 1},   // 7.1·10⁶ < 2²⁴: 26 lanes a worker
		{sparse, 2, 52, 4096, 2},   // 2.9·10⁷
	} {
		if got := c.s.callWorkers(c.workers, c.lanes, c.steps); got != c.want {
			t.Errorf("sparse %v, %d workers, %d lanes, %d steps: %d workers, want %d", c.s.sparse(), c.workers, c.lanes, c.steps, got, c.want)
		}
	}
}
