package main

import (
	"fmt"
	"io"
)

// shownWarnings is how many inputs' IG completeness warnings a run prints
// one by one; the others are counted in one line at the end.
const shownWarnings = 3

// warnings counts the warnings of a run, as the writer meets the inputs in
// order: IG's completeness gap and a pad inside an input (-pad; each
// shown for the first few inputs, then counted) and a white-box network's
// wrong predictions (one line at the end, with the count and the first
// input).
type warnings struct {
	scored     int    // inputs scored
	gaps       int    // inputs whose IG gap exceeded -tol
	pads       int    // inputs with a pad id inside them
	wrong      int    // inputs whose prediction is not the task's answer
	firstWrong string // the first of them, in words
}

// add counts the warnings of a scored item and returns the lines to print
// now, or "".
func (w *warnings) add(it *item) string {
	w.scored++
	if it.wrong != "" {
		if w.wrong++; w.wrong == 1 {
			w.firstWrong = fmt.Sprintf("%s%s: %s", it.where, quoteInput(it.input), it.wrong)
		}
	}
	lines := ""
	if it.padWarn != "" {
		if w.pads++; w.pads <= shownWarnings {
			lines += fmt.Sprintf("whitebox attribute: %s%s: warning: %s\n", it.where, quoteInput(it.input), it.padWarn)
		}
	}
	if it.warn != "" {
		if w.gaps++; w.gaps <= shownWarnings {
			lines += fmt.Sprintf("whitebox attribute: %s%s: warning: %s\n", it.where, quoteInput(it.input), it.warn)
		}
	}
	return lines
}

// summarize prints the counts: IG's gap and the pads when some warnings
// were not shown, the wrong predictions whenever there were any.
func (w *warnings) summarize(out io.Writer) {
	if w.pads > shownWarnings {
		fmt.Fprintf(out, "whitebox attribute: warning: a pad id inside the input, followed by other tokens, on %d of %d inputs (the first %d shown above): -pad removes trailing pads only, as pack_padded_sequence does, and these run as tokens\n",
			w.pads, w.scored, shownWarnings)
	}
	if w.gaps > shownWarnings {
		fmt.Fprintf(out, "whitebox attribute: warning: IG's completeness gap exceeds -tol on %d of %d inputs (the first %d shown above; each record's \"delta\" is its gap; raise -steps or use -steps auto)\n",
			w.gaps, w.scored, shownWarnings)
	}
	if w.wrong > 0 {
		fmt.Fprintf(out, "whitebox attribute: warning: the network's prediction is not the task's true answer on %d of %d inputs (their records say \"correct\":false; the first: %s); see -m and -k in whitebox help attribute for the lengths and depths each network gets right\n",
			w.wrong, w.scored, w.firstWrong)
	}
}
