// Package visible shows text that comes from files and inputs (tensor and
// node names, tokens, class names) on a terminal or in a document: control
// and other non-printable characters escaped, so that such text can neither
// break the line structure of a message nor send escape sequences to the
// terminal. The heatmaps (heatmap.Visible), inspect's listing and the
// messages that name a model's parts share it.
package visible

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// String replaces control and other non-printable characters (and invalid
// UTF-8) by Go escape sequences (a newline becomes `\n`, ESC `\x1b`, the C1
// control U+0085 `\u0085`); printable text, spaces included, is unchanged.
// Its result holds no byte below 0x20, no 0x7f and no C1 control.
func String(s string) string {
	if printable(s) {
		return s // the common case: no copy
	}
	var b strings.Builder
	for i, r := range s {
		if r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD") {
			fmt.Fprintf(&b, `\x%02x`, s[i]) // an invalid byte, shown as it is
		} else if unicode.IsPrint(r) {
			b.WriteRune(r)
		} else {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
	}
	return b.String()
}

// printable reports whether String would leave s as it is.
func printable(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD") || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// Quote is s quoted for a message (strconv.Quote: escaped as String
// escapes it, and quotes and backslashes too), whole when it has at most
// 40 bytes, else its first 40 bytes (at a character boundary), "…" and
// its length: a value of a megabyte from a file is not echoed whole.
func Quote(s string) string { return QuoteN(s, 40) }

// QuoteN is Quote with at most most bytes shown.
func QuoteN(s string, most int) string {
	if len(s) <= most {
		return strconv.Quote(s)
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:cut]), len(s))
}
