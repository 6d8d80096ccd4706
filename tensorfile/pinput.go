package tensorfile

import (
	"errors"
	"io"
)

// pinput reads a pickle from [pos, end) of an io.ReaderAt through a
// window, so that a pickle at the start of a large legacy file is read
// without reading the file.
type pinput struct {
	r        io.ReaderAt
	pos, end int64
	win      []byte // the bytes at [winAt, winAt+len(win))
	winAt    int64
}

const windowSize = 64 << 10

var errLongLine = errors.New("line too long")

func newPInput(r io.ReaderAt, pos, end int64) *pinput {
	return &pinput{r: r, pos: pos, end: end}
}

func (p *pinput) remaining() int64 { return p.end - p.pos }

// fill makes the window hold [p.pos, p.pos+n) (n ≤ windowSize and
// n ≤ remaining).
func (p *pinput) fill(n int64) error {
	if p.pos >= p.winAt && p.pos+n <= p.winAt+int64(len(p.win)) {
		return nil
	}
	m := min(int64(windowSize), p.end-p.pos)
	if int64(cap(p.win)) < m {
		p.win = make([]byte, m)
	}
	p.win = p.win[:m]
	p.winAt = p.pos
	k, err := p.r.ReadAt(p.win, p.pos)
	if int64(k) < n {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		p.win = p.win[:0]
		return err
	}
	p.win = p.win[:k]
	return nil
}

func (p *pinput) byte() (byte, error) {
	if p.pos >= p.end {
		return 0, io.EOF
	}
	if err := p.fill(1); err != nil {
		return 0, err
	}
	b := p.win[p.pos-p.winAt]
	p.pos++
	return b, nil
}

// next returns the next n bytes, valid until the next call. n must have
// been checked against remaining() by the caller when it comes from the
// file; next checks it again.
func (p *pinput) next(n int64) ([]byte, error) {
	if n < 0 || n > p.end-p.pos {
		return nil, io.ErrUnexpectedEOF
	}
	if n <= windowSize {
		if err := p.fill(n); err != nil {
			return nil, err
		}
		b := p.win[p.pos-p.winAt : p.pos-p.winAt+n]
		p.pos += n
		return b, nil
	}
	b := make([]byte, n)
	if _, err := p.r.ReadAt(b, p.pos); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	p.pos += n
	return b, nil
}

// line returns the bytes up to the next '\n' (excluded), at most max.
func (p *pinput) line(max int) ([]byte, error) {
	var out []byte
	for {
		b, err := p.byte()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if b == '\n' {
			return out, nil
		}
		if len(out) >= max {
			return nil, errLongLine
		}
		out = append(out, b)
	}
}
