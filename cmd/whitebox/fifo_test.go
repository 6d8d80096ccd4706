//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Every file flag refuses a named pipe, a device and a directory at once,
// with one message, rather than hanging in open (issue 25, case 8).
func TestFileFlagsNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	model := "../../model/testdata/bi2.safetensors"
	for _, path := range []string{fifo, "/dev/zero", dir} {
		for _, c := range []struct {
			flag string
			args []string
		}{
			{"-model", []string{"attribute", "-method", "ig", "-model", path, "1"}},
			{"-model", []string{"inspect", "-model", path}},
			{"-vocab", []string{"attribute", "-method", "ig", "-model", model, "-vocab", path, "1"}},
			{"-classes", []string{"attribute", "-method", "ig", "-model", model, "-classes", path, "1"}},
			{"-data", []string{"reproduce", "-table", "5", "-data", path}},
			{"-scores", []string{"evaluate", "-net", "counting", "-scores", path}},
		} {
			done := make(chan struct{})
			var status int
			var errOut string
			go func() {
				status, _, errOut = runCLI(t, "", c.args...)
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("%v: still running after 10s", c.args)
			}
			if status == 0 || !strings.Contains(errOut, c.flag+" "+path+": ") || !strings.Contains(errOut, ", not a regular file") {
				t.Errorf("%v: status %d, stderr %q", c.args, status, errOut)
			}
		}
	}
}
