package proxy

import (
	"time"

	"github.com/hooks-gateway/hooks-gateway/internal/membudget"
	"github.com/hooks-gateway/hooks-gateway/metrics"
)

// admitBytes is what a model call reserves from the buffer budget before
// anything of it runs: the first read buffer of a stream. A call whose
// first bytes do not fit is refused; its answer then grows its share as
// it is buffered.
const admitBytes = 64 << 10

// budgetRetryAfter is the Retry-After of a call refused for the budget:
// buffered answers last seconds, so the budget frees up within that.
const budgetRetryAfter = 2 * time.Second

// admitBuffered reserves a model call's first bytes of the buffer budget,
// or refuses the call (503 overloaded, Retry-After) when they do not fit.
func (s *Server) admitBuffered() (*membudget.Account, error) {
	a := s.budget.Open(admitBytes)
	if a == nil {
		s.metrics.BufferBudgetRefusal(metrics.BudgetAdmission)
		return nil, budgetError()
	}
	return a, nil
}

// budgetError is the answer to a call the buffer budget cannot serve.
func budgetError() *apiError {
	return overloadedError("the gateway is buffering as many upstream bytes as its memory allows (limits.buffer_budget); retry later", budgetRetryAfter)
}
