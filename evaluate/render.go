package evaluate

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strconv"
	"strings"

	"github.com/whitebox-lstm/whitebox/heatmap"
)

// num formats a mean or deviation.
func num(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

func pct(s Summary) string {
	if s.Applicable == 0 {
		return "–"
	}
	return strconv.FormatFloat(s.MetPercent(), 'f', 1, 64)
}

func meanStd(s Summary) (string, string) {
	if s.Defined == 0 {
		return "–", "–"
	}
	return num(s.Mean), num(s.Std)
}

func (r *Report) title() string {
	return fmt.Sprintf("%s — class explained: %s — data: %s", r.Net, r.Class, r.Data)
}

// WriteText writes the report as an aligned table.
func (r *Report) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, r.title())
	fmt.Fprintf(bw, "%-12s %-20s %8s %8s %10s %10s %7s\n", "method", "criterion", "inputs", "applies", "mean", "std", "met %")
	for _, s := range r.Sources {
		for _, c := range s.Summaries {
			m, d := meanStd(c)
			fmt.Fprintf(bw, "%-12s %-20s %8d %8d %10s %10s %7s\n", s.Name, c.Criterion, c.Inputs, c.Applicable, m, d, pct(c))
		}
		if s.Skipped > 0 {
			fmt.Fprintf(bw, "%-12s %d lines skipped (see the errors above)\n", s.Name, s.Skipped)
		}
	}
	return bw.Flush()
}

// WriteMarkdown writes the report as a Markdown table.
func (r *Report) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "**%s**\n\n| method | criterion | applies | mean ± std | met %% |\n|---|---|---:|---:|---:|\n", r.title())
	for _, s := range r.Sources {
		for _, c := range s.Summaries {
			m, d := meanStd(c)
			ms := m
			if c.Defined > 0 {
				ms = m + " ± " + d
			}
			fmt.Fprintf(bw, "| %s | %s | %d/%d | %s | %s |\n", s.Name, c.Criterion, c.Applicable, c.Inputs, ms, pct(c))
		}
	}
	for _, s := range r.Sources {
		if s.Skipped > 0 {
			fmt.Fprintf(bw, "\n%s: %d lines skipped.\n", s.Name, s.Skipped)
		}
	}
	return bw.Flush()
}

// WriteJSON writes the report as one JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

const reportCSS = `body{font-family:sans-serif;margin:1.5em}
table{border-collapse:collapse;margin-bottom:1.5em}
td,th{padding:.3em .6em;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}
td.n{text-align:right;font-family:monospace}
td.hm{font-family:monospace;font-size:1.1em;font-weight:bold}
td.hm span{white-space:pre;padding:0 .1em}`

// WriteHTML writes a self-contained page (inline CSS, no scripts or
// external assets): the summary table, then for each source the heatmaps
// of its worst explanations (package heatmap's colours).
func (r *Report) WriteHTML(w io.Writer) error {
	bw := bufio.NewWriter(w)
	t := html.EscapeString(r.title())
	fmt.Fprintf(bw, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n<h1>%s</h1>\n", t, reportCSS, t)
	bw.WriteString("<table>\n<tr><th>method</th><th>criterion</th><th>applies</th><th>mean</th><th>std</th><th>met %</th></tr>\n")
	for _, s := range r.Sources {
		for _, c := range s.Summaries {
			m, d := meanStd(c)
			fmt.Fprintf(bw, "<tr><td>%s</td><td>%s</td><td class=\"n\">%d/%d</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td></tr>\n",
				html.EscapeString(s.Name), html.EscapeString(c.Criterion), c.Applicable, c.Inputs, m, d, pct(c))
		}
	}
	bw.WriteString("</table>\n")
	for _, s := range r.Sources {
		if s.Skipped > 0 {
			fmt.Fprintf(bw, "<p>%s: %d lines skipped.</p>\n", html.EscapeString(s.Name), s.Skipped)
		}
		if len(s.Worst) == 0 {
			continue
		}
		fmt.Fprintf(bw, "<h2>%s: the worst explanations</h2>\n", html.EscapeString(s.Name))
		bw.WriteString("<p>Colours: matplotlib coolwarm, blue negative, red positive, each row scaled by its own max |score|; all |score| &lt; 1e-5 is blank.</p>\n<table>\n<tr><th>#</th><th>heatmap</th><th>fails</th></tr>\n")
		for _, ex := range s.Worst {
			fmt.Fprintf(bw, "<tr><td class=\"n\">%d</td><td class=\"hm\">", ex.Line)
			if err := heatmap.WriteHTML(bw, heatmap.Heatmap{Tokens: ex.Tokens, Scores: ex.Scores}); err != nil {
				return err
			}
			fmt.Fprintf(bw, "</td><td>%s</td></tr>\n", html.EscapeString(strings.Join(ex.Failed, ", ")))
		}
		bw.WriteString("</table>\n")
	}
	bw.WriteString("</body>\n</html>\n")
	return bw.Flush()
}

// Write writes the report in format: text, json, markdown or html.
func (r *Report) Write(w io.Writer, format string) error {
	if r == nil {
		return fmt.Errorf("nil report")
	}
	switch format {
	case "text":
		return r.WriteText(w)
	case "json":
		return r.WriteJSON(w)
	case "markdown":
		return r.WriteMarkdown(w)
	case "html":
		return r.WriteHTML(w)
	}
	return fmt.Errorf("unknown format %q (text, json, markdown, html)", format)
}
