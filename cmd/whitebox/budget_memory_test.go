//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/internal/testmodel"
	"github.com/whitebox-lstm/whitebox/model"
	"github.com/whitebox-lstm/whitebox/score"
	"github.com/whitebox-lstm/whitebox/verify"
)

var built struct {
	sync.Once
	dir, bin string
	err      error
	out      []byte
}

// buildCommand builds the command once for the tests of this file.
func buildCommand(t *testing.T) string {
	t.Helper()
	built.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "whitebox-test-"); built.err == nil {
			built.bin = filepath.Join(built.dir, "whitebox")
			built.out, built.err = exec.Command("go", "build", "-o", built.bin, ".").CombinedOutput()
		}
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.out)
	}
	return built.bin
}

// resetPeak gives this process's free memory back and resets its peak
// resident memory to its current one, which it returns: a child runs in
// this process's memory until it execs (vfork), so that its ru_maxrss is
// at least this process's peak.
func resetPeak() int64 {
	debug.FreeOSMemory()
	os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // Linux ≥ 4.0: VmHWM = VmRSS
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
			return kb << 10
		}
	}
	return 0
}

// manyClassesFile writes a model of c classes (testmodel.ManyClasses).
func manyClassesFile(t *testing.T, dir string, c int) string {
	t.Helper()
	path, err := testmodel.ManyClasses(dir, c)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// TestAttributeClassAllMemory (issue 39, A): -class all stays within
// -budget. Each class kept its own copy of the C logits: 10,000 classes
// and one token took 800–917 MB at the default budget, and 100,000
// under -budget 1GiB died of "fatal error: out of memory". Now the
// classes share one; a budget too small for every class's results and
// output is refused (exit status 1, naming -budget) before they are
// allocated; one that fits keeps the peak resident memory within the
// budget plus score.MemoryOverhead. The built command runs as a child
// (its peak is getrusage's ru_maxrss; a few seconds).
func TestAttributeClassAllMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and runs the command")
	}
	bin := buildCommand(t)
	for _, c := range []struct {
		classes int
		budget  string
		method  string
		refused bool
	}{
		// 20,000 classes first: 3.2 GB where each class copies the logits.
		{20000, "8MiB", "saliency", true},
		{20000, "64MiB", "saliency", false},
		{20000, "64MiB", "ig", false},
		{100000, "1GiB", "saliency", false},
		{100000, "16MiB", "occlusion", true},
	} {
		model := manyClassesFile(t, t.TempDir(), c.classes)
		cmd := exec.Command(bin, "attribute", "-model", model, "-method", c.method, "-class", "all", "-budget", c.budget, "1")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		floor := resetPeak()
		err := cmd.Run()
		status := cmd.ProcessState.ExitCode()
		peak := int64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) << 10 // KiB on Linux
		budget, perr := score.ParseSize(c.budget)
		if perr != nil {
			t.Fatal(perr)
		}
		t.Logf("%d classes, %s, -budget %s: status %d, peak %d MiB, output %d KiB", c.classes, c.method, c.budget, status, peak>>20, stdout.Len()>>10)
		if strings.Contains(stderr.String(), "fatal error") || strings.Contains(stderr.String(), "goroutine ") {
			t.Fatalf("%d classes, -budget %s: the runtime died: %.300s", c.classes, c.budget, stderr.String())
		}
		switch {
		case c.refused && (status != 1 || !strings.Contains(stderr.String(), "raise -budget") || stdout.Len() != 0):
			t.Errorf("%d classes, -budget %s: status %d (%v), stderr %.300q; want 1 and a refusal naming -budget", c.classes, c.budget, status, err, stderr.String())
		case !c.refused && (status != 0 || !strings.Contains(stdout.String(), `"classes":["0","1",`)):
			t.Errorf("%d classes, -budget %s: status %d (%v), stderr %.300q", c.classes, c.budget, status, err, stderr.String())
		}
		if floor > budget+score.MemoryOverhead {
			t.Logf("cannot measure: this process's resident memory, %d bytes, counts in the child's peak", floor)
		} else if peak > budget+score.MemoryOverhead {
			t.Fatalf("%d classes, %s, -budget %s: peak RSS %d bytes, more than the budget + overhead %d", c.classes, c.method, c.budget, peak, budget+score.MemoryOverhead)
		}
	}
}

// TestVerifyMemory (issue 39, B): -verify reads its file one line at a
// time, within -budget. ReadFile kept every case: a file of 100,000 lines
// of 30 ids (15 MB) took a peak of 71 MiB under -budget 2MiB, past the
// budget plus score.MemoryOverhead; now 10 MiB, the same output (about 5
// s: 100,000 forward passes).
func TestVerifyMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and runs the command")
	}
	bin := buildCommand(t)
	const modelFile = headsDir + "mean_uni2.safetensors"
	m, err := model.Load(modelFile, model.Options{Head: new(cell.HeadMean)})
	if err != nil {
		t.Fatal(err)
	}
	r, err := cell.NewRunner(m.Net)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for k := range 64 {
		ids := make([]string, 30)
		row := make([]int, 30)
		for i := range row {
			row[i] = (k*31 + i*7) % m.Vocab
			ids[i] = fmt.Sprint(row[i])
		}
		x, err := m.Embed(row)
		if err != nil {
			t.Fatal(err)
		}
		y, err := r.Forward(x)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, fmt.Sprintf(`{"ids":[%s],"logits":[%v,%v,%v]}`, strings.Join(ids, ","), y[0], y[1], y[2]))
	}
	var file bytes.Buffer
	for i := range verify.MaxLines {
		file.WriteString(lines[i%len(lines)] + "\n")
	}
	path := filepath.Join(t.TempDir(), "v.jsonl")
	if err := os.WriteFile(path, file.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	size := file.Len()
	file = bytes.Buffer{}
	const budget = "2MiB"
	// -head mean: one pass over the file (auto makes one per head: the
	// same memory, six times the time).
	cmd := exec.Command(bin, "attribute", "-model", modelFile, "-head", "mean", "-method", "saliency", "-budget", budget, "-verify", path, "1 2")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	floor := resetPeak()
	err = cmd.Run()
	peak := int64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) << 10
	t.Logf("-verify, %d lines (%d KiB), -budget %s: status %d, peak %d MiB", verify.MaxLines, size>>10, budget, cmd.ProcessState.ExitCode(), peak>>20)
	if err != nil || !strings.Contains(stdout.String(), `"head":"mean"`) {
		t.Fatalf("%v, stdout %q, stderr %.300q", err, stdout.String(), stderr.String())
	}
	b, _ := score.ParseSize(budget)
	if floor > b+score.MemoryOverhead {
		t.Logf("cannot measure: this process's resident memory, %d bytes, counts in the child's peak", floor)
	} else if peak > b+score.MemoryOverhead {
		t.Errorf("peak RSS %d bytes, more than the budget + overhead %d", peak, b+score.MemoryOverhead)
	}
}
