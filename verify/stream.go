package verify

import (
	"fmt"
	"io"
	"os"

	"github.com/whitebox-lstm/whitebox/model"
)

// A source is the cases of a verify file, run through a model once for
// each head tried: in memory (Parse's), or a File read again for each.
type source interface {
	// each calls fn with every case in order; the case is fn's until it
	// returns.
	each(fn func(c *Case) error) error
	len() int
	// budget bounds the memory of one case's forward pass (0: none).
	budget() int64
}

// caseList is cases in memory.
type caseList []Case

func (l caseList) each(fn func(c *Case) error) error {
	for i := range l {
		if err := fn(&l[i]); err != nil {
			return err
		}
	}
	return nil
}
func (l caseList) len() int      { return len(l) }
func (l caseList) budget() int64 { return 0 }

// File is a verify file read one line at a time: Open checks every line
// as Parse does, and each pass over it (Check, All, Apply, Report: one
// per head tried) reads it again. Its memory is one line, its case and
// that case's forward pass, within the budget given to Open, whatever
// the number of lines (up to MaxLines; Parse keeps them all). A File is
// for one goroutine at a time.
type File struct {
	f      *os.File
	s      scanner
	n      int
	limit  int64
	closed bool
}

// Open opens the verify file at path for a model of vocab tokens and
// classes classes and checks every line (the errors of ReadFile), keeping
// none. budget bounds what one line may take (0: no bound): reading it
// (a line longer than budget/40 bytes is refused) and running it through
// the model (its rows and the forward pass's trace, checked before each
// pass over it); either refusal names the budget. Close the File when done.
func Open(path string, vocab, classes int, budget int64) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("verify: %v", err)
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("verify %s: not a regular file", path)
	}
	vf := &File{f: f, limit: max(budget, 0),
		s: scanner{name: path, vocab: vocab, classes: classes, lineMax: lineLimit(budget), budget: budget}}
	if vf.n, err = vf.s.scan(f, nil); err != nil {
		f.Close()
		return nil, err
	}
	return vf, nil
}

// Close closes the file.
func (f *File) Close() error {
	if f == nil || f.closed {
		return nil
	}
	f.closed = true
	return f.f.Close()
}

// Len is the number of lines with an input.
func (f *File) Len() int { return f.n }

func (f *File) len() int      { return f.n }
func (f *File) budget() int64 { return f.limit }

// each reads the file again from its start. A file changed since Open is
// read as it is now, with the same checks.
func (f *File) each(fn func(c *Case) error) error {
	if f.closed {
		return fmt.Errorf("%s: closed", f.s.name)
	}
	if _, err := f.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("%s: %v", f.s.name, err)
	}
	_, err := f.s.scan(f.f, fn)
	return err
}

// Check is the package's Check on the file's cases.
func (f *File) Check(m *model.Model) (Verdict, error) { return check(m, f) }

// All is the package's All on the file's cases.
func (f *File) All(m *model.Model) ([]Verdict, error) { return verdicts(m, f) }

// Apply is the package's Apply on the file's cases, named by its path in
// the messages.
func (f *File) Apply(m *model.Model, auto, fixAct bool) (*model.Model, error) {
	return apply(m, f, f.s.name, auto, fixAct)
}

// Report is the package's Report on the file's cases.
func (f *File) Report(m *model.Model) (string, error) { return report(m, f) }
