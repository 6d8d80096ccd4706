package attrib

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/whitebox-lstm/whitebox/cell"
)

// A Pool runs the attributions of any number of goroutines, on any of
// the models, on one set of cores and one memory budget, so that
// concurrent callers share them instead of multiplying them (eight
// Explainers with the defaults would each take every core and up to
// DefaultBudget). It keeps an Explainer per model and running call (at
// most Workers idle), reuses their scratch from call to call and gives it
// back when a call needs the memory, or on Release.
//
// Each call is admitted when a core is free and its memory fits (waiting
// in arrival order otherwise, or refused with ErrPoolBusy past
// PoolOptions.MaxWaiting), runs with Workers set to the cores it got and
// Budget to its share of the pool's, and gives both back when it returns.
// A call alone takes every free core; when others wait, each takes one, so
// that a burst of calls runs one per core (never slower than as many
// single-worker Explainers, which would share the cores by time slices).
// A call alone also gets the free memory its Options.Spare asks (the share
// of the cores it borrows), which only makes IG and occlusion faster.
// Results are the bits an Explainer gives: they depend on no Workers or
// Budget.
//
// A Pool is safe for concurrent use. Its zero value is not usable: make
// one with NewPool.
type Pool struct {
	cores     int
	budget    int64
	maxWait   int
	mu        sync.Mutex
	freeCores int
	freeBytes int64
	idle      []*pooled // LIFO: the warmest scratch first
	queue     []*poolWaiter
	closed    bool
	stats     PoolStats
}

// PoolOptions size a Pool. The zero value shares every core and
// DefaultBudget, and lets any number of calls wait.
type PoolOptions struct {
	// Workers is the number of cores the pool's calls share, ≥ 0 (0:
	// runtime.GOMAXPROCS(0)). At most Workers calls run at once.
	Workers int
	// Budget is the scratch memory, in bytes, of all calls together and
	// of what the pool keeps between them, ≥ 0 (0: DefaultBudget). A call
	// gets Options.Budget when it sets one (at most Budget; more is
	// refused with a *cell.BudgetError), else Budget × its cores / Workers.
	Budget int64
	// MaxWaiting bounds the calls that wait for a core or memory, ≥ 0 (0:
	// no bound); one more is refused at once with ErrPoolBusy, as a server
	// sheds load.
	MaxWaiting int
}

// PoolStats is a snapshot of a Pool's use.
type PoolStats struct {
	Workers       int   // the cores of the pool
	Budget        int64 // its memory budget, bytes
	BusyWorkers   int   // cores held by running calls
	ReservedBytes int64 // memory held by running calls and idle Explainers
	Running       int   // calls running
	Waiting       int   // calls waiting for a core or memory
	Idle          int   // Explainers kept with their scratch between calls (at most Workers)
	Calls         int64 // calls admitted since NewPool
	Refused       int64 // calls refused with ErrPoolBusy
}

// Errors of a Pool (errors.Is).
var (
	// ErrPoolBusy refuses a call when PoolOptions.MaxWaiting calls wait.
	ErrPoolBusy = errors.New("attrib: pool busy: too many calls waiting")
	// ErrPoolClosed refuses a call after Close.
	ErrPoolClosed = errors.New("attrib: pool closed")
)

// pooled is an Explainer the pool keeps, and the memory it holds for it:
// the largest budget it ran a call with since it was last released.
type pooled struct {
	e        *Explainer
	reserved int64
}

// poolWaiter is a call waiting for admission, and what it was granted.
type poolWaiter struct {
	model Model // the call's, unwrapped (poolKey)
	want  int   // cores wanted
	bytes int64 // Options.Budget, or 0 for a share
	spare int64 // Options.Spare: memory it may also use when free
	ready chan struct{}
	lease poolLease
	err   error // admission failed (NewExplainer's error)
}

// poolLease is what one call holds while it runs.
type poolLease struct {
	p     *pooled
	cores int
	bytes int64
	spare int64 // granted of Options.Spare
}

// NewPool returns a Pool, or an error for options out of range.
func NewPool(opt PoolOptions) (*Pool, error) {
	if opt.Workers < 0 || opt.Budget < 0 || opt.MaxWaiting < 0 {
		return nil, fmt.Errorf("attrib: PoolOptions Workers %d, Budget %d and MaxWaiting %d must not be negative (0: the defaults)", opt.Workers, opt.Budget, opt.MaxWaiting)
	}
	if opt.Workers == 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	if opt.Budget == 0 {
		opt.Budget = DefaultBudget
	}
	return &Pool{cores: opt.Workers, budget: opt.Budget, maxWait: opt.MaxWaiting,
		freeCores: opt.Workers, freeBytes: opt.Budget}, nil
}

// poolKey is the engine's model of m, which the pool's Explainers of m
// share: a *cell.Model (a Wrapper's); NewExplainer's
// error for anything else.
func poolKey(m Model) (Model, error) {
	if w, ok := m.(Wrapper); ok && !isNilPointer(w) {
		if s := w.Stacked(); s != nil {
			return s, nil
		}
	}
	if k, ok := m.(*cell.Model); ok && k != nil {
		return k, nil
	}
	if _, err := NewExplainer(m); err != nil {
		return nil, err
	}
	return nil, unsupported(m, -1, "a Model of type %T", m)
}

// Attribute is Explainer.Attribute of model on one of the pool's
// Explainers, with Options.Workers and Budget set by the pool (see Pool);
// opt's own Workers, when set, bounds the cores the call takes.
func (p *Pool) Attribute(ctx context.Context, model Model, m Method, x cell.Input, opt Options, res *Result) error {
	l, opt, err := p.acquire(ctx, model, opt)
	if err != nil {
		return err
	}
	defer p.release(l)
	return l.p.e.Attribute(ctx, m, x, opt, res)
}

// AttributeAll is Explainer.AttributeAll on one of the pool's Explainers,
// as Attribute.
func (p *Pool) AttributeAll(ctx context.Context, model Model, m Method, x cell.Input, opt Options, res *MultiResult) error {
	l, opt, err := p.acquire(ctx, model, opt)
	if err != nil {
		return err
	}
	defer p.release(l)
	return l.p.e.AttributeAll(ctx, m, x, opt, res)
}

// Stats returns a snapshot of the pool's use.
func (p *Pool) Stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.Workers, s.Budget = p.cores, p.budget
	s.BusyWorkers = p.cores - p.freeCores
	s.ReservedBytes = p.budget - p.freeBytes
	s.Waiting, s.Idle = len(p.queue), len(p.idle)
	return s
}

// Release gives back the scratch of the pool's idle Explainers and ends
// their goroutines; running calls keep theirs until they return. The pool
// stays usable.
func (p *Pool) Release() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for len(p.idle) > 0 {
		if err := p.evict(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Close refuses new calls (ErrPoolClosed; waiting ones too), and releases
// the idle Explainers; running calls finish, and their Explainers are
// released as they return.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	for _, w := range p.queue {
		w.err = ErrPoolClosed
		close(w.ready)
	}
	p.queue = nil
	p.mu.Unlock()
	return p.Release()
}

// acquire admits a call: it returns its lease and opt with the lease's
// Workers and Budget.
func (p *Pool) acquire(ctx context.Context, model Model, opt Options) (poolLease, Options, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if p == nil {
		return poolLease{}, opt, fmt.Errorf("attrib: nil Pool")
	}
	if opt.Workers < 0 || opt.Budget < 0 || opt.Spare < 0 {
		return poolLease{}, opt, fmt.Errorf("attrib: Budget %d, Spare %d and Workers %d must not be negative (0: the defaults)", opt.Budget, opt.Spare, opt.Workers)
	}
	if opt.Workers > p.cores {
		return poolLease{}, opt, fmt.Errorf("attrib: Options.Workers %d is more than the pool's %d", opt.Workers, p.cores)
	}
	if opt.Budget > p.budget {
		return poolLease{}, opt, fmt.Errorf("attrib: %w", &cell.BudgetError{Budget: p.budget, Need: opt.Budget, What: "Options.Budget, more than the pool's budget"})
	}
	if err := ctx.Err(); err != nil {
		return poolLease{}, opt, fmt.Errorf("attrib: %w", err)
	}
	key, err := poolKey(model)
	if err != nil {
		return poolLease{}, opt, err
	}
	want := opt.Workers
	if want == 0 {
		want = p.cores
	}
	w := &poolWaiter{model: key, want: want, bytes: opt.Budget, spare: opt.Spare}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return poolLease{}, opt, ErrPoolClosed
	}
	if len(p.queue) == 0 {
		if ok, err := p.grant(w, 0); ok || err != nil {
			p.mu.Unlock()
			return p.admitted(w, opt, err)
		}
	}
	if p.maxWait > 0 && len(p.queue) >= p.maxWait {
		p.stats.Refused++
		p.mu.Unlock()
		return poolLease{}, opt, ErrPoolBusy
	}
	w.ready = make(chan struct{})
	p.queue = append(p.queue, w)
	p.mu.Unlock()

	select {
	case <-w.ready:
		return p.admitted(w, opt, w.err)
	case <-ctx.Done():
	}
	p.mu.Lock()
	select {
	case <-w.ready: // admitted meanwhile: give it back
		p.mu.Unlock()
		if w.err == nil {
			p.release(w.lease)
		}
	default:
		for i, q := range p.queue {
			if q == w {
				p.queue = append(p.queue[:i], p.queue[i+1:]...)
				break
			}
		}
		p.mu.Unlock()
	}
	return poolLease{}, opt, fmt.Errorf("attrib: waiting for the pool: %w", ctx.Err())
}

// admitted returns a granted waiter's lease and its options.
func (p *Pool) admitted(w *poolWaiter, opt Options, err error) (poolLease, Options, error) {
	if err != nil {
		return poolLease{}, opt, err
	}
	opt.Workers, opt.Budget, opt.Spare = w.lease.cores, w.lease.bytes, w.lease.spare
	return w.lease, opt, nil
}

// grant tries to admit w now, behind others calls still waiting (which
// leave a core each): true with w.lease set, false when a core or the
// memory is short. Called with p.mu held.
func (p *Pool) grant(w *poolWaiter, others int) (bool, error) {
	if p.freeCores < 1 {
		return false, nil
	}
	cores := min(w.want, max(1, p.freeCores-others))
	bytes := w.bytes
	if bytes == 0 {
		bytes = max(1, p.budget*int64(cores)/int64(p.cores))
	}
	var pe *pooled // the warmest idle Explainer of the model
	for i := len(p.idle) - 1; i >= 0; i-- {
		if p.idle[i].e.model == w.model {
			pe = p.idle[i]
			p.idle = append(p.idle[:i], p.idle[i+1:]...)
			break
		}
	}
	if pe != nil && pe.reserved > bytes {
		// Its scratch was sized for a larger share (a call that had more
		// cores): keeping it reserved would hold memory the other calls
		// wait for, so it goes, and the call sizes its own.
		p.freeBytes += pe.reserved
		pe.reserved = 0
		if err := pe.e.Release(); err != nil {
			return false, err
		}
	}
	extra := bytes
	if pe != nil {
		extra = bytes - pe.reserved
	}
	for p.freeBytes < extra && len(p.idle) > 0 {
		if err := p.evict(); err != nil {
			return false, err
		}
	}
	if p.freeBytes < extra {
		if pe != nil {
			p.idle = append(p.idle, pe)
		}
		return false, nil
	}
	// Alone (no call waits behind it), the call may also use the memory
	// it asks as Spare, as far as it is free (the idle Explainers' scratch
	// given back for it): the share of the cores it borrows.
	spare := int64(0)
	if others == 0 && w.spare > 0 {
		for p.freeBytes-extra < w.spare && len(p.idle) > 0 {
			if err := p.evict(); err != nil {
				return false, err
			}
		}
		spare = min(w.spare, p.freeBytes-extra)
	}
	if pe == nil {
		e, err := NewExplainer(w.model)
		if err != nil {
			return false, err
		}
		pe = &pooled{e: e}
	}
	p.freeBytes -= extra + spare
	pe.reserved += extra + spare
	p.freeCores -= cores
	p.stats.Running++
	p.stats.Calls++
	w.lease = poolLease{p: pe, cores: cores, bytes: bytes, spare: spare}
	return true, nil
}

// evict releases the oldest idle Explainer and frees its memory. Called
// with p.mu held and p.idle not empty.
func (p *Pool) evict() error {
	pe := p.idle[0]
	p.idle = p.idle[1:]
	p.freeBytes += pe.reserved
	pe.reserved = 0
	return pe.e.Release()
}

// release ends a call: its cores and Explainer go back to the pool, and
// the calls waiting are admitted in order while they fit.
func (p *Pool) release(l poolLease) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.freeCores += l.cores
	p.stats.Running--
	if p.closed {
		p.freeBytes += l.p.reserved
		l.p.reserved = 0
		l.p.e.Release()
	} else {
		p.idle = append(p.idle, l.p)
		if len(p.idle) > p.cores { // the oldest, of a model not called lately
			p.evict()
		}
	}
	for len(p.queue) > 0 {
		w := p.queue[0]
		ok, err := p.grant(w, len(p.queue)-1)
		if !ok && err == nil {
			break
		}
		w.err = err
		p.queue = p.queue[1:]
		close(w.ready)
	}
}
