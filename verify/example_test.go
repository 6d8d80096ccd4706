package verify_test

import (
	"fmt"
	"log"

	"github.com/whitebox-lstm/whitebox/model"
	"github.com/whitebox-lstm/whitebox/verify"
)

// A state_dict does not say its head: logits recorded from the PyTorch
// model (scripts/record_logits.py) do. Here the file's model averages the
// LSTM's outputs; loaded with the assumed head h_n, it does not match, and
// Apply with auto finds the head that does.
func ExampleFile_Apply() {
	m, err := model.Load("../model/testdata/heads/mean_uni2.pt", model.Options{})
	if err != nil {
		log.Fatal(err)
	}
	vf, err := verify.Open("../model/testdata/heads/mean_uni2.verify.jsonl", m.Vocab, m.Net.Classes(), 0)
	if err != nil {
		log.Fatal(err)
	}
	defer vf.Close()
	_, err = vf.Apply(m, false, false) // m's own head, hn
	fmt.Println(err)
	got, err := vf.Apply(m, true, false) // every head
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("head %s (%s): %s\n", got.Head, got.HeadSource, model.HeadExpression(got.Head, got.Net.Directions()))
	// Output:
	// verify ../model/testdata/heads/mean_uni2.verify.jsonl: the logits do not match Options.Head = hn: line 4 differs by 0.0465 (relative; at most 0.0001 allowed); the logits match Options.Head = mean
	// head mean (verified): output.mean(dim=1)
}
