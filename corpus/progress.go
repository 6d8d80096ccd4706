package corpus

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Progress draws a progress line on standard error when that is a
// terminal and the run has lasted more than a second: the steps done of
// those started (Callback: IG steps, occluded positions) and the inputs
// finished, or a stage and its jobs done (Set). A nil *Progress draws
// nothing; its Printf still prints.
type Progress struct {
	w      io.Writer // nil: no bar
	start  time.Time
	mu     sync.Mutex // guards drawing, stage and stderr
	drawn  bool
	stage  string
	done   atomic.Int64
	total  atomic.Int64
	items  atomic.Int64
	stop   chan struct{}
	closed sync.Once
}

const progressDelay = time.Second

// NewProgress returns the Progress of a run: one that draws nothing
// unless stderr is a terminal.
func NewProgress(stderr io.Writer) *Progress {
	p := &Progress{}
	f, ok := stderr.(*os.File)
	if !ok || !isTerminal(f) {
		return p
	}
	p.w, p.start, p.stop = f, time.Now(), make(chan struct{})
	go p.loop()
	return p
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Callback returns an attrib.Options.Progress for one input.
func (p *Progress) Callback() func(done, total int) {
	if p == nil || p.w == nil {
		return nil
	}
	last := -1
	return func(done, total int) {
		if last < 0 {
			p.total.Add(int64(total))
			last = 0
		}
		p.done.Add(int64(done - last))
		last = done
	}
}

// Set reports absolute progress within a named stage.
func (p *Progress) Set(stage string, done, total int) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	p.stage = stage
	p.mu.Unlock()
	p.done.Store(int64(done))
	p.total.Store(int64(total))
}

// ItemDone counts one input done.
func (p *Progress) ItemDone() {
	if p != nil && p.w != nil {
		p.items.Add(1)
	}
}

func (p *Progress) loop() {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			if time.Since(p.start) >= progressDelay {
				p.draw()
			}
		}
	}
}

func (p *Progress) draw() {
	done, total, items := p.done.Load(), p.total.Load(), p.items.Load()
	const width = 30
	frac := 0.0
	if total > 0 {
		frac = float64(done) / float64(total)
	}
	n := int(frac * width)
	p.mu.Lock()
	defer p.mu.Unlock()
	what := fmt.Sprintf("%d input(s) done", items)
	if p.stage != "" {
		what = p.stage
	}
	line := fmt.Sprintf("\r[%s%s] %3.0f%% %d/%d · %s · %s\x1b[K",
		strings.Repeat("=", n), strings.Repeat(" ", width-n), 100*frac, done, total, what,
		time.Since(p.start).Round(100*time.Millisecond))
	select {
	case <-p.stop:
		return
	default:
	}
	io.WriteString(p.w, line)
	p.drawn = true
}

// Printf writes to w (standard error) with the bar line cleared first.
func (p *Progress) Printf(w io.Writer, format string, args ...any) {
	if p == nil {
		fmt.Fprintf(w, format, args...)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
	fmt.Fprintf(w, format, args...)
}

func (p *Progress) clearLocked() {
	if p.drawn {
		io.WriteString(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

// Finish stops the bar and clears its line; it may be called again.
func (p *Progress) Finish() {
	if p == nil || p.w == nil {
		return
	}
	p.closed.Do(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		close(p.stop)
		p.clearLocked()
	})
}
