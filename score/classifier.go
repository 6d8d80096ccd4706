package score

import (
	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/model"
)

// ClassifierInfo describes a loaded classifier, for a service's model
// metadata.
type ClassifierInfo struct {
	// Net is the white-box network's name, "" for an imported model.
	Net string
	// Model is the imported model's file as given (the records' "model"),
	// "" for a network.
	Model string
	// Layers is the kind of the recurrent layers: "lstm" or "gru".
	Layers string
	// Bidirectional says whether the layers run both ways.
	Bidirectional bool
	// Head is an imported model's head spec as the records give it ("hn",
	// "mean+relu"), "" for a network; HeadSource says where it came from:
	// "options" (-head), "metadata" (the file's), "default" (nothing said:
	// hn assumed), "graph" (ONNX), "verified" (-verify's logits).
	Head, HeadSource string
	// Classes are the class names, in logit order.
	Classes []string
	// Vocab is the vocabulary size (the embedding's rows; a network's
	// alphabet), 0 for a model that reads feature rows; Features is the
	// width of a feature row (the input of the first layer).
	Vocab, Features int
	// Words says whether inputs are words (-vocab) rather than token ids.
	Words bool
	// Alphabet is a network's input symbols, nil for a model.
	Alphabet []string
}

// Info describes the classifier.
func (c *Classifier) Info() ClassifierInfo {
	in := ClassifierInfo{Layers: cell.LayerLSTM.String(), Classes: c.subj.classes()}
	switch s := c.subj.(type) {
	case whiteboxSubject:
		in.Net = s.net.Name
		in.Alphabet = s.net.Task.Alphabet
		in.Vocab = len(s.net.Task.Alphabet)
		in.Features = s.net.Model.Input()
	case *modelSubject:
		in.Model = s.name
		in.Head, in.HeadSource = model.HeadSpec(s.m.Head, s.m.Act), s.m.HeadSource
		in.Vocab, in.Features, in.Words = s.m.Vocab, s.m.Input(), s.vocab != nil
		in.Layers = s.m.Net.Kind().String()
		in.Bidirectional = s.m.Net.Directions() == 2
	}
	return in
}

// Tokens counts the tokens of an input without reading it (the
// whitespace-separated fields of a model's input, a network's symbols, a
// dense input's rows), as the budget's check counts them.
func (c *Classifier) Tokens(input string) int { return c.subj.tokens(input) }

// Note is what the user should be told once: that the model's head was
// assumed (Scorer.Note), or "".
func (c *Classifier) Note() string { return c.subj.note() }

// Label names the classifier: the network, or the model file's base name.
func (c *Classifier) Label() string { return c.subj.label() }
