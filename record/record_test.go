package record

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

func TestMarshal(t *testing.T) {
	d := 1e-9
	r := Record{Row: 9, Net: "sp-counter", Method: "ig", Input: "a\"b", Tokens: []string{"a", "\"", "b"},
		Class: "True", Prediction: "True", Classes: []string{"True", "False"}, Logits: []float64{0.5, math.Inf(1)},
		Scores: []float64{0.1, 0, math.NaN()}, Delta: &d}
	got, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"row":9,"net":"sp-counter","method":"ig","input":"a\"b","tokens":["a","\"","b"],"class":"True","prediction":"True","logits":{"True":0.5,"False":null},"scores":[0.1,0,null],"delta":1e-09}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	r.Row, r.Delta = 0, nil
	got, _ = json.Marshal(r)
	if want := `{"net":"sp-counter","method":"ig","input":"a\"b","tokens":["a","\"","b"],"class":"True","prediction":"True","logits":{"True":0.5,"False":null},"scores":[0.1,0,null]}`; string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	r.Truth, r.Prediction = "False", "True"
	got, _ = json.Marshal(r)
	if want := `{"net":"sp-counter","method":"ig","input":"a\"b","tokens":["a","\"","b"],"class":"True","prediction":"True","truth":"False","correct":false,"logits":{"True":0.5,"False":null},"scores":[0.1,0,null]}`; string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	var back map[string]any
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
}

// TestMarshalSpan: a CD span's score comes after the scores.
func TestMarshalSpan(t *testing.T) {
	r := Record{Net: "counting", Method: "cd", Input: "ab", Tokens: []string{"a", "b"}, Class: "True", Prediction: "True",
		Classes: []string{"False", "True"}, Logits: []float64{0, 1}, Scores: []float64{0.5, -0.25}, Span: &Span{Start: 0, Stop: 1, Score: 0.125}}
	got, _ := json.Marshal(r)
	want := `{"net":"counting","method":"cd","input":"ab","tokens":["a","b"],"class":"True","prediction":"True","logits":{"False":0,"True":1},"scores":[0.5,-0.25],"span":{"start":0,"stop":1,"score":0.125}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestMarshalAllClasses: a record of every class writes "classes" for
// "class" and one list per class; without AllClasses the bytes are the
// single-class layout's.
func TestMarshalAllClasses(t *testing.T) {
	r := Record{Net: "sp-counter", Method: "ig", Input: "ab", Tokens: []string{"a", "b"}, Class: "True", Prediction: "True",
		Classes: []string{"False", "True"}, Logits: []float64{0.5, 1}, Scores: []float64{9, 9},
		AllClasses: &AllClasses{Scores: [][]float64{{0.1, -0.2}, {0.3, math.NaN()}}, Delta: []float64{1e-9, -2e-9}, IGSteps: []int{8, 16},
			Features: [][][]float64{{{1}, {2}}, {{3}, {4}}}}}
	got, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"net":"sp-counter","method":"ig","input":"ab","tokens":["a","b"],"classes":["False","True"],"prediction":"True","logits":{"False":0.5,"True":1},"scores":[[0.1,-0.2],[0.3,null]],"delta":[1e-09,-2e-09],"steps":[8,16],"features":[[[1],[2]],[[3],[4]]]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	r.AllClasses = &AllClasses{Scores: [][]float64{{1, 2}, {3, 4}}}
	got, _ = json.Marshal(r)
	if want := `{"net":"sp-counter","method":"ig","input":"ab","tokens":["a","b"],"classes":["False","True"],"prediction":"True","logits":{"False":0.5,"True":1},"scores":[[1,2],[3,4]]}`; string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	r.AllClasses = nil
	got, _ = json.Marshal(r)
	if want := `{"net":"sp-counter","method":"ig","input":"ab","tokens":["a","b"],"class":"True","prediction":"True","logits":{"False":0.5,"True":1},"scores":[9,9]}`; string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestMarshalPadding: the trailing pads removed (-pad) come right after the
// tokens, in both layouts; 0 writes nothing, the bytes of a record without
// -pad.
func TestMarshalPadding(t *testing.T) {
	r := Record{Model: "m.pt", Head: "hn", Method: "saliency", Input: "3 14 0 0", Tokens: []string{"3", "14", "0", "0"}, Padding: 2,
		Class: "1", Prediction: "1", Classes: []string{"0", "1"}, Logits: []float64{0.5, 1}, Scores: []float64{0.25, -0.5, 0, 0}}
	got, _ := json.Marshal(r)
	want := `{"model":"m.pt","head":"hn","method":"saliency","input":"3 14 0 0","tokens":["3","14","0","0"],"padding":2,"class":"1","prediction":"1","logits":{"0":0.5,"1":1},"scores":[0.25,-0.5,0,0]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	all := r
	all.AllClasses = &AllClasses{Scores: [][]float64{{1, 2, 0, 0}, {3, 4, 0, 0}}}
	got, _ = json.Marshal(all)
	if want := `{"model":"m.pt","head":"hn","method":"saliency","input":"3 14 0 0","tokens":["3","14","0","0"],"padding":2,"classes":["0","1"],"prediction":"1","logits":{"0":0.5,"1":1},"scores":[[1,2,0,0],[3,4,0,0]]}`; string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	r.Padding = 0
	got, _ = json.Marshal(r)
	if want := `{"model":"m.pt","head":"hn","method":"saliency","input":"3 14 0 0","tokens":["3","14","0","0"],"class":"1","prediction":"1","logits":{"0":0.5,"1":1},"scores":[0.25,-0.5,0,0]}`; string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// An attention model's weights are written after the logits, in one-class
// and every-class records alike.
func TestRecordAttention(t *testing.T) {
	r := Record{Model: "m.pt", Head: "attention", Method: "ig", Input: "a b", Tokens: []string{"a", "b"}, Class: "0", Prediction: "0",
		Classes: []string{"0"}, Logits: []float64{1}, Attention: []float64{0.25, 0.75}, Scores: []float64{1, 2}}
	b, _ := r.MarshalJSON()
	if !bytes.Contains(b, []byte(`"logits":{"0":1},"attention":[0.25,0.75],"scores":[1,2]`)) {
		t.Fatalf("%s", b)
	}
	r.AllClasses = &AllClasses{Scores: [][]float64{{1, 2}}}
	b, _ = r.MarshalJSON()
	if !bytes.Contains(b, []byte(`"attention":[0.25,0.75],"scores":[[1,2]]`)) {
		t.Fatalf("%s", b)
	}
}
