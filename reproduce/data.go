package reproduce

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"

	"github.com/whitebox-lstm/whitebox/whitebox"
)

// Labeled is a counting-task string with its label, a line of Table 4's data.
type Labeled struct {
	Input string
	True  bool // more a's than b's
}

// DefaultSeed seeds the generated data sets when Config.Seed is nil, and
// is the command's default -seed.
const DefaultSeed = 2020

// Table4Pull is how strongly a generated Table 4 string is pulled back
// towards balance: after k more a's than b's, the next symbol is a with
// probability 1/2 − k·Table4Pull (clipped to [0.05, 0.95]). The paper's data
// set (its authors' release) is far from uniform: its strings return to
// balance 15 times on average and every first balanced prefix ends within 36
// symbols. The LRP saturation test measures exactly there (each return to
// balance multiplies the first token's relevance by about |c|/ε), so
// uniform strings, which return 6 times, give a different test; this walk
// returns about as often as the paper's data.
const Table4Pull = 0.1

// GenerateTable4 draws n strings over {a, b} for the LRP saturation test:
// lengths uniform in 26…100, each symbol drawn by the walk of Table4Pull,
// kept only if some non-empty prefix has as many a's as b's. A nil rng and
// a negative n are errors.
func GenerateTable4(rng *rand.Rand, n int) ([]Labeled, error) {
	if err := checkGenerate(rng, n); err != nil {
		return nil, err
	}
	out := make([]Labeled, 0, n)
	for len(out) < n {
		l := 26 + rng.IntN(75)
		var b strings.Builder
		balance, balanced := 0, false
		for range l {
			p := min(max(0.5-float64(Table4Pull*float64(balance)), 0.05), 0.95) // no FMA: the same data on every CPU
			if rng.Float64() < p {
				b.WriteByte('a')
				balance++
			} else {
				b.WriteByte('b')
				balance--
			}
			balanced = balanced || balance == 0
		}
		if balanced {
			out = append(out, Labeled{b.String(), balance > 0})
		}
	}
	return out, nil
}

func checkGenerate(rng *rand.Rand, n int) error {
	if rng == nil {
		return fmt.Errorf("reproduce: nil random generator")
	}
	if n < 0 {
		return fmt.Errorf("reproduce: cannot generate %d strings", n)
	}
	return nil
}

// GenerateTable5 draws n strings over {a, b, c, d} as the paper's ablation
// test describes them: lengths uniform in 36…100, symbols uniform, kept only
// if they contain one of the subsequences ab, bc, cd, dc. A nil rng and a
// negative n are errors.
func GenerateTable5(rng *rand.Rand, n int) ([]string, error) {
	if err := checkGenerate(rng, n); err != nil {
		return nil, err
	}
	out := make([]string, 0, n)
	sym := make([]int, 0, 100)
	for len(out) < n {
		l := 36 + rng.IntN(65)
		sym = sym[:0]
		for range l {
			sym = append(sym, rng.IntN(4))
		}
		if found, _ := whitebox.ContainsSP(sym); found { // symbols in 0..3: no error
			out = append(out, whitebox.SPTask().Decode(sym))
		}
	}
	return out, nil
}

// The paper's data: its authors published the strings of Tables 4 and 5
// with the paper's code, in PaperRepository (the address the paper's
// introduction gives), as the files Table4File and Table5File of its
// tree. ReadTable4 and ReadTable5 read them as published.
const (
	PaperRepository = "https://github.com/yidinghao/whitebox-lstm"
	Table4File      = "datasets/lrp_saturation_test_data.csv" // 1000 string,label lines: the LRP saturation test
	Table5File      = "datasets/ablation_test_data.txt"       // 100 strings: the ablation test
)

// ReadTable4 reads Table 4's data: one "string,label" line each, label True
// or False, strings over {a, b}. Blank lines are skipped.
func ReadTable4(r io.Reader) ([]Labeled, error) {
	var out []Labeled
	task := whitebox.CountingTask()
	err := eachLine(r, func(n int, line string) error {
		s, label, ok := strings.Cut(line, ",")
		if !ok {
			return fmt.Errorf("line %d: want string,label", n)
		}
		if _, err := task.Encode(s); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		switch strings.TrimSpace(label) {
		case "True":
			out = append(out, Labeled{s, true})
		case "False":
			out = append(out, Labeled{s, false})
		default:
			return fmt.Errorf("line %d: label %q is neither True nor False", n, label)
		}
		return nil
	})
	return out, err
}

// ReadTable5 reads Table 5's data: one string over {a, b, c, d} per line.
// Blank lines are skipped.
func ReadTable5(r io.Reader) ([]string, error) {
	var out []string
	task := whitebox.SPTask()
	err := eachLine(r, func(n int, line string) error {
		if _, err := task.Encode(line); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, line)
		return nil
	})
	return out, err
}

func eachLine(r io.Reader, f func(n int, line string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<26)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if err := f(n, line); err != nil {
			return err
		}
	}
	return sc.Err()
}
