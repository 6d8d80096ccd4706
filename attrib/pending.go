package attrib

import "strings"

// NotBuilt reports whether err is the error of a method whose
// implementation has not landed yet ("… is not built yet": contextual
// decomposition's placeholder, until its branch is merged). Commands that
// run every method by default leave such a method out, with a note,
// instead of failing; once every method is built it is never true.
func NotBuilt(err error) bool {
	return err != nil && strings.Contains(err.Error(), "is not built yet")
}
