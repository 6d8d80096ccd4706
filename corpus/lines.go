package corpus

import (
	"bufio"
	"bytes"
	"io"
)

// EachLine calls fn with each line of r (without its newline) and its
// number (from 1), until fn returns false. A line longer than most bytes
// is not kept whole: fn gets its first most bytes and its length in long
// (0 for the other lines), so that no line drives an allocation past
// most. A last line without a newline counts; an empty end does not. The
// error returned is r's.
func EachLine(r io.Reader, most int, fn func(line int, s string, long int64) bool) error {
	most = max(most, 0)
	br := bufio.NewReaderSize(r, 64*1024)
	var buf []byte
	for line := 1; ; line++ {
		buf = buf[:0]
		var n int64
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			chunk = bytes.TrimSuffix(chunk, []byte{'\n'})
			n += int64(len(chunk))
			if room := most - len(buf); room > 0 {
				buf = append(buf, chunk[:min(len(chunk), room)]...)
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if err != nil && err != io.EOF {
			return err
		}
		if n > 0 || err == nil {
			long := int64(0)
			if n > int64(most) {
				long = n
			}
			if !fn(line, string(buf), long) {
				return nil
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}
