package faithfulness

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// Write prints the tables of a run: per network, every method's ground
// truth and metric means; then, per metric, Kendall's τ-b with the ground
// truth's ranking and the per-input agreement on every network. markdown
// chooses Markdown tables, otherwise aligned text.
func Write(w io.Writer, tables []*Table, markdown bool) error {
	var b strings.Builder
	for _, t := range tables {
		fmt.Fprintf(&b, "%s: %d inputs, %d with ground truth; truth = mean %% met of %s\n\n", t.Net, t.Inputs, t.Applicable, strings.Join(t.Criteria, ", "))
		head := []string{"method", "truth %"}
		for _, m := range metricList {
			head = append(head, m.Name+arrow(m))
		}
		rows := [][]string{head}
		for j, name := range t.Methods {
			row := []string{name, fmt.Sprintf("%.1f", t.Truth[j])}
			for k := range metricList {
				row = append(row, fmt.Sprintf("%.4f", t.Means[k][j]))
			}
			rows = append(rows, row)
		}
		if err := grid(&b, rows, markdown); err != nil {
			return err
		}
		b.WriteString("\n")
	}
	b.WriteString("Kendall's τ-b of each metric's ranking of the methods with the ground truth's, and the per-input agreement (% of method pairs the ground truth orders that the metric orders the same way, ties ½)\n\n")
	head := []string{"metric"}
	for _, t := range tables {
		head = append(head, t.Net+" τ", t.Net+" agree %")
	}
	rows := [][]string{head}
	for k, m := range metricList {
		row := []string{m.Name + arrow(m)}
		for _, t := range tables {
			row = append(row, num(t.Tau[k], "%+.2f"), num(100*t.Agree[k].Fraction(), "%.1f"))
		}
		rows = append(rows, row)
	}
	if err := grid(&b, rows, markdown); err != nil {
		return err
	}
	criteria(&b, tables)
	if err := grid(&b, criteriaRows(tables), markdown); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// criteria introduces the table of τ-b against each criterion alone, for
// the networks with several.
func criteria(b *strings.Builder, tables []*Table) {
	b.WriteString("\nKendall's τ-b of each metric's ranking with the ranking by each criterion alone (networks with several criteria; % met per method in the first rows)\n\n")
}

func criteriaRows(tables []*Table) [][]string {
	head := []string{"metric"}
	for _, t := range tables {
		if len(t.Criteria) > 1 {
			for _, c := range t.Criteria {
				head = append(head, t.Net+" "+c)
			}
		}
	}
	rows := [][]string{head}
	if len(tables) > 0 {
		for m, name := range tables[0].Methods {
			row := []string{name + " % met"}
			for _, t := range tables {
				if len(t.Criteria) > 1 {
					for j := range t.Criteria {
						row = append(row, fmt.Sprintf("%.1f", t.CriterionTruth[j][m]))
					}
				}
			}
			rows = append(rows, row)
		}
	}
	for k, mt := range metricList {
		row := []string{mt.Name + arrow(mt)}
		for _, t := range tables {
			if len(t.Criteria) > 1 {
				for j := range t.Criteria {
					row = append(row, num(t.CriterionTau[k][j], "%+.2f"))
				}
			}
		}
		rows = append(rows, row)
	}
	return rows
}

func arrow(m Metric) string {
	if m.HigherBetter {
		return " ↑"
	}
	return " ↓"
}

func num(v float64, format string) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf(format, v)
}

func grid(w io.Writer, rows [][]string, markdown bool) error {
	if markdown {
		for i, r := range rows {
			fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
			if i == 0 {
				fmt.Fprintf(w, "|%s\n", strings.Repeat("---|", len(r)))
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t\n", strings.Join(r, "\t"))
	}
	return tw.Flush()
}
