package main

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode"
)

// The commands of README.md and docs/*.md that TestREADME does not run as written, each with
// the reason; a command is matched by its start.
var readmeSkipped = map[string]string{
	// The command that runs this test.
	"go test ./...": "it runs this test (CI runs it)",
	// docs/beam.md ("Beyond one machine"): the nested module beam/ brings Apache Beam
	// (about 90 modules and minutes of cold build); its own go test runs
	// the same pipeline on prism and compares it with whitebox attribute,
	// byte for byte (CI's beam/ step). Flink and Dataflow are marked
	// untested in docs/beam.md.
	"cd beam":                       "beam/ is a module of its own, tested by its go test",
	"go build -o whitebox-beam":     "beam/",
	"./whitebox-beam":               "beam/",
	"wc -l out/":                    "beam/'s output",
	"head -1 out/":                  "beam/'s output",
	"cat out/":                      "beam/'s output",
	"go run github.com/apache/beam": "beam/: prism as a job server",
	"docker run":                    "Flink (untested, as docs/beam.md says)",
}

// readmePython are the documents' Python commands (they need PyTorch) and
// the files each writes into the scratch directory. With PyTorch (a
// python3 on PATH that imports torch) the test runs them and requires
// their files to be the ones in testdata/readme, byte for byte
// (WHITEBOX_UPDATE_README=1 writes them there instead); without it (CI)
// it copies those files, made by the same commands.
var readmePython = map[string][]string{
	"python3 my_model.py":      {"model.pt", "verify.jsonl"},
	"python3 gru_attention.py": {"gru.pt", "gru_verify.jsonl"},
	"python3 -c 'import torch; from my_model import model; torch.onnx.export(": {"model.onnx"},
	"python3 explain.py": {}, // the Python client (python/): its output is the README's
}

// readmeSubstituted are the README's placeholders for the reader's own
// tools, and what the test runs instead.
var readmeSubstituted = map[string]string{
	// "the output of whitebox attribute works as is" for evaluate.
	"python3 my_tool.py": "whitebox attribute -net sp-fsa -method ig < inputs.txt > scores.jsonl",
}

// readmeClone is the README's command that fetches the authors' data;
// the test, offline, puts the same files (../shared/data, beside the
// repository) where it would, or skips the commands that read them.
const (
	readmeClone    = "git clone https://github.com/yidinghao/whitebox-lstm"
	readmeDatasets = "whitebox-lstm/datasets/"
)

// A readmeCommand is one command of a fenced block and the output the
// README shows after it (nil when none).
type readmeCommand struct {
	line   string
	output []string
}

// readmeBlocks returns the fenced blocks of the README: their language
// and lines.
func readmeBlocks(text string) (langs []string, blocks [][]string) {
	var cur []string
	in := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			if in {
				blocks = append(blocks, cur)
			} else {
				langs = append(langs, strings.TrimPrefix(line, "```"))
				cur = nil
			}
			in = !in
			continue
		}
		if in {
			cur = append(cur, line)
		}
	}
	return langs, blocks
}

// commands reads a shell block: lines starting "$ " are commands (a
// trailing "\" continues one), the lines after one until the next are its
// output; in a block without "$ " every line is a command; "#" lines are
// comments.
func commands(block []string) []readmeCommand {
	prompted := false
	for _, l := range block {
		prompted = prompted || strings.HasPrefix(l, "$ ")
	}
	var cmds []readmeCommand
	cont := false
	for _, l := range block {
		switch {
		case cont:
			cmds[len(cmds)-1].line += "\n" + l
		case strings.HasPrefix(l, "#") || strings.TrimSpace(l) == "":
			continue
		case !prompted:
			cmds = append(cmds, readmeCommand{line: l})
		case strings.HasPrefix(l, "$ "):
			cmds = append(cmds, readmeCommand{line: strings.TrimPrefix(l, "$ ")})
		default:
			if len(cmds) > 0 {
				cmds[len(cmds)-1].output = append(cmds[len(cmds)-1].output, l)
			}
		}
		cont = strings.HasSuffix(l, `\`)
	}
	return cmds
}

// readmeFiles are the documents whose commands and programs TestREADME
// runs, in its order: README.md, then docs/*.md by name.
func readmeFiles(root string) ([]string, error) {
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	files := []string{"README.md"}
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		if err != nil {
			return nil, err
		}
		files = append(files, filepath.ToSlash(rel))
	}
	return files, nil
}

// TestREADME runs the README and every docs/*.md (one subtest each, in
// that order, sharing one scratch directory, as a reader who follows the
// README into docs/ would) as a newcomer would, from a checkout: every
// command of their shell blocks, as written (but those in readmeSkipped, the
// placeholders of readmeSubstituted and readmeClone), in the repository
// root for "go" commands and in a scratch directory for the others, with
// the installed whitebox on PATH; the output it shows, where it shows one in full, must
// be what the command prints. Every Go block is a complete program: it is
// built against this checkout and run, and its "// Output:" comment must
// be what it prints. The report that "whitebox reproduce -out" writes is
// opened in Chromium when it is installed (WHITEBOX_REQUIRE_CHROMIUM=1
// makes it required, as in CI).
func TestREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the README's commands (about 30 s)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files, err := readmeFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	bin, work := t.TempDir(), t.TempDir()
	if err := writePythonFiles(root, work, files); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "GOBIN="+bin)
	var stderr string // the last command's
	run := func(t *testing.T, dir, line string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "bash", "-c", "set -eo pipefail\n"+line)
		cmd.Dir, cmd.Env = dir, env
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		stderr = errOut.String()
		return out.String(), err
	}
	torch := hasTorch()
	ran, snippets := 0, 0
	installed, paperData := false, false
	done := 0
	for _, file := range files {
		t.Run(file, func(t *testing.T) {
			done++
			text, err := os.ReadFile(filepath.Join(root, file))
			if err != nil {
				t.Fatal(err)
			}
			langs, blocks := readmeBlocks(string(text))
			var server readmeServer // "whitebox serve … &", stopped at the end of the document
			for b, block := range blocks {
				switch langs[b] {
				case "":
				case "go":
					snippets++
					runSnippet(t, root, work, env, snippets, block)
					continue
				default: // python: the export's loader, shown for PyTorch users (evaluate/testdata/pytorch_ig.py is it, tested)
					continue
				}
				for _, c := range commands(block) {
					if reason := skipped(c.line); reason != "" {
						t.Logf("not run (%s): %s", reason, c.line)
						continue
					}
					if strings.HasPrefix(c.line, readmeClone) {
						paperData = copyPaperData(t, filepath.Join(root, "../shared/data"), filepath.Join(work, readmeDatasets))
						continue
					}
					if strings.Contains(c.line, readmeDatasets) && !paperData {
						t.Logf("not run (the paper's data are not beside the repository): %s", c.line)
						continue
					}
					if files := pythonFiles(c.line); files != nil {
						runPython(t, root, work, c.line, c.output, files, torch, run)
						continue
					}
					line := c.line
					for prefix, sub := range readmeSubstituted {
						if strings.HasPrefix(line, prefix) {
							t.Logf("instead of %q: %s", line, sub)
							line = sub
						}
					}
					dir := work
					if strings.HasPrefix(line, "go ") {
						dir = root
					}
					if strings.HasPrefix(line, "whitebox ") && !installed {
						if file == "README.md" {
							t.Fatalf("%q comes before the README installs whitebox", line)
						}
						// This document run alone (go test -run TestREADME/docs/...):
						// install whitebox as the README does.
						if _, err := run(t, root, "go install ./cmd/whitebox"); err != nil {
							t.Fatalf("go install ./cmd/whitebox: %v", err)
						}
						installed = true
					}
					if server.handle(t, dir, env, line) {
						ran++
						continue
					}
					out, err := run(t, dir, line)
					if failing := shownError(line, c.output); failing != "" {
						// The document shows the command failing with this message.
						if err == nil || stderr != failing+"\n" {
							t.Errorf("%s: %s: %v, stderr:\n%s\nwant the failure the document shows:\n%s", file, c.line, err, stderr, failing)
						}
						ran++
						continue
					}
					if err != nil {
						t.Fatalf("%s: %s: %v, stderr:\n%s", file, c.line, err, stderr)
					}
					ran++
					installed = installed || strings.HasPrefix(line, "go install ./cmd/whitebox")
					if c.output != nil {
						if want := strings.Join(c.output, "\n") + "\n"; !matchElided(out, want) {
							t.Errorf("%s: %s:\ngot  %s\nwant %s(… stands for any text)", file, c.line, out, want)
						}
					}
				}
			}
		})
	}
	if t.Failed() {
		return
	}
	if done < len(files) {
		t.Logf("%d of %d documents run (-run chose them): the totals and the report are not checked", done, len(files))
		return
	}
	if ran < 10 || snippets != 3 {
		t.Fatalf("ran %d commands and %d Go programs: the documents' blocks were not found", ran, snippets)
	}
	report := filepath.Join(work, "report", "report.html")
	if _, err := os.Stat(report); err != nil {
		t.Fatalf("whitebox reproduce -out report: %v", err)
	}
	openInChromium(t, report)
}

// matchElided reports whether out is the output a document shows, in
// which "…" stands for any text: the shown pieces between the ellipses
// appear in out in order, the first at its start and the last at its end.
func matchElided(out, shown string) bool {
	pieces := strings.Split(shown, "…")
	if len(pieces) == 1 {
		return out == shown
	}
	first, last := pieces[0], pieces[len(pieces)-1]
	if !strings.HasPrefix(out, first) || !strings.HasSuffix(out[len(first):], last) {
		return false
	}
	rest := out[len(first) : len(out)-len(last)]
	for _, p := range pieces[1 : len(pieces)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return true
}

// copyPaperData copies the authors' two data files from shared to dir, as
// the README's git clone would place them; false when they are absent.
func copyPaperData(t *testing.T, shared, dir string) bool {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"lrp_saturation_test_data.csv", "ablation_test_data.txt"} {
		b, err := os.ReadFile(filepath.Join(shared, name))
		if err != nil {
			t.Logf("instead of %q: the paper's data are not beside the repository (%v)", readmeClone, err)
			return false
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("instead of %q: the same files from %s", readmeClone, shared)
	return true
}

// skipped returns why the README's command line is not run, or "".
func skipped(line string) string {
	for prefix, reason := range readmeSkipped {
		if strings.HasPrefix(line, prefix) {
			return reason
		}
	}
	return ""
}

// runSnippet builds the Go program of a README block in a module of its
// own that uses this checkout, runs it in work and compares its output
// with the block's "// Output:" comment.
func runSnippet(t *testing.T, root, work string, env []string, n int, block []string) {
	t.Helper()
	src := strings.Join(block, "\n") + "\n"
	_, want, ok := strings.Cut(src, "// Output: ")
	if !ok || !strings.HasPrefix(src, "package main\n") {
		t.Fatalf("Go block %d is not a complete program with an // Output: comment:\n%s", n, src)
	}
	want, _, _ = strings.Cut(want, "\n")
	dir := t.TempDir()
	goMod := "module readme\n\ngo 1.26\n\nrequire github.com/whitebox-lstm/whitebox v0.0.0\n\nreplace github.com/whitebox-lstm/whitebox => " + root + "\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"go.mod": []byte(goMod), "go.sum": sum, "main.go": []byte(src)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe := filepath.Join(dir, "snippet")
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	build := exec.Command("go", "build", "-mod=mod", "-o", exe, ".")
	build.Dir, build.Env = dir, append(env, "GOFLAGS=-mod=mod", "GOPROXY=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("Go block %d does not build: %v\n%s\n%s", n, err, out, src)
	}
	cmd := exec.Command(exe)
	cmd.Dir = work
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != want {
		t.Errorf("Go block %d: %v, output %q, want %q", n, err, out, want)
	}
}

// openInChromium renders page in headless Chromium, when installed, and
// checks that the screenshot shows the heatmaps' reds and blues.
func openInChromium(t *testing.T, page string) {
	t.Helper()
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		if os.Getenv("WHITEBOX_REQUIRE_CHROMIUM") != "" {
			t.Fatal("WHITEBOX_REQUIRE_CHROMIUM is set but no Chromium was found")
		}
		t.Log("no Chromium here: report.html not rendered")
		return
	}
	dir := t.TempDir()
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--hide-scrollbars",
		"--window-size=1400,1400", "--screenshot="+shot, "file://"+page)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	red, blue := 0, 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			r, g, b = r>>8, g>>8, b>>8
			if r > 150 && g < 110 && b < 110 {
				red++
			}
			if b > 150 && r < 110 && g < 140 {
				blue++
			}
		}
	}
	t.Logf("report.html in Chromium: %d red and %d blue pixels", red, blue)
	if red < 100 || blue < 100 {
		t.Errorf("report.html in Chromium: %d red and %d blue pixels; the heatmaps did not render", red, blue)
	}
}

// TestDocLinks checks that every relative link of README.md and docs/*.md
// names a file of the repository and, where it names a heading of a
// Markdown file (#anchor), that the heading is there.
func TestDocLinks(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files, err := readmeFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	links := 0
	for _, file := range files {
		text, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(outsideCode(string(text)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			path, anchor, _ := strings.Cut(target, "#")
			full := filepath.Join(root, file)
			if path != "" {
				full = filepath.Join(filepath.Dir(full), filepath.FromSlash(path))
			}
			if _, err := os.Stat(full); err != nil {
				t.Errorf("%s: link %s: %v", file, target, err)
				continue
			}
			if anchor != "" && strings.HasSuffix(full, ".md") && !hasAnchor(t, full, anchor) {
				t.Errorf("%s: link %s: no heading %q in %s", file, target, anchor, filepath.Base(full))
			}
		}
	}
	if links == 0 {
		t.Fatal("no relative links found")
	}
}

// outsideCode returns the Markdown text without its fenced blocks and
// inline code spans, where "](" is code, not a link.
func outsideCode(text string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			in = !in
			continue
		}
		if in {
			continue
		}
		parts := strings.Split(line, "`")
		for i := 0; i < len(parts); i += 2 {
			b.WriteString(parts[i])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// hasAnchor reports whether the Markdown file has a heading whose GitHub
// anchor is anchor.
func hasAnchor(t *testing.T, file, anchor string) bool {
	t.Helper()
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	in := false
	for _, line := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(line, "```") {
			in = !in
		}
		heading := strings.TrimLeft(line, "#")
		if in || heading == line || !strings.HasPrefix(heading, " ") {
			continue
		}
		var slug strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
			switch {
			case r == ' ':
				slug.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				slug.WriteRune(r)
			}
		}
		if slug.String() == anchor {
			return true
		}
	}
	return false
}
