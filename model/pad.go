package model

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/whitebox-lstm/whitebox/internal/visible"
	"github.com/whitebox-lstm/whitebox/tensorfile"
)

// PadMetadataKey is the safetensors __metadata__ key that records a
// model's padding token id: a decimal integer (see ParsePad).
const PadMetadataKey = "whitebox.pad"

// NoPad, as *Options.Pad, says that the model has no padding token,
// whatever the file's metadata says.
const NoPad = -1

// ParsePad reads a pad id as PadMetadataKey holds it: a decimal integer
// ≥ 0 without sign, spaces or leading zeros ("0", "1", "30522").
func ParsePad(s string) (int, error) {
	// strconv.Atoi alone would take "+1", "-0" and "007": the metadata
	// holds one spelling of each id.
	if s == "" || len(s) > 18 || strings.TrimLeft(s, "0123456789") != "" || len(s) > 1 && s[0] == '0' {
		return 0, fmt.Errorf("pad id %s: want a token id, a decimal integer ≥ 0", visible.Quote(s))
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("pad id %s: %v", visible.Quote(s), err)
	}
	return n, nil
}

// resolvePad sets m's pad id: o's (NoPad for none), else the
// file's metadata's (f nil: none), else none. It must be a row of the
// embedding.
func (m *Model) resolvePad(f *tensorfile.File, o Options) error {
	pad, from := NoPad, ""
	if f != nil {
		if v, ok := f.Metadata[PadMetadataKey]; ok {
			p, err := ParsePad(v)
			if err != nil {
				return fmt.Errorf("safetensors metadata %q: %w", PadMetadataKey, err)
			}
			pad, from = p, fmt.Sprintf("the file's metadata %q", PadMetadataKey)
		}
	}
	if o.Pad != nil { // an explicit value, NoPad included, is never the metadata's
		if *o.Pad < NoPad {
			return fmt.Errorf("Options.Pad %d: a token id ≥ 0, or NoPad (-1) for none", *o.Pad)
		}
		pad, from = *o.Pad, "Options.Pad"
	}
	if pad == NoPad {
		return nil
	}
	if m.Embedding == nil {
		return fmt.Errorf("pad id %d (%s): the model reads features, not token ids, and has no pad token", pad, from)
	}
	if pad >= m.Vocab {
		return fmt.Errorf("pad id %d (%s) is out of range [0, %d)", pad, from, m.Vocab)
	}
	m.Pad, m.HasPad = pad, true
	return nil
}

// Unpadded returns the length of ids before its trailing pad tokens: the
// length pack_padded_sequence runs the model on, the rows Embed returns.
// Without a pad id (HasPad false) it is len(ids). Ids that are all pad
// tokens are an error: a packed sequence has at least one step.
func (m *Model) Unpadded(ids []int) (int, error) {
	n := len(ids)
	if m == nil || !m.HasPad {
		return n, nil
	}
	for n > 0 && ids[n-1] == m.Pad {
		n--
	}
	if n == 0 && len(ids) > 0 {
		return 0, fmt.Errorf("model: all %d tokens are the pad id %d: nothing to run (pack_padded_sequence needs a length of at least 1)", len(ids), m.Pad)
	}
	return n, nil
}

// InnerPads counts the pad tokens of ids before its last token that is not
// one — pads pack_padded_sequence does not remove, which the model runs as
// tokens (their embedding row) — and returns the position of the first
// (−1: none).
func (m *Model) InnerPads(ids []int) (count, first int) {
	first = -1
	if m == nil || !m.HasPad {
		return 0, first
	}
	n, _ := m.Unpadded(ids)
	for t, id := range ids[:n] {
		if id == m.Pad {
			if count++; count == 1 {
				first = t
			}
		}
	}
	return count, first
}
