//go:build unix

package regfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Check(file); err != nil {
		t.Errorf("regular file: %v", err)
	}
	if err := Flag("-vocab", dir); err == nil || err.Error() != "-vocab "+dir+": a directory, not a regular file" {
		t.Errorf("directory: %v", err)
	}
	if err := Check(filepath.Join(dir, "missing")); err == nil || !os.IsNotExist(err) {
		t.Errorf("missing: %v", err)
	}
	if err := Flag("-classes", filepath.Join(dir, "missing")); err == nil || err.Error() != "-classes "+filepath.Join(dir, "missing")+": no such file or directory" {
		t.Errorf("missing flag: %v", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	if err := Check(fifo); err == nil || !strings.Contains(err.Error(), "a named pipe, not a regular file") {
		t.Errorf("fifo: %v", err)
	}
	if err := Check(os.DevNull); err == nil || !strings.Contains(err.Error(), "a device, not a regular file") {
		t.Errorf("%s: %v", os.DevNull, err)
	}
}
