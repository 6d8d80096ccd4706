package evaluate

// Collector gathers the explanations of one source (a tool, a method) into
// a Source: the summaries of its criteria, the lines skipped and the worst
// examples. Make it with NewCollector.
type Collector struct {
	src      Source
	criteria []string
	acc      *Accumulator
	worst    Worst
}

// NewCollector returns an empty Collector named name for the criteria (as
// Evaluator.Criteria returns them, perhaps with more appended), keeping
// the worst explanations (0: none).
func NewCollector(name string, criteria []string, worst int) *Collector {
	return &Collector{src: Source{Name: name}, criteria: criteria, acc: NewAccumulator(criteria), worst: Worst{K: worst}}
}

// Add adds one explanation's values; ex.Failed is filled in from them. A
// number of values that is not the number of criteria, and a defined value
// that is not finite, are errors (and nothing is added).
func (c *Collector) Add(ex Example, values []Value) error {
	if err := c.acc.Add(values); err != nil {
		return err
	}
	c.src.Inputs++
	ex.Failed = Failures(c.criteria, values)
	c.worst.Add(ex)
	return nil
}

// Skip counts n lines that could not be scored.
func (c *Collector) Skip(n int) { c.src.Skipped += n }

// Source returns what was gathered so far.
func (c *Collector) Source() Source {
	s := c.src
	s.Summaries = c.acc.Summaries()
	s.Worst = c.worst.Examples()
	return s
}
