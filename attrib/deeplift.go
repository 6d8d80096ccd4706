package attrib

import (
	"context"
	"errors"

	"github.com/whitebox-lstm/whitebox/cell"
)

// deepLIFT is DeepLIFT's scores of x (being built).
func (e *Explainer) deepLIFT(ctx context.Context, x cell.Input, opt Options, res *Result) error {
	return errors.New("attrib: DeepLIFT is not built yet")
}
