package attrib_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/model"
)

// poolModel is a 2-layer bidirectional model and inputs of several
// lengths for it.
func poolModel(tb testing.TB) (*model.Model, []cell.Input) {
	tb.Helper()
	m, err := model.Load("../model/testdata/bi2.safetensors", model.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	var xs []cell.Input
	for _, n := range []int{3, 17, 60, 200} {
		ids := make([]int, n)
		for i := range ids {
			ids[i] = (i*7 + n) % 40
		}
		x, err := m.Embed(ids)
		if err != nil {
			tb.Fatal(err)
		}
		xs = append(xs, x)
	}
	return m, xs
}

// longInput embeds an input of n ids for m.
func longInput(tb testing.TB, m *model.Model, n int) cell.Input {
	tb.Helper()
	ids := make([]int, n)
	for i := range ids {
		ids[i] = (i*11 + 3) % 40
	}
	x, err := m.Embed(ids)
	if err != nil {
		tb.Fatal(err)
	}
	return x
}

// poolCase is one call of the service test: a method, an input and
// options.
type poolCase struct {
	m   attrib.Method
	x   int // index into the inputs
	opt attrib.Options
	all bool // AttributeAll
}

func (c poolCase) String() string {
	return fmt.Sprintf("%v x%d all=%v baseline=%v steps=%d", c.m, c.x, c.all, c.opt.Baseline != nil, c.opt.Steps)
}

// poolCases are every method with and without their options.
func poolCases(d int) []poolCase {
	row := make([]float64, d)
	for i := range row {
		row[i] = 0.01 * float64(i%5)
	}
	var cs []poolCase
	for x := range 4 {
		for _, m := range attrib.AllMethods() {
			cs = append(cs, poolCase{m: m, x: x})
			if m != attrib.ContextualDecomposition {
				cs = append(cs, poolCase{m: m, x: x, opt: attrib.Options{Baseline: row}})
				cs = append(cs, poolCase{m: m, x: x, all: true})
			}
		}
		cs = append(cs, poolCase{m: attrib.IntegratedGradients, x: x, opt: attrib.Options{Steps: attrib.AutoSteps}})
		cs = append(cs, poolCase{m: attrib.ContextualDecomposition, x: x, opt: attrib.Options{Span: &attrib.Span{Start: 0, Stop: 1}}})
	}
	return cs
}

// The reference: one Explainer, one call at a time, the default options.
func poolReference(t *testing.T, m *model.Model, xs []cell.Input, cs []poolCase) []string {
	t.Helper()
	e := mustExplainer(t, m)
	defer e.Release()
	want := make([]string, len(cs))
	for i, c := range cs {
		want[i] = runPoolCase(t.Context(), c, xs, func(ctx context.Context, r *attrib.Result, mr *attrib.MultiResult) error {
			if c.all {
				return e.AttributeAll(ctx, c.m, xs[c.x], c.opt, mr)
			}
			return e.Attribute(ctx, c.m, xs[c.x], c.opt, r)
		})
	}
	return want
}

// runPoolCase runs c with call and returns its result's bits as text
// (an error's text for an error).
func runPoolCase(ctx context.Context, c poolCase, xs []cell.Input, call func(context.Context, *attrib.Result, *attrib.MultiResult) error) string {
	var r attrib.Result
	var mr attrib.MultiResult
	if err := call(ctx, &r, &mr); err != nil {
		return "error: " + err.Error()
	}
	if c.all {
		s := ""
		for _, res := range mr.Results {
			s += bits(res.Scores) + bits(res.Features) + bits([]float64{res.Delta}) + ";"
		}
		return s
	}
	return bits(r.Scores) + bits(r.Features) + bits(r.Logits) + bits([]float64{r.Delta, r.SpanScore})
}

func bits(v []float64) string {
	s := fmt.Sprint(len(v), ":")
	for _, f := range v {
		s += fmt.Sprintf("%x,", math.Float64bits(f))
	}
	return s
}

// goroutines waits (up to 2 s) for the goroutine count to fall to n and
// returns it.
func goroutines(n int) int {
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	return runtime.NumGoroutine()
}

// TestPoolService is a service on one shared Pool: 32 goroutines, every
// method and option, some calls with deadlines that expire, bursts of
// long inputs. Every call that finishes gives the bits of one Explainer
// alone; the pool never holds more than its cores and budget; after
// Release it holds at most 2 MiB of heap and no goroutine.
func TestPoolService(t *testing.T) {
	m, xs := poolModel(t)
	cs := poolCases(m.Input())
	want := poolReference(t, m, xs, cs)

	startG := runtime.NumGoroutine()
	base := heapAfter(func() {})
	const budget = 64 << 20
	p, err := attrib.NewPool(attrib.PoolOptions{Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		done     = map[bool]int{}
		maxBusy  int
		maxBytes int64
	)
	rounds, stride, longT := 2, 5, 1500
	if testing.Short() { // every goroutine still runs, on a subset (emulated: minutes otherwise)
		rounds, stride, longT = 1, 40, 200
	}
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				for i := g % stride; i < len(cs); i += stride {
					c := cs[i]
					ctx, cancel := context.WithCancel(t.Context())
					if (g+r+i)%7 == 0 { // a deadline that expires during the call or the wait
						ctx, cancel = context.WithTimeout(t.Context(), time.Duration(1+(g+i)%5)*time.Millisecond)
					}
					got := runPoolCase(ctx, c, xs, func(ctx context.Context, res *attrib.Result, mr *attrib.MultiResult) error {
						if c.all {
							return p.AttributeAll(ctx, m, c.m, xs[c.x], c.opt, mr)
						}
						return p.Attribute(ctx, m, c.m, xs[c.x], c.opt, res)
					})
					expired := ctx.Err() != nil
					cancel()
					s := p.Stats()
					mu.Lock()
					maxBusy, maxBytes = max(maxBusy, s.BusyWorkers), max(maxBytes, s.ReservedBytes)
					mu.Unlock()
					if expired && got != want[i] {
						if len(got) < 7 || got[:7] != "error: " {
							t.Errorf("%v: a call past its deadline returned a result that is not the reference", c)
						}
						mu.Lock()
						done[false]++
						mu.Unlock()
						continue
					}
					if got != want[i] {
						t.Errorf("%v: pool result differs from one Explainer's:\n got %.200s\nwant %.200s", c, got, want[i])
					}
					mu.Lock()
					done[true]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	// A burst of long inputs: more calls than cores, each more than the
	// pool's budget would hold as a whole trace (checkpointed within its
	// share), one with a deadline that ends it mid-call.
	long := longInput(t, m, longT)
	wantLong := runPoolCase(t.Context(), poolCase{m: attrib.IntegratedGradients}, []cell.Input{long}, func(ctx context.Context, r *attrib.Result, _ *attrib.MultiResult) error {
		e := mustExplainer(t, m)
		defer e.Release()
		return e.Attribute(ctx, attrib.IntegratedGradients, long, attrib.Options{Budget: budget / 4}, r)
	})
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithCancel(t.Context())
			if g == 5 {
				ctx, cancel = context.WithTimeout(t.Context(), 20*time.Millisecond)
			}
			defer cancel()
			got := runPoolCase(ctx, poolCase{m: attrib.IntegratedGradients}, []cell.Input{long}, func(ctx context.Context, r *attrib.Result, _ *attrib.MultiResult) error {
				return p.Attribute(ctx, m, attrib.IntegratedGradients, long, attrib.Options{}, r)
			})
			if g == 5 && ctx.Err() != nil {
				return // stopped by its deadline (or done before it)
			}
			if got != wantLong {
				t.Errorf("long input, caller %d: the pool's result is not one Explainer's", g)
			}
			s := p.Stats()
			mu.Lock()
			maxBusy, maxBytes = max(maxBusy, s.BusyWorkers), max(maxBytes, s.ReservedBytes)
			mu.Unlock()
		}()
	}
	wg.Wait()
	t.Logf("%d calls finished, %d stopped by their deadline; at most %d cores busy, %d MiB reserved", done[true], done[false], maxBusy, maxBytes>>20)
	s := p.Stats()
	if s.BusyWorkers != 0 || s.Running != 0 || s.Waiting != 0 {
		t.Errorf("after the calls: %+v", s)
	}
	if maxBusy > s.Workers || maxBytes > budget || s.ReservedBytes > budget {
		t.Errorf("the pool held %d cores of %d and %d bytes of %d", maxBusy, s.Workers, max(maxBytes, s.ReservedBytes), budget)
	}
	after := heapAfter(func() {
		if err := p.Release(); err != nil {
			t.Fatal(err)
		}
	})
	if s := p.Stats(); s.ReservedBytes != 0 || s.Idle != 0 {
		t.Errorf("after Release: %+v", s)
	}
	held := int64(after) - int64(base)
	t.Logf("after Release: %d KiB of heap held, %d goroutines (%d before)", held>>10, runtime.NumGoroutine(), startG)
	if held > 2<<20 {
		t.Errorf("after Release the pool holds %d KiB of heap (at most 2 MiB)", held>>10)
	}
	if n := goroutines(startG); n > startG {
		t.Errorf("after Release: %d goroutines, %d before the pool", n, startG)
	}
	runtime.KeepAlive(p)
}

// blockIG returns options whose IG call holds its cores until release is
// closed (Progress is called as steps finish), and a channel closed when
// it has started.
func blockIG() (attrib.Options, chan struct{}, chan struct{}) {
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	return attrib.Options{Progress: func(done, total int) {
		once.Do(func() { close(started); <-release })
	}}, started, release
}

func TestPoolAdmission(t *testing.T) {
	m, xs := poolModel(t)
	p, err := attrib.NewPool(attrib.PoolOptions{Workers: 1, Budget: 32 << 20, MaxWaiting: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	opt, started, release := blockIG()
	first := make(chan error, 1)
	go func() {
		var r attrib.Result
		first <- p.Attribute(t.Context(), m, attrib.IntegratedGradients, xs[1], opt, &r)
	}()
	<-started
	// One waits (and gives up at its deadline), the next is refused at once.
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	waited := make(chan error, 1)
	go func() {
		var r attrib.Result
		waited <- p.Attribute(ctx, m, attrib.Saliency, xs[0], attrib.Options{}, &r)
	}()
	deadline := time.Now().Add(2 * time.Second)
	for p.Stats().Waiting != 1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	var r attrib.Result
	if err := p.Attribute(t.Context(), m, attrib.Saliency, xs[0], attrib.Options{}, &r); !errors.Is(err, attrib.ErrPoolBusy) {
		t.Errorf("a call past MaxWaiting: %v, want ErrPoolBusy", err)
	}
	if err := <-waited; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a waiting call past its deadline: %v, want DeadlineExceeded", err)
	}
	if s := p.Stats(); s.Waiting != 0 || s.Refused != 1 || s.Running != 1 || s.BusyWorkers != 1 {
		t.Errorf("stats while the first call runs: %+v", s)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	// Options the pool cannot give are refused, not replaced.
	if err := p.Attribute(t.Context(), m, attrib.Saliency, xs[0], attrib.Options{Workers: 2}, &r); err == nil {
		t.Error("Workers above the pool's: no error")
	}
	var be *cell.BudgetError
	if err := p.Attribute(t.Context(), m, attrib.Saliency, xs[0], attrib.Options{Budget: 64 << 20}, &r); !errors.As(err, &be) {
		t.Errorf("Budget above the pool's: %v, want a *cell.BudgetError", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Attribute(t.Context(), m, attrib.Saliency, xs[0], attrib.Options{}, &r); !errors.Is(err, attrib.ErrPoolClosed) {
		t.Errorf("after Close: %v, want ErrPoolClosed", err)
	}
}

// A burst shares the cores: while calls wait, each takes one core.
func TestPoolShare(t *testing.T) {
	m, xs := poolModel(t)
	p, err := attrib.NewPool(attrib.PoolOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	opt, started, release := blockIG()
	first := make(chan error, 1)
	go func() {
		var r attrib.Result
		o := opt
		o.Workers = 1
		first <- p.Attribute(t.Context(), m, attrib.IntegratedGradients, xs[3], o, &r)
	}()
	<-started
	if s := p.Stats(); s.BusyWorkers != 1 {
		t.Fatalf("a call with Workers 1 holds %d cores", s.BusyWorkers)
	}
	// The second call alone takes the one free core, the budget's share of it.
	opt2, started2, release2 := blockIG()
	second := make(chan error, 1)
	go func() {
		var r attrib.Result
		second <- p.Attribute(t.Context(), m, attrib.IntegratedGradients, xs[3], opt2, &r)
	}()
	<-started2
	if s := p.Stats(); s.BusyWorkers != 2 || s.ReservedBytes > s.Budget {
		t.Errorf("two calls: %+v", s)
	}
	close(release)
	close(release2)
	for _, c := range []chan error{first, second} {
		if err := <-c; err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkPoolBurst: 8 concurrent callers of IG on one Pool (default
// options) against 8 Explainers with the default options (each takes
// every core) and 8 of one worker each, the cheapest way to share the
// cores without a pool.
func BenchmarkPoolBurst(b *testing.B) {
	m, xs := poolModel(b)
	x := xs[3]
	const callers = 8
	b.Run("pool", func(b *testing.B) {
		p, err := attrib.NewPool(attrib.PoolOptions{})
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close()
		for b.Loop() {
			burst(b, callers, func(int, *attrib.Result) error {
				var r attrib.Result
				return p.Attribute(context.Background(), m, attrib.IntegratedGradients, x, attrib.Options{}, &r)
			})
		}
	})
	b.Run("explainers-default", func(b *testing.B) { // each takes every core and its own budget
		es := make([]*attrib.Explainer, callers)
		for i := range es {
			es[i] = mustExplainer(b, m)
			defer es[i].Release()
		}
		for b.Loop() {
			burst(b, callers, func(i int, r *attrib.Result) error {
				return es[i].Attribute(context.Background(), attrib.IntegratedGradients, x, attrib.Options{}, r)
			})
		}
	})
	b.Run("explainers-workers=1", func(b *testing.B) {
		es := make([]*attrib.Explainer, callers)
		for i := range es {
			es[i] = mustExplainer(b, m)
			defer es[i].Release()
		}
		for b.Loop() {
			burst(b, callers, func(i int, r *attrib.Result) error {
				return es[i].Attribute(context.Background(), attrib.IntegratedGradients, x, attrib.Options{Workers: 1}, r)
			})
		}
	})
}

func burst(b *testing.B, n int, call func(int, *attrib.Result) error) {
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r attrib.Result
			errs[i] = call(i, &r)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
}

// One pool serves several models: each call's result is its model's, and
// the pool keeps at most Workers idle Explainers.
func TestPoolModels(t *testing.T) {
	var models []*model.Model
	var inputs []cell.Input
	for _, f := range []string{"../model/testdata/bi2.safetensors", "../model/testdata/uni1.pt"} {
		m, err := model.Load(f, model.Options{})
		if err != nil {
			t.Fatal(err)
		}
		x, err := m.Embed([]int{3, 14, 15, 9, 2, 6})
		if err != nil {
			t.Fatal(err)
		}
		models, inputs = append(models, m), append(inputs, x)
	}
	methods := attrib.AllMethods()
	want := make([][]string, len(models))
	for i, m := range models {
		e := mustExplainer(t, m)
		for _, me := range methods {
			var r attrib.Result
			err := e.Attribute(t.Context(), me, inputs[i], attrib.Options{}, &r)
			want[i] = append(want[i], fmt.Sprint(err)+bits(r.Scores))
		}
		e.Release()
	}
	p, err := attrib.NewPool(attrib.PoolOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			i := g % len(models)
			for k, me := range methods {
				var r attrib.Result
				err := p.Attribute(t.Context(), models[i], me, inputs[i], attrib.Options{}, &r)
				if got := fmt.Sprint(err) + bits(r.Scores); got != want[i][k] {
					t.Errorf("model %d, %v: the pool's result is not the model's", i, me)
				}
			}
		}()
	}
	wg.Wait()
	if s := p.Stats(); s.Idle > s.Workers || s.Running != 0 {
		t.Errorf("after the calls: %+v", s)
	}
	// A model the engine cannot run is refused by name.
	var r attrib.Result
	if err := p.Attribute(t.Context(), nil, attrib.Saliency, inputs[0], attrib.Options{}, &r); err == nil {
		t.Error("a nil model: no error")
	}
}

// TestPoolSpare: a call alone gets the free memory its Options.Spare
// asks; while another call holds memory, only what is left; its results
// are the bits of a call without it.
func TestPoolSpare(t *testing.T) {
	m, xs := poolModel(t)
	const share = 16 << 20
	p, err := attrib.NewPool(attrib.PoolOptions{Workers: 2, Budget: 3 * share})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var want attrib.Result
	if err := p.Attribute(t.Context(), m, attrib.IntegratedGradients, xs[3], attrib.Options{Budget: share}, &want); err != nil {
		t.Fatal(err)
	}
	p.Release()
	opt, started, release := blockIG()
	opt.Budget, opt.Spare, opt.Workers = share, 4*share, 1
	first := make(chan error, 1)
	var got attrib.Result
	go func() { first <- p.Attribute(t.Context(), m, attrib.IntegratedGradients, xs[3], opt, &got) }()
	<-started
	if s := p.Stats(); s.ReservedBytes != 3*share {
		t.Errorf("a call alone, Budget %d and Spare %d of a pool of %d: %d bytes reserved, want all of them", share, 4*share, 3*share, s.ReservedBytes)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Scores, want.Scores) {
		t.Errorf("with Spare: scores %v, want %v", got.Scores, want.Scores)
	}
	// With one call holding its share, the next gets what is left.
	p.Release()
	opt1, started1, release1 := blockIG()
	opt1.Budget, opt1.Workers = share, 1
	go func() {
		var r attrib.Result
		first <- p.Attribute(t.Context(), m, attrib.IntegratedGradients, xs[3], opt1, &r)
	}()
	<-started1
	opt2, started2, release2 := blockIG()
	opt2.Budget, opt2.Spare, opt2.Workers = share, 4*share, 1
	second := make(chan error, 1)
	go func() {
		var r attrib.Result
		second <- p.Attribute(t.Context(), m, attrib.IntegratedGradients, xs[3], opt2, &r)
	}()
	<-started2
	if s := p.Stats(); s.ReservedBytes != 3*share {
		t.Errorf("two calls: %d bytes reserved, want the pool's %d", s.ReservedBytes, 3*share)
	}
	close(release1)
	close(release2)
	for _, c := range []chan error{first, second} {
		if err := <-c; err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Attribute(t.Context(), m, attrib.IntegratedGradients, xs[3], attrib.Options{Spare: -1}, &got); err == nil {
		t.Error("Spare −1: no error")
	}
}
