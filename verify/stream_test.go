package verify

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/model"
)

// sameCase reports whether parseFast read b as parseLine does: it reads
// only lines that parseLine reads, to the same bits.
func sameCase(t *testing.T, b []byte, vocab, classes int) {
	t.Helper()
	want, err := parseLine(b, vocab, classes)
	s := scanner{vocab: vocab, classes: classes}
	if !s.parseFast(b) {
		return // parseLine reads it
	}
	if err != nil {
		t.Fatalf("%q: parseFast read a line parseLine refuses (%v)", b, err)
	}
	same := reflect.DeepEqual(s.c.IDs, want.IDs) && len(s.c.Logits) == len(want.Logits)
	for k := range want.Logits {
		same = same && math.Float64bits(s.c.Logits[k]) == math.Float64bits(want.Logits[k])
	}
	if !same {
		t.Fatalf("%q: parseFast %v %v, parseLine %v %v", b, s.c.IDs, s.c.Logits, want.IDs, want.Logits)
	}
}

// parseFast reads the usual lines, to parseLine's bits, and leaves every
// other line to parseLine.
func TestParseFast(t *testing.T) {
	usual := []string{
		`{"ids":[1,2],"logits":[0.5,-1e-3,2]}`,
		` { "logits" : [ -0 , 1E+2 , 3.25e-310 ] , "ids" : [ 0 , 4 ] } ` + "\r",
		`{"ids":[-0],"logits":[1,2,3]}`,
		`{"ids":[4],"logits":[0.1,0.2,0.30000000000000004]}`,
		"{\"ids\":[3]\t,\n\"logits\":[1.7976931348623157e308,-5e-324,123456789012345678901234567890]}",
	}
	for _, line := range usual {
		s := scanner{vocab: 5, classes: 3}
		if !s.parseFast([]byte(line)) {
			t.Errorf("%q: not read by parseFast", line)
		}
		sameCase(t, []byte(line), 5, 3)
	}
	for _, line := range []string{
		`{"ids":[1],"logits":[1,2,3],"text":"x"}`, `{"IDS":[1],"logits":[1,2,3]}`, `{"ids":[1],"ids":[2],"logits":[1,2,3]}`,
		`{"ids":[5],"logits":[1,2,3]}`, `{"ids":[-1],"logits":[1,2,3]}`, `{"ids":[1e0],"logits":[1,2,3]}`, `{"ids":[1.0],"logits":[1,2,3]}`,
		`{"ids":[9223372036854775808],"logits":[1,2,3]}`, `{"ids":[01],"logits":[1,2,3]}`, `{"ids":[],"logits":[1,2,3]}`,
		`{"ids":[1],"logits":[1,2]}`, `{"ids":[1],"logits":[1,1e999,3]}`, `{"ids":[1],"logits":[1,.5,3]}`, `{"ids":[1],"logits":[1,2,3,]}`,
		`{"ids":[1],"logits":[1,2,3]} {}`, `{"ids":[1],"logits":[1,2,3]} }`, `{"ids":[1],"logits":[1,2,3]`, `{"ids":[1]}`, `{}`,
		`{"ids":null,"logits":[1,2,3]}`, `{"ids":[1],"logits":[1,-,3]}`, `{"ids":[1],"logits":[1,2e,3]}`, `{"\u0069ds":[1],"logits":[1,2,3]}`,
		`{"ids":[1],"logits":[1,2,3],}`, `[1,2]`, ``, `{"ids":[1] "logits":[1,2,3]}`, `{"ids":[1],"logits":[1,2,3]}x`,
	} {
		sameCase(t, []byte(line), 5, 3)
		s := scanner{vocab: 5, classes: 3}
		if s.parseFast([]byte(line)) {
			t.Errorf("%q: read by parseFast, a line for parseLine", line)
		}
	}
	rng := rand.New(rand.NewPCG(39, 2))
	for range 2000 {
		var b strings.Builder
		fmt.Fprintf(&b, `{"ids":[%d`, rng.IntN(7)-1)
		for range rng.IntN(5) {
			fmt.Fprintf(&b, ", %d", rng.IntN(7)-1)
		}
		b.WriteString(`], "logits": [`)
		for k := range 3 {
			if k > 0 {
				b.WriteString(",")
			}
			b.WriteString(strings.TrimPrefix(fmt.Sprint(math.Ldexp(rng.NormFloat64(), rng.IntN(2100)-1075)), "+"))
		}
		b.WriteString("]}")
		sameCase(t, []byte(b.String()), 5, 3)
	}
}

// FuzzParseFast: parseFast reads only what parseLine reads, to its bits.
func FuzzParseFast(f *testing.F) {
	f.Add([]byte(`{"ids":[1,2],"logits":[0.5,-1,2]}`))
	f.Add([]byte(`{"logits":[1e-3,2E+1,-0],"ids":[0]}`))
	f.Fuzz(func(t *testing.T, b []byte) { sameCase(t, b, 20, 3) })
}

// liveHeap is the live heap after a collection, and the bytes allocated
// so far.
func liveHeap() (live, total uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, ms.TotalAlloc
}

// TestOpenStreams (issue 39, B): a verify file of MaxLines lines is read
// one line at a time: under a 1 MiB budget, Open checks it allocating far
// less than the file, and it and a pass through the model keep a live
// heap of kilobytes (ReadFile keeps every case: 13 MB of a 9 MB file),
// with the verdict of the cases in memory.
func TestOpenStreams(t *testing.T) {
	const dir = "../model/testdata/heads/"
	m, err := model.Load(dir+"mean_uni2.safetensors", model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mean, err := m.WithHead(cell.HeadMean, m.Act)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := ReadFile(dir+"mean_uni2.verify.jsonl", m.Vocab, m.Net.Classes())
	if err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	for i := range MaxLines {
		c := ref[i%len(ref)]
		fmt.Fprintf(&file, `{"ids":%s,"logits":[%v,%v,%v]}`+"\n", strings.Join(strings.Fields(fmt.Sprint(c.IDs)), ","), c.Logits[0], c.Logits[1], c.Logits[2])
	}
	path := filepath.Join(t.TempDir(), "big.verify.jsonl")
	if err := os.WriteFile(path, file.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	size := uint64(file.Len())
	file = bytes.Buffer{}

	live0, total0 := liveHeap()
	vf, err := Open(path, m.Vocab, m.Net.Classes(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer vf.Close()
	live1, total1 := liveHeap()
	if vf.Len() != MaxLines {
		t.Fatalf("%d lines, want %d", vf.Len(), MaxLines)
	}
	v, err := vf.Check(mean)
	if err != nil {
		t.Fatal(err)
	}
	live2, total2 := liveHeap()
	runtime.KeepAlive(vf)
	t.Logf("file %d KiB: Open allocates %d KiB (live %d KiB), Check %d KiB (live %d KiB)", size>>10, (total1-total0)>>10, int64(live1-live0)>>10, (total2-total1)>>10, int64(live2-live0)>>10)
	if total1-total0 > size/16 || int64(live1-live0) > 256<<10 {
		t.Errorf("Open of a %d-byte file allocates %d bytes and keeps %d", size, total1-total0, int64(live1-live0))
	}
	if int64(live2-live0) > 256<<10 {
		t.Errorf("Check keeps %d bytes of a %d-byte file", int64(live2-live0), size)
	}

	cases, err := ReadFile(path, m.Vocab, m.Net.Classes())
	if err != nil {
		t.Fatal(err)
	}
	live3, _ := liveHeap()
	t.Logf("ReadFile keeps %d KiB", int64(live3-live2)>>10)
	want, err := Check(mean, cases)
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(cases)
	if v != want || !v.Match() {
		t.Errorf("streamed %v, in memory %v", v, want)
	}
}

// A File gives every head the verdict, and Apply and Report the result
// and message, of its cases in memory.
func TestFileSameAsCases(t *testing.T) {
	for _, fx := range fixtures(t) {
		for _, act := range []string{"", "relu"} {
			if (act != "") != (fx.act != "") {
				continue
			}
			m, cases := load(t, fx, act, ".safetensors")
			vf, err := Open(fx.name+".verify.jsonl", m.Vocab, m.Net.Classes(), 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			all, err := vf.All(m)
			wantAll, wantErr := All(m, cases)
			if fmt.Sprint(all, err) != fmt.Sprint(wantAll, wantErr) {
				t.Errorf("%s: All %v %v, in memory %v %v", fx.name, all, err, wantAll, wantErr)
			}
			report, err := vf.Report(m)
			wantReport, wantErr := Report(m, cases)
			if report != wantReport || fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Errorf("%s: Report %q %v, in memory %q %v", fx.name, report, err, wantReport, wantErr)
			}
			for _, auto := range []bool{false, true} {
				got, err := vf.Apply(m, auto, false)
				want, wantErr := Apply(m, cases, fx.name+".verify.jsonl", auto, false)
				if fmt.Sprint(err) != fmt.Sprint(wantErr) || (err == nil && (got.Head != want.Head || got.Act != want.Act)) {
					t.Errorf("%s auto=%v: Apply %v, in memory %v", fx.name, auto, err, wantErr)
				}
			}
			if err := vf.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A line longer than the budget allows reading, or one whose forward pass
// takes more than the budget, is an error naming the budget; a line past
// MaxLineBytes is the file's error whatever the budget; the others read
// as Parse reads them.
func TestOpenBudget(t *testing.T) {
	const dir = "../model/testdata/heads/"
	m, err := model.Load(dir+"mean_uni2.safetensors", model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	write := func(content string) string {
		path := filepath.Join(t.TempDir(), "v.jsonl")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	ids := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat("3,", n), ",") + "]" }
	good := `{"ids":[1,2],"logits":[0.1,0.2,0.3]}` + "\n"

	long := write(good + `{"ids":` + ids(3000) + `,"logits":[0.1,0.2,0.3]}` + "\n")
	if _, err := Open(long, m.Vocab, 3, 100<<10); err == nil || !strings.Contains(err.Error(), long+":2: the line has 6032 bytes, more than the 2560 that verify.Open's budget 102400 allows a line") || !strings.Contains(err.Error(), "raise verify.Open's budget") {
		t.Errorf("a line over the budget: %v", err)
	}
	vf, err := Open(long, m.Vocab, 3, 8<<20)
	if err != nil {
		t.Fatalf("the same line under 8 MiB: %v", err)
	}
	defer vf.Close()
	if _, err := vf.Check(m); err != nil {
		t.Errorf("3,000 tokens under 8 MiB: %v", err)
	}
	huge := write(good + `{"ids":` + ids(30000) + `,"logits":[0.1,0.2,0.3]}` + "\n")
	vf2, err := Open(huge, m.Vocab, 3, 8<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer vf2.Close()
	_, err = vf2.Apply(m, false, false)
	if err == nil || !strings.Contains(err.Error(), "verify "+huge+": line 2: its 30000 tokens need about") || !strings.Contains(err.Error(), "more than verify.Open's budget 8388608 allows: raise verify.Open's budget") {
		t.Errorf("a forward pass over the budget: %v", err)
	}
	past := write(good + strings.Repeat(" ", MaxLineBytes+1) + "\n" + good)
	for _, budget := range []int64{0, 1 << 20, 1 << 30} {
		if _, err := Open(past, m.Vocab, 3, budget); err == nil || !strings.HasSuffix(err.Error(), past+":2: the line is longer than 1048576 bytes") {
			t.Errorf("budget %d: a line past MaxLineBytes: %v", budget, err)
		}
	}
	if _, err := Open(write("\n\n"), m.Vocab, 3, 1<<20); err == nil || !strings.Contains(err.Error(), "no lines") {
		t.Errorf("no lines: %v", err)
	}
}
