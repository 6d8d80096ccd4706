package record

import (
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
