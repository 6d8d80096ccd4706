package score

import "strings"

// flagNames turns the Go options that the library's messages name into
// attribute's flags, for the command line's messages.
var flagNames = strings.NewReplacer(
	"Names.Embedding = NoEmbedding", "-embedding none",
	"Names.Embedding", "-embedding",
	"Names.LSTM", "-lstm",
	"Names.Decoder", "-decoder",
	"the stack size, Config.K", "-k",
	"Options.Steps = AutoSteps", "-steps auto",
	"Options.MaxAutoSteps", "-max-steps",
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
