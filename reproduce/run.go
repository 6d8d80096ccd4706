package reproduce

import (
	"context"
	"fmt"
	"slices"
)

// Results holds the tables of a run; a table that was not run is nil.
type Results struct {
	Table2 []Heatmap
	Table3 []Table3Row
	Table4 []Table4Row
	Table5 *Table5Result
	// Where Tables 4 and 5 took their strings from.
	Table4Source, Table5Source string
	Seed                       uint64
}

// AllTables lists the paper's tables this package reproduces.
var tableList = []int{2, 3, 4, 5}

// AllTables returns the list above, a new slice each call.
func AllTables() []int { return slices.Clone(tableList) }

// Run computes the given tables.
func Run(ctx context.Context, tables []int, cfg Config) (*Results, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	r := &Results{Seed: cfg.seed}
	for _, t := range tables {
		if !slices.Contains(tableList, t) {
			return nil, fmt.Errorf("there is no table %d to reproduce (tables: 2, 3, 4, 5)", t)
		}
	}
	var err error
	for _, t := range tables {
		switch t {
		case 2:
			cfg.progress("table 2", 0, 1)
			r.Table2, err = Table2(ctx)
		case 3:
			cfg.progress("table 3", 0, 1)
			r.Table3, err = Table3(ctx)
		case 4:
			r.Table4Source = source(cfg.Table4Data == nil, len(cfg.Table4Data), cfg.seed, 1000)
			r.Table4, err = Table4(ctx, cfg)
		case 5:
			r.Table5Source = source(cfg.Table5Data == nil, len(cfg.Table5Data), cfg.seed, 100)
			r.Table5, err = Table5(ctx, cfg)
		}
		if err != nil {
			return nil, err
		}
	}
	return r, nil
}

func source(generated bool, n int, seed uint64, want int) string {
	if generated {
		return fmt.Sprintf("%d strings generated with seed %d", want, seed)
	}
	return fmt.Sprintf("%d strings from -data", n)
}
