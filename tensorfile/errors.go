package tensorfile

import (
	"errors"
	"fmt"
)

// The kinds of error. Every error returned by this package is an *Error
// that wraps exactly one of them, so errors.Is(err, ErrFormat) and the
// like tell what went wrong without parsing messages.
var (
	// ErrFormat means the file is malformed: truncated, corrupt, or
	// inconsistent with itself.
	ErrFormat = errors.New("malformed file")
	// ErrUnsupported means the file is well formed but holds something
	// this package does not read: a whole pickled model, a global outside
	// the allow-list, an unknown dtype, a TorchScript archive.
	ErrUnsupported = errors.New("unsupported content")
	// ErrLimit means the file asks for more than the Options allow.
	ErrLimit = errors.New("limit exceeded")
)

// Error is the error type of this package.
type Error struct {
	File   string // the path given to Open, or the name given to Read
	Tensor string // the tensor involved, or "" when none is
	Msg    string // the problem
	Kind   error  // ErrFormat, ErrUnsupported or ErrLimit
	Err    error  // an underlying error (an I/O error, say), or nil
}

// Error formats the error as
// `tensorfile: FILE: tensor "NAME": PROBLEM[: UNDERLYING]`.
func (e *Error) Error() string {
	s := "tensorfile: " + e.File + ": "
	if e.Tensor != "" {
		s += fmt.Sprintf("tensor %q: ", e.Tensor)
	}
	s += e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the kind and the underlying error, if any.
func (e *Error) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Kind, e.Err}
	}
	return []error{e.Kind}
}

// ctx carries what every error needs to say, and the limits in force.
type ctx struct {
	file string
	opt  Options
}

func (c *ctx) errf(kind error, format string, args ...any) *Error {
	return &Error{File: c.file, Msg: fmt.Sprintf(format, args...), Kind: kind}
}

func (c *ctx) terrf(kind error, tensor, format string, args ...any) *Error {
	return &Error{File: c.file, Tensor: tensor, Msg: fmt.Sprintf(format, args...), Kind: kind}
}

// ioErr wraps an I/O error met while reading what.
func (c *ctx) ioErr(err error, what string) *Error {
	return &Error{File: c.file, Msg: "reading " + what, Kind: ErrFormat, Err: err}
}
