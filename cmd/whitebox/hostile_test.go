package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/whitebox-lstm/whitebox/score"
)

// hostileLines are input lines built to break an output format: every
// control byte, invalid UTF-8, LaTeX's and HTML's special characters and
// terminal escape sequences (issue 25, cases 1 and 2).
func hostileLines() []string {
	lines := []string{
		"w1\r\\immediate\\write18{touch pwned} w2",
		"w1 \x1b]0;TITLE\a w2",
		"w1 \x1b[31mred\x1b[0m w2",
		"w1 \xff\xfe w2 \xc3",
		`w1 % \ { } < & > ^^M ~ # $ _ w2`,
		"w1 </td><script>x</script> w2",
	}
	for b := 0; b < 0x20; b++ {
		if b == '\n' {
			continue // ends the line
		}
		lines = append(lines, "w1 a"+string(rune(b))+"b w2")
	}
	return append(lines, "w1 \x7f w2", "w1 \u0085\u2028 w2")
}

// controlByte returns the index of the first byte below 0x20 other than
// allowed, or 0x7f, or -1.
func controlByte(s, allowed string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 || c == 0x7f) && !strings.ContainsRune(allowed, rune(c)) {
			return i
		}
	}
	return -1
}

func TestAttributeFormatsHostileInput(t *testing.T) {
	dir := t.TempDir()
	vocab := filepath.Join(dir, "vocab.txt")
	if err := os.WriteFile(vocab, []byte("<unk>\nw1\nw2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdin := strings.Join(hostileLines(), "\n") + "\n"
	for _, format := range []string{"text", "latex", "html", "json"} {
		status, out, errOut := runCLI(t, stdin, "attribute", "-model", "../../model/testdata/uni1.safetensors",
			"-vocab", vocab, "-unk", "<unk>", "-method", "saliency", "-format", format)
		if status != 0 {
			t.Fatalf("%s: status %d, stderr %q", format, status, errOut)
		}
		allowed := "\n"
		switch format {
		case "text":
			allowed = "\n\t" // the column separator
		case "json":
			allowed = "\n\x7f" // valid JSON; encoding/json leaves DEL as it is
		}
		if i := controlByte(out, allowed); i >= 0 {
			t.Errorf("%s: control byte %#x in the output at %d: %q", format, out[i], i, out[max(0, i-40):min(len(out), i+40)])
		}
		if i := controlByte(errOut, "\n"); i >= 0 {
			t.Errorf("%s: control byte %#x in stderr: %q", format, errOut[i], errOut)
		}
		switch format {
		case "latex":
			for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if !strings.HasPrefix(line, `\textcolor`) && !strings.HasPrefix(line, `\underline`) {
					t.Errorf("latex: a line that is not a heatmap: %q", line)
				}
				// Outside the heatmap commands, the comment holds no
				// command, group or second comment: \, {, } and ^ are
				// escaped, as \textbackslash{}, \{, \} and \textasciicircum{}.
				_, comment, ok := strings.Cut(line, " % ")
				if !ok {
					t.Errorf("latex: no comment in %q", line)
					continue
				}
				bare := strings.NewReplacer(`\textbackslash{}`, "", `\textasciicircum{}`, "", `\textasciitilde{}`, "",
					`\textless{}`, "", `\textgreater{}`, "", `\textbar{}`, "", `\{`, "", `\}`, "", `\%`, "", `\`, "").Replace(comment)
				if strings.ContainsAny(bare, "{}%^~") || strings.Contains(comment, "immediate\\write18") {
					t.Errorf("latex: the comment is not escaped: %q", comment)
				}
			}
		case "text":
			if strings.Contains(out, "\x1b]") || !strings.Contains(out, `\x1b]0;TITLE\a`) {
				t.Errorf("text: ESC sequence not shown escaped: %q", out)
			}
		case "html":
			if strings.Contains(out, "<script>") {
				t.Errorf("html: unescaped markup")
			}
		}
	}
}

// A value the flags accept is never refused later with a message that
// contradicts it (issue 25, case 6), and one they refuse says the bound.
func TestAttributeEpsilonBound(t *testing.T) {
	status, out, errOut := runCLI(t, "", "attribute", "-net", "counting", "-method", "lrp", "-eps", "1e300", "ab")
	if status != 0 || len(decode(t, out)) != 1 {
		t.Errorf("-eps 1e300: status %d, stderr %q", status, errOut)
	}
	status, _, errOut = runCLI(t, "", "attribute", "-net", "counting", "-method", "lrp", "-eps", "1.7e308", "ab")
	if status != 2 || !strings.Contains(errOut, "-eps 1.7e+308 must be in [0, 1e+300]") {
		t.Errorf("-eps 1.7e308: status %d, stderr %q", status, errOut)
	}
}

// A budget above the machine's memory is refused at flag time, naming
// both numbers, rather than crashing the runtime later (issue 25, case 5).
func TestAttributeBudgetAboveMemory(t *testing.T) {
	limit, source := score.MemoryLimit()
	if limit == 0 {
		t.Skip("the memory limit is unknown on this system")
	}
	status, _, errOut := runCLI(t, "", "attribute", "-net", "counting", "-method", "ig", "-budget", "1000TiB", "ab")
	if status != 2 || !strings.Contains(errOut, "-budget 1000TiB") || !strings.Contains(errOut, source) ||
		!strings.Contains(errOut, strconv.FormatInt(limit, 10)) {
		t.Errorf("-budget 1000TiB: status %d, stderr %q (limit %d from %s)", status, errOut, limit, source)
	}
}

// The LaTeX heatmaps of hostile lines compile, as a user compiles them —
// even with shell escape on, nothing in the input runs: the
// \immediate\write18{touch pwned} of a line stays text. Skipped where no
// pdflatex is installed, unless WHITEBOX_REQUIRE_TEX=1 (CI installs it).
func TestAttributeLaTeXCompiles(t *testing.T) {
	pdflatex, err := exec.LookPath("pdflatex")
	if err != nil {
		if os.Getenv("WHITEBOX_REQUIRE_TEX") == "1" {
			t.Fatal("pdflatex not found and WHITEBOX_REQUIRE_TEX=1")
		}
		t.Skip("no pdflatex")
	}
	dir := t.TempDir()
	vocab := filepath.Join(dir, "vocab.txt")
	if err := os.WriteFile(vocab, []byte("<unk>\nw1\nw2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	status, out, errOut := runCLI(t, strings.Join(hostileLines(), "\n")+"\n", "attribute", "-model", "../../model/testdata/uni1.safetensors",
		"-vocab", vocab, "-unk", "<unk>", "-method", "saliency", "-format", "latex")
	if status != 0 {
		t.Fatalf("status %d, stderr %q", status, errOut)
	}
	doc := "\\documentclass{article}\n\\usepackage[utf8]{inputenc}\n\\usepackage{xcolor}\n\\begin{document}\n" +
		strings.ReplaceAll(out, "\n", "\n\n") + "\\end{document}\n"
	if err := os.WriteFile(filepath.Join(dir, "heatmaps.tex"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, pdflatex, "-shell-escape", "-halt-on-error", "-interaction=nonstopmode", "heatmaps.tex")
	cmd.Dir = dir
	log, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pdflatex: %v\n%s", err, log)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Fatal("the input ran a shell command through \\write18")
	}
	if _, err := os.Stat(filepath.Join(dir, "heatmaps.pdf")); err != nil {
		t.Fatalf("no PDF: %v\n%s", err, log)
	}
}
