package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/whitebox-lstm/whitebox/beam/pipeline"
	"github.com/whitebox-lstm/whitebox/score"
)

func TestMain(m *testing.M) {
	flag.Parse()
	beam.Init()
	os.Exit(m.Run())
}

// Beam registers dozens of global flags: none of ours is one of them.
func TestFlagsDoNotCollide(t *testing.T) {
	n := 0
	newFlags(new(options)).VisitAll(func(f *flag.Flag) {
		n++
		if flag.CommandLine.Lookup(f.Name) != nil {
			t.Errorf("-%s is also a Beam flag", f.Name)
		}
	})
	if n < 25 || flag.CommandLine.Lookup("runner") == nil || flag.CommandLine.Lookup("worker_binary") == nil {
		t.Fatalf("%d flags of ours; Beam's -runner or -worker_binary missing", n)
	}
}

func TestSplitArgs(t *testing.T) {
	mine, theirs := splitArgs(newFlags(new(options)), flag.CommandLine, []string{
		"-net", "counting", "--runner=flink", "-method", "ig", "a.txt", "-endpoint", "localhost:8099",
		"-features", "b*.txt", "--environment_type", "LOOPBACK", "-h", "-bogus", "--", "-endpoint"})
	wantMine := []string{"-net", "counting", "-method", "ig", "a.txt", "-features", "b*.txt", "-h", "-bogus", "--", "-endpoint"}
	wantTheirs := []string{"--runner=flink", "-endpoint", "localhost:8099", "--environment_type", "LOOPBACK"}
	if !slices.Equal(mine, wantMine) || !slices.Equal(theirs, wantTheirs) {
		t.Fatalf("ours %q, Beam's %q", mine, theirs)
	}
}

// -h prints our usage and flags (not Beam's) and exits 0; usage errors
// exit 2.
func TestUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if status := run(context.Background(), []string{"-h"}, &out, &errOut); status != 0 {
		t.Fatalf("-h: status %d", status)
	}
	if s := errOut.String(); !strings.Contains(s, "Usage: whitebox-beam") || !strings.Contains(s, "-shards") || !strings.Contains(s, "-captum-weights") || strings.Contains(s, "dataflow_kms_key") {
		t.Fatalf("-h: %s", s)
	}
	for _, args := range [][]string{
		{"-net", "counting", "-method", "ig", "x.txt"},                           // no -out
		{"-net", "counting", "-method", "ig", "-out", "o"},                       // no input
		{"-net", "nope", "-method", "ig", "-out", "o", "x.txt"},                  // bad network
		{"-net", "counting", "-method", "ig", "-out", "o", "/nonexistent/*.txt"}, // no file
		{"-bogus"},
	} {
		errOut.Reset()
		if status := run(context.Background(), args, &out, &errOut); status != 2 || errOut.Len() == 0 {
			t.Errorf("%q: status %d, %q", args, status, errOut.String())
		}
	}
}

// The command, end to end on prism: a bad line is in the errors output and
// makes the status 1; the others are scored.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	long := strings.Repeat("ab", 150000) // more than -budget allows one input
	if err := os.WriteFile(in, []byte("ab\nba\n\naxb\naabb\n"+long+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Join(dir, "out", "s")
	var out, errOut bytes.Buffer
	budget := fmt.Sprint(score.MinBudget * runtime.GOMAXPROCS(0))
	status := run(context.Background(), []string{"-net", "counting", "-method", "lrp", "-out", prefix, "-shards", "2", "-chunk", "1", "-budget", budget, in}, &out, &errOut)
	if status != 1 || !strings.Contains(errOut.String(), "3 lines scored, 2 failed") {
		t.Fatalf("status %d: %s", status, errOut.String())
	}
	var all, errs []byte
	for i := range 2 {
		b, err := os.ReadFile(pipeline.ShardName(prefix, i, 2, false))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
		b, err = os.ReadFile(pipeline.ShardName(prefix, i, 2, true))
		if err != nil {
			t.Fatal(err)
		}
		errs = append(errs, b...)
	}
	if bytes.Count(all, []byte("\n")) != 3 || !bytes.Contains(errs, []byte(`"line":4,"input":"axb","error":`)) ||
		!bytes.Contains(errs, []byte(`"line":6,"input":"ababab`)) || !bytes.Contains(errs, []byte(`the line has 300000 bytes`)) {
		t.Fatalf("output %s\nerrors %s", all, errs)
	}
	if _, err := os.Stat(prefix + ".parts"); !os.IsNotExist(err) {
		t.Errorf("the parts folder is left: %v", err)
	}
}
