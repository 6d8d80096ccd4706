package score

import (
	"fmt"
	"strings"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// flagNames turns the Go options that the library's messages name into
// attribute's flags, for the command line's messages.
var flagNames = strings.NewReplacer(
	"Names.Embedding = NoEmbedding", "-embedding none",
	"Names.Embedding", "-embedding",
	"Names.LSTM", "-lstm",
	"Names.Decoder", "-decoder",
	"Names.Attention", "-attention",
	"the stack size, Config.K", "-k",
	"Options.Steps = AutoSteps", "-steps auto",
	"Options.MaxAutoSteps", "-max-steps",
	// model's and verify's head and activation ("Options.Head = max with
	// Options.Act = relu": -head max -act relu), and verify's budget.
	"Options.Head = ", "-head ",
	" with Options.Act = ", " -act ",
	"Options.Head", "-head",
	"Options.Act", "-act",
	"verify.Open's budget", "-budget",
	"Options.Pad", "-pad",
)

// flagError is a library error whose message names attribute's flags
// instead of the Go options; errors.Is and errors.As see the original.
type flagError struct {
	msg string
	err error
}

func (e *flagError) Error() string { return e.msg }
func (e *flagError) Unwrap() error { return e.err }

// withFlags returns err with its message in attribute's terms (nil for
// nil).
func withFlags(err error) error {
	if err == nil {
		return nil
	}
	msg := flagNames.Replace(err.Error())
	if msg == err.Error() {
		return err
	}
	return &flagError{msg, err}
}

// valueHints say what each string flag of attribute takes, for the error
// of an explicit empty value (EmptyValue).
var valueHints = map[string]string{
	"net":        orList(whitebox.Names()),
	"method":     orList(methodNames()),
	"span":       "i:j, two token positions counted from 0 (e.g. 2:4)",
	"class":      "a class by name or by index from 0, or all",
	"steps":      fmt.Sprintf("a number of steps, 1 … %d, or auto", attrib.MaxSteps),
	"quadrature": orList(quadratureNames()),
	"budget":     "a size such as 256MiB or 1GiB",
	"model":      "a .pt, .safetensors or .onnx file",
	"embedding":  "the embedding's name in the file (whitebox inspect shows it), or none",
	"lstm":       "the LSTM's name in the file (whitebox inspect shows it)",
	"decoder":    "the decoder's name in the file (whitebox inspect shows it)",
	"attention":  "the attention head's scoring layers' name in the file (whitebox inspect shows it)",
	"vocab":      "a file of one token per line",
	"unk":        "a token of the -vocab file",
	"classes":    "a file of one class name per line",
	"head":       "hn, hn-bf, last, mean, max, attention or auto",
	"act":        "relu or tanh",
	"verify":     `a file of JSON lines {"ids": [...], "logits": [...]}`,
	"baseline":   "zero or id:N (the embedding row of token N)",
	"pad":        "a token id (the padding id, e.g. 0) or none",
}

// ValueHint says what attribute's string flag name takes ("" for a name
// that is none of them).
func ValueHint(name string) string { return valueHints[name] }

// EmptyValue is the error of flag name given an explicit empty value
// (-head ""): an explicit value is used as given or refused, never
// replaced by the default, and no flag takes "" as a value.
func EmptyValue(name, hint string) error {
	if hint == "" {
		hint = "a value"
	}
	return fmt.Errorf("-%s: empty; give %s", name, hint)
}

// stringFlags are c's string flags and their values, in a fixed order.
func (c *Config) stringFlags() [][2]string {
	return [][2]string{{"net", c.Net}, {"model", c.Model}, {"method", c.Method}, {"span", c.Span}, {"class", c.Class},
		{"steps", c.Steps}, {"quadrature", c.Quadrature}, {"budget", c.Budget}, {"embedding", c.Embedding},
		{"lstm", c.LSTM}, {"decoder", c.Decoder}, {"attention", c.Attention}, {"vocab", c.Vocab}, {"unk", c.Unk}, {"classes", c.Classes},
		{"head", c.Head}, {"act", c.Act}, {"verify", c.Verify}, {"baseline", c.Baseline}, {"pad", c.Pad}}
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func methodNames() []string {
	var n []string
	for _, m := range attrib.AllMethods() {
		n = append(n, m.String())
	}
	return n
}

func quadratureNames() []string {
	var n []string
	for q := attrib.GaussLegendre; q <= attrib.RiemannTrapezoid; q++ {
		n = append(n, q.String())
	}
	return n
}
