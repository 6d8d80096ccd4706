package kernel

import (
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// asmConstants are the float64 constants the assembly files must repeat,
// by the name of their DATA symbols.
var asmConstants = map[string]float64{
	"expMaxArg": expMaxArg, "expMinArg": expMinArg, "expLog2E": expLog2E,
	"expLn2Hi": expLn2Hi, "expLn2Lo": expLn2Lo,
	"expC2": expC2, "expC3": expC3, "expC4": expC4, "expC5": expC5, "expC6": expC6,
	"expC7": expC7, "expC8": expC8, "expC9": expC9, "expC10": expC10, "expC11": expC11,
	"expC12": expC12, "expC13": expC13,
	"expMagic":  1<<expMantBits + expBias,
	"tanhSmall": tanhSmall, "tanhSat": tanhSat, "sigmoidSat": sigmoidSat,
	"tanhP0": tanhP0, "tanhP1": tanhP1, "tanhP2": tanhP2,
	"tanhQ0": tanhQ0, "tanhQ1": tanhQ1, "tanhQ2": tanhQ2,
	"one": 1, "half": 0.5, "minusTwo": -2, "zero": 0,
	"signMask": math.Float64frombits(1 << 63), "absMask": math.Float64frombits(1<<63 - 1),
}

// dataLine matches a DATA line; the constant's name is the symbol's, or the
// first word of a trailing comment for tables that hold several constants.
var dataLine = regexp.MustCompile(`^DATA\s+(\w+)<>\+(\w+)\(SB\)/8,\s*\$(0x[0-9a-fA-F]+)(?:\s*//\s*(\w+))?`)

// TestAsmConstants checks every 8-byte DATA value of the assembly files
// against the Go constant of the same name, so the twins and the assembly
// cannot drift apart.
func TestAsmConstants(t *testing.T) {
	for _, file := range []string{"kernel_amd64.s", "kernel_arm64.s"} {
		src, err := os.ReadFile(file)
		if os.IsNotExist(err) {
			t.Skipf("%s not found (run from the package directory)", file)
		}
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, line := range strings.Split(string(src), "\n") {
			m := dataLine.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			name := m[1]
			if m[4] != "" {
				name = m[4]
			}
			want, ok := asmConstants[name]
			if !ok {
				if m[4] != "" {
					t.Errorf("%s: %q names no Go constant", file, line)
				}
				continue
			}
			bits, err := strconv.ParseUint(m[3], 0, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", file, line, err)
			}
			if bits != math.Float64bits(want) {
				t.Errorf("%s: %s+%s (%s) is %#016x (%v), the Go constant is %#016x (%v)", file, m[1], m[2], name, bits, math.Float64frombits(bits), math.Float64bits(want), want)
			}
			seen[name]++
		}
		for _, name := range []string{"expC13", "expLn2Hi", "tanhP0", "tanhQ2"} {
			if seen[name] == 0 {
				t.Errorf("%s: no DATA for %s", file, name)
			}
		}
	}
}

// TestAsmRequires checks the generator's "// Requires:" lines against the
// features the dispatch in kernel_amd64.go tests for each path.
func TestAsmRequires(t *testing.T) {
	src, err := os.ReadFile("kernel_amd64.s")
	if os.IsNotExist(err) {
		t.Skip("kernel_amd64.s not found (run from the package directory)")
	}
	if err != nil {
		t.Fatal(err)
	}
	// CMOV is part of the amd64 baseline (GOAMD64=v1).
	allowed := map[string]map[string]bool{
		"AVX2":   {"AVX": true, "AVX2": true, "FMA3": true, "CMOV": true},
		"AVX512": {"AVX": true, "AVX512F": true, "AVX512VL": true, "FMA3": true, "CMOV": true},
	}
	lines := strings.Split(string(src), "\n")
	n := 0
	for i, line := range lines {
		name, ok := strings.CutPrefix(line, "TEXT ·")
		if !ok {
			continue
		}
		name = name[:strings.Index(name, "(")]
		suffix := "AVX2"
		if strings.HasSuffix(name, "AVX512") {
			suffix = "AVX512"
		}
		req, ok := strings.CutPrefix(lines[i-1], "// Requires: ")
		if !ok {
			t.Errorf("%s: no Requires line", name)
			continue
		}
		for _, f := range strings.Split(req, ", ") {
			if !allowed[suffix][f] {
				t.Errorf("%s requires %s, which the %s dispatch does not check", name, f, suffix)
			}
		}
		n++
	}
	if n != 24 {
		t.Errorf("found %d TEXT blocks, want 24", n)
	}
}
