//go:build linux

package score

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

func memoryLimit() (int64, string) {
	var best int64
	var source string
	take := func(n int64, where string) {
		if n > 0 && (best == 0 || n < best) {
			best, source = n, where
		}
	}
	take(memTotal(), "/proc/meminfo MemTotal")
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if b, err := os.ReadFile(p); err == nil {
			// "max" (v2) or a page-rounded 2^63 (v1) when unlimited: no
			// number, or one above physical memory, which take ignores.
			if n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64); err == nil {
				take(n, "the cgroup limit "+p)
			}
		}
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &rl); err == nil && rl.Cur > 0 && uint64(rl.Cur) < 1<<62 {
		take(int64(rl.Cur), "RLIMIT_AS")
	}
	return best, source
}

// memTotal reads MemTotal from /proc/meminfo ("MemTotal: 16384 kB"), 0 if
// it cannot.
func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil && kb > 0 && kb < 1<<50 {
				return kb << 10
			}
		}
	}
	return 0
}
