package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The documents' Python programs (a ```python block whose first line is
// "# NAME.py: …") and the commands that run them (readmePython).

// pythonFileName matches the first line of a Python block that is a
// program the documents run by name.
var pythonFileName = regexp.MustCompile(`^# ([a-z_]+\.py):`)

// writePythonFiles writes every named Python block of the documents into
// work, before any document runs (docs/models.md imports the README's
// my_model.py, also when it runs alone).
func writePythonFiles(root, work string, files []string) error {
	for _, file := range files {
		text, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			return err
		}
		langs, blocks := readmeBlocks(string(text))
		for b, block := range blocks {
			if langs[b] != "python" || len(block) == 0 {
				continue
			}
			if m := pythonFileName.FindStringSubmatch(block[0]); m != nil {
				if err := os.WriteFile(filepath.Join(work, m[1]), []byte(strings.Join(block, "\n")+"\n"), 0o644); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// pythonFiles returns the files the Python command line writes, nil when
// it is not one of readmePython's.
func pythonFiles(line string) []string {
	for prefix, files := range readmePython {
		if strings.HasPrefix(line, prefix) {
			return files
		}
	}
	return nil
}

// python is the interpreter that runs the documents' "python3" commands:
// WHITEBOX_PYTHON (such as /usr/bin/python3, Debian's, with its
// python3-torch), else python3 on PATH.
func python() string {
	if p := os.Getenv("WHITEBOX_PYTHON"); p != "" {
		return p
	}
	return "python3"
}

// hasTorch reports whether python() imports torch.
func hasTorch() bool {
	return exec.Command(python(), "-c", "import torch").Run() == nil
}

// runPython runs a document's Python command in work when PyTorch is
// here (with the repository's python/ on PYTHONPATH, as docs/python.md
// sets it up), requires the output the document shows (… stands for any
// text), and requires its files to be testdata/readme's (or, with
// WHITEBOX_UPDATE_README=1, writes them there); without PyTorch it copies
// testdata/readme's files into work. With WHITEBOX_README_STORED=1 the
// programs that write files are replaced by testdata/readme's even where
// PyTorch is (their float32 logits may differ in the last bits on another
// CPU than the one that recorded them), and only the others run: .ci/run's
// Python block runs the README's Python client example so.
func runPython(t *testing.T, root, work, line string, output, files []string, torch bool, run func(*testing.T, string, string) (string, error)) {
	t.Helper()
	stored := filepath.Join(root, "cmd", "whitebox", "testdata", "readme")
	if len(files) > 0 && os.Getenv("WHITEBOX_README_STORED") == "1" {
		torch = false
	}
	if !torch && len(files) == 0 {
		t.Logf("not run (no PyTorch here): %s", line)
		return
	}
	if !torch {
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(stored, f))
			if err != nil {
				t.Fatalf("%s: %v (made by the command with PyTorch: WHITEBOX_PYTHON=/usr/bin/python3 WHITEBOX_UPDATE_README=1 go test -run TestREADME ./cmd/whitebox)", line, err)
			}
			if err := os.WriteFile(filepath.Join(work, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("instead of %q (no PyTorch here, or WHITEBOX_README_STORED=1): %s from testdata/readme, written by it", line, strings.Join(files, ", "))
		return
	}
	out, err := run(t, work, "PYTHONPATH="+shellQuote(filepath.Join(root, "python"))+" "+python()+strings.TrimPrefix(line, "python3"))
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	if want := strings.Join(output, "\n") + "\n"; output != nil && !matchElided(out, want) {
		t.Errorf("%s:\ngot  %s\nwant %s(… stands for any text)", line, out, want)
	}
	update := os.Getenv("WHITEBOX_UPDATE_README") == "1"
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(work, f))
		if err != nil {
			t.Fatalf("%s did not write %s: %v", line, f, err)
		}
		if update {
			if err := os.MkdirAll(stored, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(stored, f), got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(filepath.Join(stored, f))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %s is not testdata/readme/%s (%v): the documents' program changed; WHITEBOX_UPDATE_README=1 go test -run TestREADME ./cmd/whitebox writes it", line, f, f, err)
		}
	}
}

// shownError returns the error message a document shows as a command's
// only output ("whitebox attribute: …" after "whitebox attribute …"), ""
// when it shows none.
func shownError(line string, output []string) string {
	fields := strings.Fields(line)
	if len(output) != 1 || len(fields) < 2 || fields[0] != "whitebox" {
		return ""
	}
	if prefix := "whitebox " + fields[1] + ": "; strings.HasPrefix(output[0], prefix) {
		return output[0]
	}
	return ""
}

func TestMatchElided(t *testing.T) {
	for _, c := range []struct {
		out, shown string
		want       bool
	}{
		{"abc\n", "abc\n", true},
		{"abc\n", "abd\n", false},
		{`{"a":1,"b":[2,3],"c":4}` + "\n", `{"a":1,…,"c":4}` + "\n", true},
		{`{"a":1,"b":[2,3],"c":4}` + "\n", `{"a":…,"b":[2…],"c"…}` + "\n", true},
		{`{"a":1,"b":[2,3],"c":4}` + "\n", `{"a":…,"c":4,"b":…}` + "\n", false}, // out of order
		{`{"a":1}` + "\n", `{"a":1…"a":1}` + "\n", false},                       // the pieces may not overlap
		{"x\n", "y…\n", false},
		{"x\n", "…y\n", false},
	} {
		if got := matchElided(c.out, c.shown); got != c.want {
			t.Errorf("matchElided(%q, %q) = %v, want %v", c.out, c.shown, got, c.want)
		}
	}
}

// shellQuote quotes s for bash.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
