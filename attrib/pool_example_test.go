package attrib_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// A service's goroutines share one Pool: its cores and its memory budget,
// whatever the number of callers; each result is the one Explainer alone
// gives.
func ExamplePool() {
	net, err := whitebox.New("sp-fsa", whitebox.Config{})
	if err != nil {
		panic(err)
	}
	pool, err := attrib.NewPool(attrib.PoolOptions{Budget: 64 << 20, MaxWaiting: 100})
	if err != nil {
		panic(err)
	}
	defer pool.Close()
	inputs := []string{"aacb", "abab", "bbca"}
	scores := make([][]float64, len(inputs))
	var wg sync.WaitGroup
	for i, s := range inputs {
		wg.Add(1)
		go func() { // a request's goroutine
			defer wg.Done()
			sym, err := net.Task.Encode(s)
			if err != nil {
				panic(err)
			}
			var res attrib.Result
			if err := pool.Attribute(context.Background(), net.Model, attrib.LRP, cell.OneHot(sym), attrib.Options{}, &res); err != nil {
				panic(err) // ErrPoolBusy past MaxWaiting, a deadline, a bad input…
			}
			scores[i] = res.Scores
		}()
	}
	wg.Wait()
	for i, s := range inputs {
		fmt.Printf("%s: %.3f\n", s, scores[i])
	}
	fmt.Println("idle cores after the burst:", pool.Stats().BusyWorkers == 0)
	// Output:
	// aacb: [0.000 0.000 0.000 0.640]
	// abab: [0.000 0.000 0.000 0.640]
	// bbca: [0.000 0.000 0.000 0.640]
	// idle cores after the burst: true
}
