//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/whitebox-lstm/whitebox/score"
)

// The default -budget bounds the peak resident memory of every method on
// inputs of 10³ to 10⁶ tokens: each run either scores the input or refuses
// it, and stays within the budget plus score.MemoryOverhead (issue 25,
// case 4). The built command runs as a child; its peak is getrusage's
// ru_maxrss (about 10 s). Occlusion is quadratic
// in T: it runs up to 10⁴ tokens on a white-box net and 10³ on a model,
// and at 10⁶ tokens, which the input gate refuses; a model's IG up to 10⁴.
func TestAttributeMemoryBound(t *testing.T) {
	if testing.Short() {
		// It builds the command and runs it as a child: not under qemu
		// (CI's arm64 run is -short), nor in the quick runs.
		t.Skip("-short: builds and runs the command")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "whitebox")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	budget, err := score.ParseSize(score.DefaultConfig().Budget)
	if err != nil {
		t.Fatal(err)
	}
	bound := budget + score.MemoryOverhead
	type subject struct {
		name  string
		args  []string
		token string
		occ   int // the longest occlusion run short of the refusal
		ig    int // the longest IG run short of the refusal
	}
	for _, s := range []subject{
		{"counting", []string{"-net", "counting"}, "a", 10000, 1000000},
		// A model's IG runs on checkpoints past 10⁴ tokens (minutes at
		// 10⁵: cell's tests check checkpointed runs).
		{"bi2", []string{"-model", "../../model/testdata/bi2.safetensors"}, "3 ", 1000, 10000},
	} {
		for _, n := range []int{1000, 10000, 100000, 1000000} {
			in := filepath.Join(dir, fmt.Sprintf("%s-%d.txt", s.name, n))
			if err := os.WriteFile(in, []byte(strings.Repeat(s.token, n)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, m := range []string{"saliency", "gxi", "lrp", "ig", "occlusion"} {
				if (m == "occlusion" && n > s.occ || m == "ig" && n > s.ig) && n < 1000000 {
					continue
				}
				f, err := os.Open(in)
				if err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(bin, append([]string{"attribute", "-method", m}, s.args...)...)
				var stderr bytes.Buffer
				cmd.Stdin, cmd.Stdout, cmd.Stderr = f, nil, &stderr
				err = cmd.Run()
				f.Close()
				if err != nil && cmd.ProcessState.ExitCode() != 1 {
					t.Fatalf("%s %s %d: %v\n%s", s.name, m, n, err, stderr.String())
				}
				refused := cmd.ProcessState.ExitCode() == 1
				if refused && !strings.Contains(stderr.String(), "budget") { // a refusal names the budget it would overrun
					t.Errorf("%s %s %d: failed, but not for memory: %.300s", s.name, m, n, stderr.String())
				}
				if strings.Contains(stderr.String(), "fatal error") || strings.Contains(stderr.String(), "goroutine ") {
					t.Fatalf("%s %s %d: the runtime died: %.300s", s.name, m, n, stderr.String())
				}
				peak := int64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) << 10 // KiB on Linux
				t.Logf("%-8s %-9s %7d tokens: peak %4d MiB, refused %v", s.name, m, n, peak>>20, refused)
				if peak > bound {
					t.Errorf("%s %s %d tokens: peak RSS %d bytes, more than the budget %d + overhead %d", s.name, m, n, peak, budget, score.MemoryOverhead)
				}
			}
		}
	}
}
