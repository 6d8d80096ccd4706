package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/klauspost/cpuid/v2"
)

// header describes the run at the head of a results file: "# key: value"
// lines. They are comments to benchfmt, not configuration, so that
// benchstat compares a stored run with a fresh one (or with a plain go
// test -bench output) without an -ignore list: configuration keys that
// differ between two files (the date, the commit, the command) would put
// their results in separate tables. The machine is configuration already:
// go test's own goos, goarch, pkg and cpu lines. parseResults reads the
// comments back.
type header struct {
	keys []string
	vals map[string]string
}

// headerPrefix starts a header line.
const headerPrefix = "# "

func (h *header) set(k, v string) {
	if h.vals == nil {
		h.vals = map[string]string{}
	}
	if _, ok := h.vals[k]; !ok {
		h.keys = append(h.keys, k)
	}
	h.vals[k] = strings.Join(strings.Fields(v), " ") // one line, as benchfmt needs
}

func (h *header) String() string {
	var b strings.Builder
	for _, k := range h.keys {
		fmt.Fprintf(&b, "%s%s: %s\n", headerPrefix, k, h.vals[k])
	}
	return b.String()
}

// machineHeader describes the commit, the toolchain and the CPU.
func machineHeader(root string, now time.Time) *header {
	h := &header{}
	h.set("date", now.UTC().Format(time.RFC3339))
	h.set("commit", commit(root))
	h.set("go", goVersion(root))
	h.set("goamd64", goEnv(root, "GOAMD64"))
	h.set("cpuid-brand", cpuid.CPU.BrandName)
	h.set("x64-level", fmt.Sprint(cpuid.CPU.X64Level()))
	h.set("l1d", size(cpuid.CPU.Cache.L1D))
	h.set("l2", size(cpuid.CPU.Cache.L2))
	h.set("l3", size(cpuid.CPU.Cache.L3))
	h.set("cores", fmt.Sprintf("%d logical, %d physical", cpuid.CPU.LogicalCores, cpuid.CPU.PhysicalCores))
	h.set("kernel-impl", kernelImpl(root))
	return h
}

// level is the file-name form of the CPU level: x86-64-v4, or the GOARCH.
func level() string {
	if runtime.GOARCH == "amd64" {
		return fmt.Sprintf("x86-64-v%d", cpuid.CPU.X64Level())
	}
	return runtime.GOARCH
}

func size(n int) string {
	switch {
	case n <= 0:
		return "unknown"
	case n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// commit is the short commit of HEAD, with -dirty when the work tree has
// changes, so that a stored result never claims a commit it did not run.
func commit(root string) string {
	out, err := run(root, "git", "rev-parse", "--short", "HEAD")
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(out)
	if st, err := run(root, "git", "status", "--porcelain", "--untracked-files=no"); err == nil && strings.TrimSpace(st) != "" {
		c += "-dirty"
	}
	return c
}

func goVersion(root string) string {
	out, err := run(root, "go", "env", "GOVERSION")
	if err != nil {
		return runtime.Version()
	}
	return strings.TrimSpace(out)
}

func goEnv(root, key string) string {
	out, err := run(root, "go", "env", key)
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(out)
}

// kernelImpl asks package kernel which implementation it chose on this CPU
// (kernel.Impl()). The function may not exist yet in the checked-out tree,
// so it is looked for in the source and called from a throwaway program
// rather than linked into this command; without it the kernels are the
// pure-Go ones.
func kernelImpl(root string) string {
	if !hasFunc(filepath.Join(root, "kernel"), "Impl") {
		return "generic (kernel.Impl not present)"
	}
	dir, err := os.MkdirTemp("", "benchreport-impl")
	if err != nil {
		return "unknown: " + err.Error()
	}
	defer os.RemoveAll(dir)
	src := "package main\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/whitebox-lstm/whitebox/kernel\"\n)\n\nfunc main() { fmt.Println(kernel.Impl()) }\n"
	prog := filepath.Join(dir, "main.go")
	if err := os.WriteFile(prog, []byte(src), 0o644); err != nil {
		return "unknown: " + err.Error()
	}
	out, err := run(root, "go", "run", prog)
	if err != nil {
		return "unknown: " + err.Error()
	}
	return strings.TrimSpace(out)
}

// hasFunc reports whether the package in dir declares the top-level
// function name (not a method) in a non-test file.
func hasFunc(dir, name string) bool {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == name {
				return true
			}
		}
	}
	return false
}

func run(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return "", fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return string(out), nil
}
