package verify

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// scanner reads the lines of a verify file one at a time, into one Case
// whose slices it reuses: its memory is one line's, whatever the number
// of lines.
type scanner struct {
	name           string // the file, for messages
	vocab, classes int
	// lineMax is the longest line read: MaxLineBytes, or less where a
	// budget allows less (lineLimit).
	lineMax int
	budget  int64  // the budget that set lineMax, for its message (0: none)
	buf     []byte // the line
	long    int    // the length of a line longer than lineMax
	c       Case
}

// scan calls fn (if not nil) with every case of r in order, after the
// checks of Parse, with its errors; the case is fn's until it returns. It
// returns the number of cases.
func (s *scanner) scan(r io.Reader, fn func(c *Case) error) (int, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	n, tokens := 0, 0
	for line := 1; ; line++ {
		b, err := s.readLine(br)
		if errors.Is(err, errLong) {
			return 0, s.longError(line)
		}
		if err != nil && err != io.EOF {
			return 0, fmt.Errorf("%s: %v", s.name, err)
		}
		if len(bytes.TrimSpace(b)) > 0 {
			if n == MaxLines {
				return 0, fmt.Errorf("%s:%d: more than %d lines", s.name, line, MaxLines)
			}
			if !s.parseFast(b) {
				c, perr := parseLine(b, s.vocab, s.classes)
				if perr != nil {
					return 0, fmt.Errorf("%s:%d: %v", s.name, line, perr)
				}
				s.c = c
			}
			if tokens += len(s.c.IDs); tokens > MaxTokens {
				return 0, fmt.Errorf("%s:%d: more than %d token ids in all", s.name, line, MaxTokens)
			}
			s.c.Line = line
			n++
			if fn != nil {
				if err := fn(&s.c); err != nil {
					return 0, err
				}
			}
		}
		if err == io.EOF {
			break
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("%s: no lines: each line is {\"ids\": [...], \"logits\": [...]}", s.name)
	}
	return n, nil
}

// readLine returns the next line without its newline, at most lineMax
// bytes, in s.buf; io.EOF with the last line. A longer line is errLong,
// with its length in s.long; under a budget's lineMax the rest of it is
// read, not kept, up to MaxLineBytes+1, to tell the budget's bound from
// the file's.
func (s *scanner) readLine(br *bufio.Reader) ([]byte, error) {
	b, n := s.buf[:0], 0 // n: the line's bytes so far, its newline included
	defer func() { s.buf = b[:0] }()
	for {
		chunk, err := br.ReadSlice('\n')
		n += len(chunk)
		if n <= s.lineMax+1 {
			b = append(b, chunk...)
		}
		if err == bufio.ErrBufferFull {
			if n > s.lineMax+1 && (s.lineMax == MaxLineBytes || n > MaxLineBytes+1) {
				s.long = n
				return nil, errLong
			}
			continue
		}
		if size := n - len(chunk) + len(bytes.TrimSuffix(chunk, []byte("\n"))); size > s.lineMax {
			s.long = size
			return nil, errLong
		}
		if err == nil {
			return bytes.TrimRight(b, "\r\n"), nil
		}
		return b, err
	}
}

// longError is the error of line line, longer than s.lineMax: the
// budget's bound, or past MaxLineBytes the file's.
func (s *scanner) longError(line int) error {
	if s.long <= MaxLineBytes {
		return fmt.Errorf("%s:%d: the line has %d bytes, more than the %d that verify.Open's budget %d allows a line (reading one takes up to %d times its size): raise verify.Open's budget", s.name, line, s.long, s.lineMax, s.budget, lineCost)
	}
	return fmt.Errorf("%s:%d: the line is longer than %d bytes", s.name, line, MaxLineBytes)
}

// lineCost bounds the memory of reading a line, relative to its size:
// parseLine keeps each value of the line as a json.RawMessage (a slice
// and a copy: 32 bytes or more for each number of 2 bytes or more), its
// ids as ints, and the line twice.
const lineCost = 40

// lineLimit is the longest line a budget allows (MaxLineBytes for none).
func lineLimit(budget int64) int {
	if budget <= 0 || budget/lineCost >= MaxLineBytes {
		return MaxLineBytes
	}
	return int(max(1, budget/lineCost))
}

// parseFast reads the usual line, {"ids": [...], "logits": [...]} (in
// either order) of integer ids in range and C numbers, nothing else,
// into s.c without allocating. It reports false for any other line, and
// for one parseLine refuses: parseLine then reads it, with its messages.
// What it reads is what parseLine reads (strconv, as encoding/json).
func (s *scanner) parseFast(b []byte) bool {
	p := 0
	space := func() {
		for p < len(b) && (b[p] == ' ' || b[p] == '\t' || b[p] == '\r' || b[p] == '\n') {
			p++
		}
	}
	ids, logits := s.c.IDs[:0], s.c.Logits[:0]
	seenIDs, seenLogits := false, false
	space()
	if p == len(b) || b[p] != '{' {
		return false
	}
	p++
	for {
		space()
		var isIDs bool
		switch {
		case bytes.HasPrefix(b[p:], []byte(`"ids"`)) && !seenIDs:
			isIDs, seenIDs, p = true, true, p+len(`"ids"`)
		case bytes.HasPrefix(b[p:], []byte(`"logits"`)) && !seenLogits:
			seenLogits, p = true, p+len(`"logits"`)
		default:
			return false
		}
		space()
		if p == len(b) || b[p] != ':' {
			return false
		}
		p++
		space()
		if p == len(b) || b[p] != '[' {
			return false
		}
		p++
		for {
			space()
			start := p
			integer, ok := scanNumber(b, &p)
			if !ok {
				return false
			}
			// The string conversions do not escape: no allocation.
			if isIDs {
				id, err := strconv.ParseInt(string(b[start:p]), 10, 64)
				if !integer || err != nil || id < 0 || id >= int64(s.vocab) {
					return false
				}
				ids = append(ids, int(id))
			} else {
				v, err := strconv.ParseFloat(string(b[start:p]), 64)
				if err != nil {
					return false
				}
				logits = append(logits, v)
			}
			space()
			if p == len(b) {
				return false
			}
			p++
			if b[p-1] == ']' {
				break
			}
			if b[p-1] != ',' {
				return false
			}
		}
		space()
		if p == len(b) {
			return false
		}
		p++
		if b[p-1] == '}' {
			break
		}
		if b[p-1] != ',' {
			return false
		}
	}
	space()
	if p != len(b) || !seenIDs || !seenLogits || len(logits) != s.classes {
		return false
	}
	s.c.IDs, s.c.Logits = ids, logits
	return true
}

// scanNumber moves *p past a JSON number in b, -?(0|[1-9][0-9]*)(.[0-9]+)?
// ([eE][+-]?[0-9]+)?, and reports whether it is one, and an integer (no
// fraction, no exponent).
func scanNumber(b []byte, p *int) (integer, ok bool) {
	i := *p
	digits := func() int {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i - j
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return false, false
	}
	integer = true
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false, false
		}
		integer = false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false, false
		}
		integer = false
	}
	*p = i
	return integer, true
}
