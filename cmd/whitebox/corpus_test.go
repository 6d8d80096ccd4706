package main

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/whitebox-lstm/whitebox/score"
)

// scoresWithFaults is a scores file of two methods for the 20 inputs
// "whitebox generate -net sp-counter -n 20 -len 3..12" writes, with bad
// lines in place of lines 13 to 16 (not JSON, blank, a symbol outside the
// alphabet, a scores count that does not match), lines 8 and 9 swapped,
// and a CRLF line end.
func scoresWithFaults(t *testing.T) string {
	t.Helper()
	_, gen, _ := runCLI(t, "", "generate", "-net", "sp-counter", "-n", "20", "-len", "3..12")
	var all []string
	for _, m := range []string{"ig", "saliency"} {
		status, lines, errOut := runCLI(t, gen, "attribute", "-net", "sp-counter", "-method", m)
		if status != 0 {
			t.Fatalf("attribute: %s", errOut)
		}
		all = append(all, strings.Split(strings.TrimSuffix(lines, "\n"), "\n")...)
	}
	all[3] += "\r"
	all[7], all[8] = all[8], all[7]
	faults := []string{"not json", "", `{"input":"abz","scores":[1,2,3]}`, `{"input":"ab","scores":[1]}`}
	copy(all[12:], faults)
	return strings.Join(all, "\n") + "\n"
}

// evaluate -scores reports each bad line with its number, in order, and
// writes the same report whatever the number of cores.
func TestEvaluateScoresCores(t *testing.T) {
	in := scoresWithFaults(t)
	args := []string{"evaluate", "-net", "sp-counter", "-scores", "-", "-n", "20", "-len", "3..12", "-format", "json"}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var first, firstErr string
	for _, procs := range []int{1, 2, 4} {
		runtime.GOMAXPROCS(procs)
		status, out, errOut := runCLI(t, in, args...)
		if status != 1 {
			t.Fatalf("%d cores: status %d, want 1 (bad lines): %s", procs, status, errOut)
		}
		if procs == 1 {
			first, firstErr = out, errOut
			continue
		}
		if out != first || errOut != firstErr {
			t.Fatalf("%d cores:\n%s\n%s\n1 core:\n%s\n%s", procs, out, errOut, first, firstErr)
		}
	}
	var lines []int
	for _, m := range regexp.MustCompile(`standard input:(\d+):`).FindAllStringSubmatch(firstErr, -1) {
		n, _ := strconv.Atoi(m[1])
		lines = append(lines, n)
	}
	if want := []int{8, 9, 13, 14, 15, 16}; !slices.Equal(lines, want) {
		t.Fatalf("bad lines %v, want %v:\n%s", lines, want, firstErr)
	}
}

// A line longer than a scores file's limit is reported with its number
// and the lines after it are still scored (bufio.Scanner stopped there).
func TestEvaluateLongLine(t *testing.T) {
	defer func(most int) { maxScoresLine = most }(maxScoresLine)
	maxScoresLine = 1000 // a 64 MiB line would make the process big
	in := scoresWithFaults(t)
	lines := strings.SplitAfter(in, "\n")
	lines[2] = strings.Repeat("x", maxScoresLine+1) + "\n"
	in = strings.Join(lines, "")
	status, out, errOut := runCLI(t, in, "evaluate", "-net", "sp-counter", "-scores", "-", "-format", "json")
	if status != 1 || !strings.Contains(errOut, "standard input:3: the line has 1001 bytes, more than the 1000") {
		t.Fatalf("status %d, stderr:\n%.400s", status, errOut)
	}
	if r := evalReport(t, out); len(r.Sources) != 2 || r.Sources[0].Inputs+r.Sources[1].Inputs != 40-5 {
		t.Fatalf("sources %+v, want 35 explanations scored", r.Sources)
	}
}

// Ctrl-C stops attribute promptly even while it waits for standard input
// (a terminal): exit status 130, "interrupted", and nothing after it.
func TestAttributeInterrupted(t *testing.T) {
	f := attributeFlags{cfg: score.DefaultConfig(), format: "json"}
	f.cfg.Net, f.cfg.Method, f.cfg.Workers = "sp-counter", "ig", 2
	var out, errOut lockedBuffer // written while the test reads them
	job, err := newAttributeJob(f, &out)
	if err != nil {
		t.Fatal(err)
	}
	r, w := io.Pipe()
	defer w.Close()
	go io.WriteString(w, "accb\nxyz\nab\n") // then nothing, never closed
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() { done <- job.run(ctx, nil, r, &errOut) }()
	for deadline := time.Now().Add(10 * time.Second); strings.Count(out.String(), "\n") < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the lines read were not written")
		}
	}
	cancel()
	select {
	case status := <-done:
		if status != exitInterrupted || !strings.HasSuffix(errOut.String(), "whitebox attribute: interrupted\n") {
			t.Fatalf("status %d, stderr %q", status, errOut.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("attribute still runs 5 s after Ctrl-C")
	}
	if !strings.Contains(errOut.String(), `line 2: "xyz"`) {
		t.Fatalf("stderr %q: the bad line is missing", errOut.String())
	}
}

// lockedBuffer is a bytes.Buffer for one writer and one reader at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
