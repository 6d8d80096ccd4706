package main

import (
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readmeServer is the documents' server started in the background
// ("whitebox serve … &"): TestREADME starts it, waits until it is ready
// (/readyz), and stops it with SIGTERM at "kill %1" or at the end of the
// document, requiring exit status 0. curl commands, without curl on
// PATH, are not run.
type readmeServer struct {
	cmd  *exec.Cmd
	out  lockedBuffer // corpus_test.go's
	done chan error
	addr string
}

// handle runs line if it is one of the server's: it reports whether it
// was (run, or not run with the reason logged).
func (s *readmeServer) handle(t *testing.T, dir string, env []string, line string) bool {
	t.Helper()
	switch {
	case strings.HasPrefix(line, "whitebox serve ") && strings.HasSuffix(line, " &"):
		s.start(t, dir, env, strings.TrimSuffix(line, " &"))
		return true
	case line == "kill %1":
		if s.cmd == nil {
			t.Fatalf("%q with no server started", line)
		}
		s.stop(t)
		return true
	case strings.HasPrefix(line, "curl "):
		if _, err := exec.LookPath("curl"); err != nil {
			t.Logf("not run (no curl here): %s", line)
			return true
		}
		if s.cmd == nil {
			t.Fatalf("%q with no server started", line)
		}
	}
	return false
}

func (s *readmeServer) start(t *testing.T, dir string, env []string, line string) {
	t.Helper()
	if s.cmd != nil {
		t.Fatalf("%q: a server runs already", line)
	}
	s.addr = "127.0.0.1:8080"
	if f := strings.Fields(line); len(f) > 0 {
		for i := range f[:len(f)-1] {
			if f[i] == "-addr" {
				s.addr = f[i+1]
			}
		}
	}
	s.cmd = exec.Command("bash", "-c", "exec "+line)
	s.cmd.Dir, s.cmd.Env = dir, env
	s.cmd.Stdout, s.cmd.Stderr = &s.out, &s.out
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	s.done = make(chan error, 1)
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() {
		if s.cmd != nil {
			s.stop(t)
		}
	})
	c := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(time.Minute)
	for {
		select {
		case err := <-s.done:
			s.cmd = nil
			t.Fatalf("%s: ended before it was ready (%v):\n%s", line, err, s.out.String())
		default:
		}
		if resp, err := c.Get("http://" + s.addr + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not ready after a minute:\n%s", line, s.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop sends SIGTERM and requires exit status 0 within a minute.
func (s *readmeServer) stop(t *testing.T) {
	t.Helper()
	cmd := s.cmd
	s.cmd = nil
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("whitebox serve after SIGTERM: %v:\n%s", err, s.out.String())
		}
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-s.done
		t.Errorf("whitebox serve did not stop within a minute of SIGTERM:\n%s", s.out.String())
	}
}
