// Package regfile checks that a path names a regular file before it is
// opened: opening a named pipe with no writer blocks forever, and a device
// such as /dev/zero never ends. Every file flag of the command (-model,
// -vocab, -classes, -data, -scores, -dfa, and -verify) and tensorfile.Open
// use Check, so that they refuse the same paths with the same message.
package regfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Check returns nil if path is a regular file (after symbolic links), else
// an error naming the path and what it is: "x: a named pipe, not a regular
// file", or os.Stat's error (which names the path) when it cannot be read.
func Check(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st.Mode().IsRegular() {
		return nil
	}
	return &NotRegularError{Path: path, Kind: kind(st.Mode())}
}

// NotRegularError is Check's error for a path that exists but is not a
// regular file.
type NotRegularError struct {
	Path string
	Kind string // "a directory", "a named pipe", "a socket", "a device", "a special file"
}

func (e *NotRegularError) Error() string { return e.Path + ": " + e.Kind + ", not a regular file" }

// Flag is Check for the value of a command-line flag: its error starts
// with the flag's name and the path: "-vocab x: a directory, not a regular
// file", "-vocab x: no such file or directory".
func Flag(flag, path string) error {
	err := Check(path)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s %s: %w", flag, path, pe.Err)
	}
	if err != nil {
		return fmt.Errorf("%s %w", flag, err)
	}
	return nil
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}
