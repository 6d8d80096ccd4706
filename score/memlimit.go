package score

import "fmt"

// MemoryOverhead is what a process that scores within a budget may use
// beyond it: the program, the runtime, the model's weights (a few MB for
// the models this command reads) and the garbage collector's slack. The
// peak resident memory of `whitebox attribute` stays within -budget +
// MemoryOverhead (cmd/whitebox's TestAttributeMemoryBound measures it).
const MemoryOverhead = 64 << 20

// MemoryLimit returns the most memory this process may use, as far as it
// can tell: the least of the machine's physical memory, its control
// group's limit and RLIMIT_AS, with where that figure comes from (e.g.
// "/proc/meminfo MemTotal"). It returns 0 and "" where none is known (on
// systems other than Linux).
func MemoryLimit() (bytes int64, source string) { return memoryLimit() }

// checkBudget refuses a budget above the memory the process may use: the
// scratch it allows would end in a runtime out-of-memory crash instead of
// a message.
func checkBudget(flag, text string, budget int64) error {
	limit, source := MemoryLimit()
	if limit > 0 && budget > limit {
		return fmt.Errorf("%s %s (%d bytes) is more than the memory this process may use, %s from %s", flag, text, budget, formatSize(limit), source)
	}
	return nil
}

// formatSize writes a byte count with its size in GiB, for a message.
func formatSize(n int64) string {
	return fmt.Sprintf("%d bytes (%.1f GiB)", n, float64(n)/(1<<30))
}
