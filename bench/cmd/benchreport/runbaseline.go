package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/whitebox-lstm/whitebox/bench"
)

// goCase is one of our benchmarks measured beside the baseline script.
type goCase struct {
	name    string // the full benchmark name, as baseline.py prints it
	method  string
	h, d, t int
	steps   int
	cpus    string // go test -cpu
	large   bool   // left out by -skip-large
	long    bool   // left out by -quick
	rss     bool   // report the process's peak RSS
}

// baselineCases mirror baseline.py's cases (issue 4's workloads).
func baselineCases() []goCase {
	return []goCase{
		{name: "BenchmarkIG/net=sp-counter/T=256/steps=50", method: "ig", h: 7, d: 4, t: 256, steps: 50, cpus: "1"},
		{name: igSmall, method: "ig", h: 7, d: 4, t: 256, steps: 1000, cpus: "1,2"},
		{name: "BenchmarkIG/net=sp-counter/T=256/steps=10000", method: "ig", h: 7, d: 4, t: 256, steps: 10000, cpus: "1", long: true},
		{name: "BenchmarkIG/net=sp-counter/T=4096/steps=1000", method: "ig", h: 7, d: 4, t: 4096, steps: 1000, cpus: "1", long: true},
		{name: igLarge, method: "ig", h: 7, d: 4, t: 4096, steps: 10000, cpus: "1", large: true, long: true, rss: true},
		{name: igDense, method: "ig", h: 256, d: 128, t: 256, steps: 50, cpus: "1"},
		{name: occLarge, method: "occlusion", h: 7, d: 4, t: 4096, cpus: "1", long: true},
		{name: "BenchmarkOcclusion/net=sp-fsa/T=4096", method: "occlusion", h: 36, d: 4, t: 4096, cpus: "1", large: true, long: true},
		{name: "BenchmarkLRP/net=sp-counter/T=256", method: "lrp", h: 7, d: 4, t: 256, cpus: "1"},
		{name: "BenchmarkLRP/net=sp-counter/T=4096", method: "lrp", h: 7, d: 4, t: 4096, cpus: "1", long: true},
		{name: "BenchmarkLRP/net=dense-h256/T=4096", method: "lrp", h: 256, d: 128, t: 4096, cpus: "1", long: true},
		// Imported models (model/testdata): 4 cells of H = 64 are about one of H = 128.
		{name: igImportedH256, method: "ig", h: 256, d: 100, t: 200, steps: 50, cpus: "1"},
		{name: igImportedBi2, method: "ig", h: 128, d: 64, t: 200, steps: 50, cpus: "1"},
	}
}

// pattern anchors every level of a benchmark name for go test -bench.
func pattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + p + "$"
	}
	return strings.Join(parts, "/")
}

// caseBudget bounds one case's time on our side; count is lowered to fit
// (each run also makes one warm-up call).
const caseBudget = 180.0 // seconds

// runBaseline runs baseline.py and then our side of every case, in one
// invocation, into one stored file.
func runBaseline(o options, root, dir string, hdr *header) (string, error) {
	tmp, err := os.MkdirTemp("", "benchreport")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "bench.test")
	if err := stream(root, []string{"go", "test", "-c", "-o", bin, "./bench"}, os.Stderr); err != nil {
		return "", err
	}

	py := []string{o.python, "bench/baseline/baseline.py", "--repeat", fmt.Sprint(o.bcount)}
	if o.skipLarge {
		py = append(py, "--skip-large")
	}
	if o.quick {
		py = append(py, "--quick")
	}
	hdr.set("command", "go run ./bench/cmd/benchreport "+strings.Join(os.Args[1:], " "))
	var buf bytes.Buffer
	buf.WriteString(hdr.String())
	fmt.Fprintf(os.Stderr, "benchreport: %s\n", strings.Join(py, " "))
	if err := stream(root, py, &buf); err != nil {
		return "", err
	}
	// Back to our engine: drop the Python block's keys.
	buf.WriteString("engine: go\ntorch:\nnumpy:\npython:\nig-chunk:\nocclusion-batch:\n")

	for _, c := range baselineCases() {
		if (c.large && o.skipLarge) || (c.long && o.quick) {
			continue
		}
		est := bench.Work(c.method, c.h, c.d, c.t, c.steps) / 3e9
		count := o.bcount
		if float64(count)*2*est > caseBudget {
			count = max(1, int(caseBudget/(2*est)))
		}
		// One process per thread count: with a -cpu list, go test runs the
		// first sample of a sub-benchmark at the previous list entry's
		// GOMAXPROCS (seen with go1.26: -cpu 1,2 gives a "1 thread" sample
		// at 2 threads). With several thread counts, the processes take
		// turns, one sample each, so that the machine's drift (these
		// shared cores ran the same binary 10% slower from one minute to
		// the next) reaches every thread count alike and not their ratio.
		runs, per := []string{c.cpus}, count
		if cpus := strings.Split(c.cpus, ","); len(cpus) > 1 {
			runs, per = nil, 1
			for range count {
				runs = append(runs, cpus...)
			}
		}
		for _, cpus := range runs {
			args := []string{bin, "-test.run", "^$", "-test.bench", pattern(c.name), "-test.count", fmt.Sprint(per),
				"-test.cpu", cpus, "-test.timeout", "0", "-maxwork", "1e300"}
			fmt.Fprintf(os.Stderr, "benchreport: %s\n", strings.Join(args, " "))
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Dir = filepath.Join(root, "bench")
			var out bytes.Buffer
			cmd.Stdout = &out
			cmd.Stderr = os.Stderr
			err := cmd.Run()
			os.Stderr.Write(out.Bytes())
			if err != nil {
				return "", fmt.Errorf("%s: %w", c.name, err)
			}
			fmt.Fprintf(&buf, "threads: %s\n", cpus)
			buf.Write(out.Bytes())
			// The peak of the whole test process, which ran only this case.
			if rss, ok := peakRSSBytes(cmd.ProcessState); ok && c.rss {
				fmt.Fprintf(&buf, "%s\t1\t%d B\n", peakRSS, rss)
			}
		}
	}
	path := resultPath(dir, hdr, "_baseline")
	return path, os.WriteFile(path, clean(buf.Bytes()), 0o644)
}
