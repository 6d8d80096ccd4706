package attrib

import (
	"context"
	"errors"

	"github.com/whitebox-lstm/whitebox/cell"
)

// contextualDecomposition is contextual decomposition's scores of x (being
// built).
func (e *Explainer) contextualDecomposition(ctx context.Context, x cell.Input, opt Options, res *Result) error {
	return errors.New("attrib: contextual decomposition is not built yet")
}
