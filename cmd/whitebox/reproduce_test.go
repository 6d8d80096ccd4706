package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Issue 14, item 1: an explicit -seed is honoured, 0 included; leaving it
// out means the paper's comparison seed 2020.
func TestReproduceSeedZero(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-seed", "0"}, "generated with seed 0;"},
		{nil, "generated with seed 2020;"},
		{[]string{"-seed", "7"}, "generated with seed 7;"},
	} {
		args := append([]string{"reproduce", "-table", "4"}, tc.args...)
		status, out, errOut := runCLI(t, "", args...)
		if status != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("%v: status %d, stderr %q, want %q in\n%s", args, status, errOut, tc.want, out)
		}
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Issue 14, item 2: every -data file is kept, and a file of the other
// table's kind is an error naming the file and its kind.
func TestReproduceData(t *testing.T) {
	a := writeFile(t, "a.txt", "abab\ncdcd\n")
	b := writeFile(t, "b.txt", "aabb\n")
	csv := writeFile(t, "t4.csv", "ab,False\naab,True\n")
	status, out, errOut := runCLI(t, "", "reproduce", "-table", "5", "-data", a, "-data", b)
	if status != 0 || !strings.Contains(out, "3 strings from -data") {
		t.Errorf("two Table 5 files: status %d, stderr %q, stdout\n%s", status, errOut, out)
	}
	status, out, errOut = runCLI(t, "", "reproduce", "-table", "4", "-data", csv, "-data", csv)
	if status != 0 || !strings.Contains(out, "4 strings from -data") {
		t.Errorf("two Table 4 files: status %d, stderr %q, stdout\n%s", status, errOut, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-table", "5", "-data", csv}, "-data " + csv + " is Table 4's data (it has string,label lines), but -table 5 does not use it"},
		{[]string{"-table", "4", "-data", a}, "-data " + a + " is Table 5's data (it has no commas: one string per line), but -table 4 does not use it"},
		{[]string{"-table", "2", "-data", a}, "-table 2 does not use it"},
		{[]string{"-table", "5", "-data", a, "-data", csv}, "is Table 4's data"},
		{[]string{"-data", writeFile(t, "empty.txt", "\n")}, "no strings"},
		{[]string{"-data", writeFile(t, "bad.txt", "abx\n")}, "unknown symbol 'x'"},
		{[]string{"-data", filepath.Join(t.TempDir(), "missing.txt")}, "missing.txt"},
	} {
		status, _, errOut := runCLI(t, "", append([]string{"reproduce"}, tc.args...)...)
		if status != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: status %d, stderr %q; want 2 and %q", tc.args, status, errOut, tc.want)
		}
	}
}

// Issue 44, item 1: a -data file that is not there says what the file is
// for and where the authors published it, not only "no such file".
func TestReproduceDataMissing(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"lrp_saturation_test_data.csv", []string{"no such file", "Table 4's data (the LRP saturation test)",
			"git clone https://github.com/yidinghao/whitebox-lstm", "-data whitebox-lstm/datasets/lrp_saturation_test_data.csv"}},
		{"ablation_test_data.txt", []string{"Table 5's data (the ablation test)", "-data whitebox-lstm/datasets/ablation_test_data.txt"}},
		{"mine.txt", []string{"no such file", "https://github.com/yidinghao/whitebox-lstm",
			"whitebox-lstm/datasets/lrp_saturation_test_data.csv for Table 4", "whitebox-lstm/datasets/ablation_test_data.txt for Table 5"}},
	} {
		path := filepath.Join(dir, "data", tc.file)
		status, out, errOut := runCLI(t, "", "reproduce", "-data", path)
		for _, want := range tc.want {
			if status != 2 || out != "" || !strings.Contains(errOut, want) {
				t.Errorf("-data %s: status %d, stderr %q; want 2 and %q", tc.file, status, errOut, want)
			}
		}
	}
}

// Issue 14, item 3: usage errors exit 2, whatever the flag; the help text
// says so.
func TestReproduceExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-table", "9"}, "-table 9: there is no such table"},
		{[]string{"-table", "0"}, "-table 0: there is no such table"},
		{[]string{"-format", "bogus"}, `unknown -format "bogus"`},
		{[]string{"-seed", "-1"}, "invalid value"},
		{[]string{"-bogus"}, "flag provided but not defined"},
		{[]string{"extra"}, "unexpected arguments"},
	} {
		status, out, errOut := runCLI(t, "", append([]string{"reproduce"}, tc.args...)...)
		if status != 2 || !strings.Contains(errOut, tc.want) || out != "" {
			t.Errorf("%v: status %d, stderr %q, stdout %q; want 2 and %q", tc.args, status, errOut, out, tc.want)
		}
	}
	for _, cmd := range []string{"reproduce", "attribute"} {
		if status, _, errOut := runCLI(t, "", cmd, "-bogus"); status != 2 || !strings.Contains(errOut, "flag provided but not defined") {
			t.Errorf("%s -bogus: status %d", cmd, status)
		}
	}
	if status, _, errOut := runCLI(t, "", "help", "bogus"); status != 2 || !strings.Contains(errOut, `no help for "bogus"`) {
		t.Errorf("help bogus: status %d, stderr %q", status, errOut)
	}
	_, out, _ := runCLI(t, "", "help", "reproduce")
	_, top, _ := runCLI(t, "", "help")
	for _, help := range []string{out, top} {
		if !strings.Contains(help, "Exit status: 0 success") || !strings.Contains(help, "2 a usage error") {
			t.Errorf("help does not document the exit status:\n%s", help)
		}
	}
	// A failure at run time exits 1: an -out directory that cannot be made.
	file := writeFile(t, "plain", "")
	if status, _, errOut := runCLI(t, "", "reproduce", "-table", "4", "-out", filepath.Join(file, "dir")); status != 1 || errOut == "" {
		t.Errorf("unwritable -out: status %d, stderr %q", status, errOut)
	}
}

// Issue 24, item 1: -out writes every table's files and report.html, for
// every table alone and for all of them (Table 5 with the footnote's
// u = 0.5 network, which does not simulate its automaton: the point of
// the footnote). Table 5 takes seconds: not under -short.
func TestReproduceOut(t *testing.T) {
	runs := [][]string{{"-table", "2"}, {"-table", "3"}, {"-table", "4"}}
	if !testing.Short() {
		runs = append(runs, []string{"-table", "5"}, nil)
	}
	for _, args := range runs {
		dir := filepath.Join(t.TempDir(), "out")
		status, out, errOut := runCLI(t, "", append(append([]string{"reproduce"}, args...), "-out", dir)...)
		if status != 0 || !strings.Contains(out, "report.html") {
			t.Fatalf("%v -out: status %d, stderr %q, stdout %q", args, status, errOut, out)
		}
		tables := []string{"2", "3", "4", "5"}
		if args != nil {
			tables = args[1:]
		}
		for _, n := range tables {
			for _, ext := range []string{"txt", "json", "md", "html", "tex"} {
				if fi, err := os.Stat(filepath.Join(dir, "table"+n+"."+ext)); err != nil || fi.Size() == 0 {
					t.Errorf("%v -out: table%s.%s: %v", args, n, ext, err)
				}
			}
		}
		report, err := os.ReadFile(filepath.Join(dir, "report.html"))
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(tables, "5") && !strings.Contains(string(report), "With u = 0.5, as in the released script: Occlusion") {
			t.Errorf("%v -out: report.html has no footnote row", args)
		}
	}
}
