package cell

import "fmt"

// A BudgetError is a call refused, before it takes any memory, because
// its budget is too small for the input: RunOptions.Budget for the
// batched methods. Callers that hand out shares of a larger budget (the
// CLI gives each input -budget / workers / 2) can say so with errors.As.
type BudgetError struct {
	Budget int64  // the budget the call had, in bytes
	Need   int64  // the least the call needs, in bytes
	What   string // what needs it: "one lane of this 4096-step input"
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("cell: the budget of %d bytes is too small: %s needs %d bytes", e.Budget, e.What, e.Need)
}
