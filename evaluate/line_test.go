package evaluate

import (
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/whitebox"
)

func TestParseLine(t *testing.T) {
	task := whitebox.SPTask()
	l, err := ParseLine(task, []byte(`{"net":"sp-fsa","input":"accb","scores":[0.5,0,0,1e-3],"class":"True"}`))
	if err != nil || l.Input != "accb" || len(l.Scores) != 4 || l.Scores[3] != 1e-3 || l.Class != 1 || l.Symbols[3] != 1 {
		t.Fatalf("ParseLine: %+v, %v", l, err)
	}
	if l, err := ParseLine(task, []byte(`{"input":"ab","scores":[1,2],"method":"shap"}`)); err != nil || l.Class != -1 || l.Method != "shap" {
		t.Fatalf("no class: %+v, %v", l, err)
	}
	if l, err := ParseLine(task, []byte(`{"input":"ab","scores":[1,2],"attention":[0.25,0.75]}`)); err != nil || len(l.Attention) != 2 || l.Attention[1] != 0.75 {
		t.Fatalf("attention: %+v, %v", l, err)
	}
	for line, want := range map[string]string{
		`{"input":"ab","scores":[1,2],"attention":[1]}`:      "1 attention weights for an input of 2",
		`{"input":"ab","scores":[1,2],"attention":[1,null]}`: "attention weight 1 is null",
		`{"input":"ab","scores":[1,2],"attention":[1,NaN]}`:  "NaN",
		`not json`:                                  "not a JSON object",
		`{"input":"ab","scores":[1]}`:               "1 scores for an input of 2",
		`{"input":"ax","scores":[1,2]}`:             "unknown symbol",
		`{"input":"ab","scores":[NaN,2]}`:           "NaN",
		`{"input":"ab","scores":[Infinity,2]}`:      "Infinity",
		`{"input":"ab","scores":[null,2]}`:          "null",
		`{"scores":[1,2]}`:                          "no \"input\"",
		`{"input":"ab"}`:                            "no \"scores\"",
		`{"input":"ab","scores":[1,2],"class":"X"}`: "unknown class",
		`{"input":"","scores":[]}`:                  "empty",
		`{"input":"ab","scores":[1e999,2]}`:         "not a JSON object",
		`{"input":"ab","classes":["False","True"],"scores":[[1,2],[3,4]]}`: "a record of every class",
	} {
		_, err := ParseLine(task, []byte(line))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", line, err, want)
		}
	}
	if _, err := ParseLine(nil, []byte(`{}`)); err == nil {
		t.Error("nil task: no error")
	}
}

func FuzzEvaluateLine(f *testing.F) {
	for _, s := range []string{`{"input":"accb","scores":[0.5,0,0,1e-3],"class":"True"}`, `{"input":"([","scores":[1,2]}`, `{"input":"ab","scores":[NaN,2]}`, `[]`, `{"input":null}`, `{"input":"aab","scores":[1,1,-1],"class":"False"}`, `{"input":"ab","scores":[1,2],"attention":[0.5,0.5]}`} {
		f.Add([]byte(s))
	}
	var evs []*Evaluator
	for _, name := range whitebox.Names() {
		net, err := whitebox.New(name, whitebox.Config{K: map[bool]*int{true: new(3)}[name == "bracket"]})
		if err != nil {
			f.Fatal(err)
		}
		e, err := New(net)
		if err != nil {
			f.Fatal(err)
		}
		evs = append(evs, e)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		for _, e := range evs {
			task := e.Net().Task
			l, err := ParseLine(task, line)
			if err != nil {
				continue
			}
			if len(l.Scores) != len(l.Symbols) || len(l.Symbols) == 0 || l.Class < -1 || l.Class >= len(task.Classes) ||
				l.Attention != nil && len(l.Attention) != len(l.Symbols) {
				t.Fatalf("%s: inconsistent line %+v", task.Name, l)
			}
			class := max(l.Class, 0)
			v, err := e.Score(l.Symbols, class, l.Scores)
			if err != nil {
				t.Fatalf("%s: a parsed line fails to score: %v", task.Name, err)
			}
			if l.Attention != nil {
				if _, err := e.Score(l.Symbols, class, l.Attention); err != nil {
					t.Fatalf("%s: parsed attention weights fail to score: %v", task.Name, err)
				}
			}
			if len(v) != len(e.Criteria()) {
				t.Fatalf("%s: %d values for %d criteria", task.Name, len(v), len(e.Criteria()))
			}
			if err := NewAccumulator(e.Criteria()).Add(v); err != nil {
				t.Fatalf("%s: %v", task.Name, err)
			}
		}
	})
}
