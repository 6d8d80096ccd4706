// Package record is the JSON form of one attribution, the line format of
// `whitebox attribute` and of Table 2 in `whitebox reproduce`:
//
//	{"net":"sp-counter","method":"ig","input":"accb","tokens":["a","c","c","b"],"class":"True","prediction":"True","truth":"True","correct":true,"logits":{"False":0.027,"True":0.532},"scores":[…],"delta":1e-9}
//	{"model":"m.pt","head":"hn","method":"ig","input":"3 14 15",…}
//	{"model":"m.pt","head":"hn","method":"ig","input":"3 14 15 0 0","tokens":["3","14","15","0","0"],"padding":2,…}
//
// A record of every class (-class all, AllClasses set) has "classes", the
// class names in logit order, in place of "class", and one list per class,
// in that order, for "scores", "delta", "steps" and "features":
//
//	{"net":"sp-counter","method":"ig",…,"classes":["False","True"],"prediction":"True",…,"scores":[[…],[…]],"delta":[…,…]}
//
// Field order is fixed and the logits keep the network's class order, which
// encoding/json's maps would sort away.
package record

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
)

// Record is one attributed input.
type Record struct {
	Row   int    // the paper's row number (Table 2); left out when 0
	Net   string // the white-box network; left out when Model is set
	Model string // the model file of an imported model; left out when empty
	// Head is an imported model's head spec ("hn", "mean+relu"), written
	// after Model; left out when empty (white-box networks).
	Head string
	// Baseline is IG's or occlusion's baseline when not the zero row
	// ("id:3"), written after Head; left out when empty.
	Baseline string
	Method   string
	Input    string
	Tokens   []string
	// Padding is the number of trailing pad tokens removed before the
	// model ran (attribute -pad), the last of Tokens, whose scores are 0;
	// written after the tokens, left out when 0.
	Padding    int
	Class      string // the relevance class
	Prediction string // the predicted class
	// Truth is the task's true class of the input (the white-box
	// networks); with it the record says whether the prediction is
	// correct ("truth", "correct"). Left out when empty.
	Truth   string
	Classes []string  // the class names, in logit order
	Logits  []float64 // one per class
	// Attention is an attention model's weights α_t on the input, one per
	// token (they do not depend on the class), written after the logits
	// as "attention":[…]; left out when nil.
	Attention []float64
	Scores    []float64 // one per token
	// Span is contextual decomposition's score of a span of tokens
	// (attribute -span), written after the scores as
	// "span":{"start":i,"stop":j,"score":v}; left out when nil.
	Span    *Span
	Delta   *float64 // IG's completeness gap, DeepLIFT's summation-to-delta residual; left out when nil
	IGSteps int      // the steps IG chose (-steps auto); left out when 0
	// Features are the per-dimension scores R_{t,i}, one list per token;
	// left out when nil.
	Features [][]float64
	// AllClasses, when not nil, makes the record one of every class: its
	// lists replace Class, Scores, Delta, IGSteps and Features.
	AllClasses *AllClasses
}

// AllClasses are the per-class fields of a record of every class, one
// entry per class in logit order (the order of Record.Classes).
type AllClasses struct {
	Scores   [][]float64   // "scores": C lists of one score per token
	Delta    []float64     // "delta": IG's completeness gaps, DeepLIFT's summation-to-delta residuals; left out when nil
	IGSteps  []int         // "steps": the steps IG chose (-steps auto); left out when nil
	Features [][][]float64 // "features": C lists of one list per token; left out when nil
}

// Span is a span of token positions start … stop (from 0, both
// included) and its score.
type Span struct {
	Start, Stop int
	Score       float64
}

// MarshalJSON writes the record in the layout above. Numbers are the
// shortest decimals that read back to the same float64; NaN and infinities,
// which JSON lacks, become null.
func (r Record) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	if r.Row != 0 {
		b.WriteString(`"row":`)
		b.WriteString(strconv.Itoa(r.Row))
		b.WriteByte(',')
	}
	field := func(name string) {
		b.WriteString(strconv.Quote(name))
		b.WriteByte(':')
	}
	if r.Model != "" {
		field("model")
		writeString(&b, r.Model)
		if r.Head != "" {
			b.WriteByte(',')
			field("head")
			writeString(&b, r.Head)
		}
		if r.Baseline != "" {
			b.WriteByte(',')
			field("baseline")
			writeString(&b, r.Baseline)
		}
	} else {
		field("net")
		writeString(&b, r.Net)
	}
	b.WriteByte(',')
	field("method")
	writeString(&b, r.Method)
	b.WriteByte(',')
	field("input")
	writeString(&b, r.Input)
	b.WriteByte(',')
	field("tokens")
	b.WriteByte('[')
	for i, t := range r.Tokens {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(&b, t)
	}
	b.WriteString("],")
	if r.Padding != 0 {
		b.WriteString(`"padding":`)
		b.WriteString(strconv.Itoa(r.Padding))
		b.WriteByte(',')
	}
	if all := r.AllClasses; all != nil {
		field("classes")
		b.WriteByte('[')
		for k, c := range r.Classes {
			if k > 0 {
				b.WriteByte(',')
			}
			writeString(&b, c)
		}
		b.WriteByte(']')
	} else {
		field("class")
		writeString(&b, r.Class)
	}
	b.WriteByte(',')
	field("prediction")
	writeString(&b, r.Prediction)
	b.WriteByte(',')
	if r.Truth != "" {
		field("truth")
		writeString(&b, r.Truth)
		b.WriteString(`,"correct":`)
		b.WriteString(strconv.FormatBool(r.Truth == r.Prediction))
		b.WriteByte(',')
	}
	field("logits")
	b.WriteByte('{')
	for k, c := range r.Classes {
		if k > 0 {
			b.WriteByte(',')
		}
		writeString(&b, c)
		b.WriteByte(':')
		WriteNumber(&b, r.Logits[k])
	}
	b.WriteString("},")
	if r.Attention != nil {
		field("attention")
		WriteNumbers(&b, r.Attention)
		b.WriteByte(',')
	}
	if r.AllClasses != nil {
		r.AllClasses.write(&b)
		b.WriteByte('}')
		return b.Bytes(), nil
	}
	field("scores")
	WriteNumbers(&b, r.Scores)
	if r.Span != nil {
		b.WriteString(`,"span":{"start":`)
		b.WriteString(strconv.Itoa(r.Span.Start))
		b.WriteString(`,"stop":`)
		b.WriteString(strconv.Itoa(r.Span.Stop))
		b.WriteString(`,"score":`)
		WriteNumber(&b, r.Span.Score)
		b.WriteByte('}')
	}
	if r.Delta != nil {
		b.WriteByte(',')
		field("delta")
		WriteNumber(&b, *r.Delta)
	}
	if r.IGSteps != 0 {
		b.WriteString(`,"steps":`)
		b.WriteString(strconv.Itoa(r.IGSteps))
	}
	if r.Features != nil {
		b.WriteString(`,"features":[`)
		for t, row := range r.Features {
			if t > 0 {
				b.WriteByte(',')
			}
			WriteNumbers(&b, row)
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// write writes the per-class fields, from "scores" on.
func (a *AllClasses) write(b *bytes.Buffer) {
	b.WriteString(`"scores":[`)
	for k, s := range a.Scores {
		if k > 0 {
			b.WriteByte(',')
		}
		WriteNumbers(b, s)
	}
	b.WriteByte(']')
	if a.Delta != nil {
		b.WriteString(`,"delta":`)
		WriteNumbers(b, a.Delta)
	}
	if a.IGSteps != nil {
		b.WriteString(`,"steps":[`)
		for k, n := range a.IGSteps {
			if k > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(n))
		}
		b.WriteByte(']')
	}
	if a.Features != nil {
		b.WriteString(`,"features":[`)
		for k, rows := range a.Features {
			if k > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('[')
			for t, row := range rows {
				if t > 0 {
					b.WriteByte(',')
				}
				WriteNumbers(b, row)
			}
			b.WriteByte(']')
		}
		b.WriteByte(']')
	}
}

func writeString(b *bytes.Buffer, s string) {
	q, _ := json.Marshal(s) // a string always marshals
	b.Write(q)
}

// WriteNumber writes v as JSON: the shortest decimal that reads back as v,
// or null for NaN and infinities.
func WriteNumber(b *bytes.Buffer, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		b.WriteString("null")
		return
	}
	b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
}

// WriteNumbers writes a JSON array of numbers.
func WriteNumbers(b *bytes.Buffer, v []float64) {
	b.WriteByte('[')
	for i, x := range v {
		if i > 0 {
			b.WriteByte(',')
		}
		WriteNumber(b, x)
	}
	b.WriteByte(']')
}
