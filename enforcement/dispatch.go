package enforcement

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hooks-gateway/hooks-gateway/internal/jcs"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/targetpath"
)

// emission is the state of one Emit call.
type emission struct {
	e     *Emitter
	ctx   context.Context
	point Point
	mode  Mode

	orig Context
	// working is orig until the first applied transform, then a private
	// deep copy that carries the fold.
	working     Context
	transformed bool
	// targetAdopted: working's target is an accepted verdict's own
	// transform value (see applyOrCheck).
	targetAdopted bool

	inputID    *string
	enforcedID *string
	// inputIDValue holds *inputID: one allocation less per emission.
	inputIDValue string
	// idText holds a jcs-sha256 inputIDValue's bytes: written once by
	// admit and never again (release leaves it, and an emission is never
	// reused), so the string can be them rather than a copy.
	idText [jcs.SHA256IdentitySize]byte
	// Storage the emission's pointers and slices use instead of allocations
	// of their own: the options, the verdict pool and summaries of up to
	// poolSlots interceptors, decided_by, fold_truncated, the record's
	// timestamp and trace, and the record. release drops the emission's
	// references into contexts, since a kept record keeps it (the outcome,
	// which holds a context, is allocated apart for that reason).
	settings     emitSettings
	poolArr      [poolSlots + 1]Verdict
	summaryArr   [poolSlots]VerdictSummary
	decidedValue int
	truncValue   bool
	tsValue      string
	traceValue   Trace
	rec          Record
	// validator is the per-emission write-back check (WithTargetValidator).
	validator TargetValidator
	// dispatched is false for emissions rejected before dispatch.
	dispatched bool

	pool      []Verdict // every verdict returned, for the §7.3 unions
	summaries []VerdictSummary
	combined  Verdict
	decidedBy *int
	// foldTruncated is set for the sequential profiles after dispatch.
	foldTruncated *bool
	resolvedBy    string
	// interrupted is set when the caller's context ended a call.
	interrupted atomic.Bool
	canceled    error
}

// admit runs the pre-dispatch checks (§4 envelope, §12.3 bounds, the
// identity provider). On failure the combined verdict is the
// host_error:context_invalid deny and nothing may be dispatched.
func (em *emission) admit() bool {
	if err := ValidateEnvelope(em.orig); err != nil {
		em.combined = hostDeny(ReasonContextInvalid, "invalid context envelope: "+err.Error())
		return false
	}
	if err := checkBounds(em.orig, em.e.limits, em.settings.memo); err != nil {
		em.combined = hostDeny(ReasonContextInvalid, "context rejected: "+err.Error())
		return false
	}
	if !em.e.identity.IsNull() {
		if err := em.e.identity.identityInto(&em.inputIDValue, em.orig, &em.e.projections, &em.idText, em.settings.memo, false); err != nil {
			em.combined = hostDeny(ReasonContextInvalid, err.Error())
			return false
		}
		em.inputID = &em.inputIDValue
		em.enforcedID = em.inputID
	}
	em.dispatched = true
	return true
}

func (em *emission) run() {
	if !em.admit() {
		return
	}
	if err := em.ctx.Err(); err != nil {
		em.canceled = err
		em.combined = hostDeny(ReasonInterceptorFailed, "emission canceled before dispatch: "+errName(err))
		return
	}
	if len(em.e.regs) == 0 {
		// §7: profile-independent, recorded in both modes.
		em.combined = hostDeny(ReasonNoInterceptor, "no interceptor is registered")
		return
	}
	switch em.e.composition.Profile {
	case SequentialRunAll:
		em.runAll()
	case ParallelStrictest:
		em.strictest()
	case ParallelUnanimous:
		em.unanimous()
	default:
		em.firstDeny()
	}
	em.finish()
	if em.interrupted.Load() {
		em.canceled = em.ctx.Err()
	}
}

// finish runs the host write-back check and recomputes the enforced identity
// over the folded context.
func (em *emission) finish() {
	if em.mode != Enforce || !em.transformed {
		return
	}
	for _, v := range [...]TargetValidator{em.e.validators[em.point], em.validator} {
		if v == nil || !em.combined.IsPermit() {
			continue
		}
		if err := v(em.working["target"]); err != nil {
			if errors.Is(err, ErrReleasedRewrite) {
				em.setCombined(hostDeny(ReasonStreamingUnsupported, err.Error()), nil)
				continue
			}
			em.setCombined(hostDeny(ReasonTransformInvalid, "transformed target cannot be written back: "+err.Error()), nil)
		}
	}
	// With the memo: a transform leaves the objects it did not change
	// shared (see owned), and their canonical bytes are not made again.
	id, err := em.e.identity.identityMemo(em.working, em.settings.memo, true)
	if err != nil {
		// §10.2: a fold that leaves the provider's domain never proceeds.
		em.enforcedID = nil
		if em.combined.IsPermit() {
			em.combined = hostDeny(ReasonContextInvalid, "transformed context rejected: "+err.Error())
			em.decidedBy = nil
		}
		return
	}
	em.enforcedID = id
}

// setCombined sets the combined verdict, carrying the §7.3 unions: warnings
// from every verdict returned, result labels from permits when it permits.
func (em *emission) setCombined(winner Verdict, decidedBy *int) {
	out := winner
	out.Warnings = nil
	out.ResultLabels = nil
	for i := range em.pool {
		for _, w := range em.pool[i].Warnings {
			if !containsWarning(out.Warnings, w) {
				out.Warnings = append(out.Warnings, w)
			}
		}
	}
	for _, w := range winner.Warnings {
		if !containsWarning(out.Warnings, w) {
			out.Warnings = append(out.Warnings, w)
		}
	}
	if out.IsPermit() {
		for i := range em.pool {
			if !em.pool[i].IsPermit() {
				continue
			}
			for _, l := range em.pool[i].ResultLabels {
				if !containsString(out.ResultLabels, l) {
					out.ResultLabels = append(out.ResultLabels, l)
				}
			}
		}
		for _, l := range winner.ResultLabels {
			if !containsString(out.ResultLabels, l) {
				out.ResultLabels = append(out.ResultLabels, l)
			}
		}
	}
	em.combined = out
	em.setDecidedBy(decidedBy)
}

// setDecidedBy records decided_by by value, so callers may pass pointers
// to their locals.
func (em *emission) setDecidedBy(i *int) {
	if i == nil {
		em.decidedBy = nil
		return
	}
	em.decidedValue = *i
	em.decidedBy = &em.decidedValue
}

// setFoldTruncated records fold_truncated.
func (em *emission) setFoldTruncated(t bool) {
	em.truncValue = t
	em.foldTruncated = &em.truncValue
}

func containsWarning(ws []Warning, w Warning) bool {
	for _, x := range ws {
		if x == w {
			return true
		}
	}
	return false
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func intp(i int) *int { return &i }

// firstDeny is sequential/first_deny (§7.4).
func (em *emission) firstDeny() {
	n := len(em.e.regs)
	stoppedAt := n - 1
	// The last transform is kept by value: a pointer to a loop variable
	// would move every verdict to the heap.
	var lastTransform Verdict
	lastIdx := -1
	consulted := -1
	defer func() { em.setFoldTruncated(stoppedAt < n-1) }()
	for i := 0; i < n; i++ {
		v := em.invoke(i, em.working)
		em.addSlot(i, v)
		switch v.Decision {
		case DecisionTransform:
			if err := em.applyOrCheck(v); err != nil {
				em.setCombined(hostDeny(GateReason(err), err.Error()), nil)
				stoppedAt = i
				return
			}
			lastTransform, lastIdx = v, i
		case DecisionDeny:
			if !v.Liftable() || !em.consultable() {
				em.setCombined(v, intp(i))
				stoppedAt = i
				return
			}
			res, lifted, synthesized := em.consult(v)
			if !lifted {
				em.setCombined(res, attribution(i, synthesized))
				stoppedAt = i
				return
			}
			if res.Decision == DecisionTransform {
				if err := em.applyOrCheck(res); err != nil {
					em.setCombined(hostDeny(GateReason(err), err.Error()), nil)
					stoppedAt = i
					return
				}
			}
			if em.e.composition.OnApproval != OnApprovalResume {
				em.setCombined(res, intp(i))
				stoppedAt = i
				return
			}
			// resume: the resolution takes this slot's place and the fold goes on.
			consulted = i
			if res.Decision == DecisionTransform {
				lastTransform, lastIdx = res, i
			}
		}
	}
	switch {
	case lastIdx >= 0:
		em.setCombined(lastTransform, intp(lastIdx))
	case consulted >= 0:
		// §7.6: decided_by stays the index of the consulted deny.
		em.setCombined(Allow(), intp(consulted))
	default:
		// Every verdict allowed: the winner is the lowest-index one (§7.3),
		// so its reason, message and evidence reach the record (§5.3), as
		// they do in the aggregating profiles.
		em.setCombined(em.pool[0], nil)
	}
}

// runAll is sequential/run_all (§7.4).
func (em *emission) runAll() {
	n := len(em.e.regs)
	slots := make([]Verdict, 0, n)
	truncated := false
	defer func() { em.setFoldTruncated(truncated) }()
	for i := 0; i < n; i++ {
		v := em.invoke(i, em.working)
		if v.Decision == DecisionTransform {
			if err := em.applyOrCheck(v); err != nil {
				// The only run_all short-circuit; the slot holds its folded result.
				d := hostDeny(GateReason(err), err.Error())
				em.addSlot(i, d)
				em.setCombined(d, nil)
				truncated = i < n-1
				return
			}
		}
		em.addSlot(i, v)
		slots = append(slots, v)
	}
	em.aggregate(slots, false)
}

// strictest is parallel/strictest (§7.5).
func (em *emission) strictest() {
	slots := em.invokeParallel()
	em.aggregate(slots, true)
}

// aggregate picks the severity-max winner of slots (§7.3) and settles it:
// consulting the seam for a liftable winner, applying a parallel transform,
// or resolving a parallel transform conflict.
func (em *emission) aggregate(slots []Verdict, parallel bool) {
	win, transforms := -1, 0
	for i := range slots {
		s := slots[i].severity()
		if slots[i].Decision == DecisionTransform {
			transforms++
		}
		switch {
		case win < 0:
			win = i
		case s > slots[win].severity():
			win = i
		case s == slots[win].severity() && slots[i].Decision == DecisionTransform:
			win = i // transform ties go to the last one
		}
	}
	w := slots[win]
	switch {
	case w.Decision == DecisionAllow:
		em.setCombined(w, nil)
	case w.Decision == DecisionTransform && parallel && transforms > 1:
		em.conflict(hostDeny(ReasonTransformConflict, "two or more transforms against the same snapshot"),
			em.e.composition.OnTransformConflict)
	case w.Decision == DecisionTransform:
		if parallel {
			if err := em.applyOrCheck(w); err != nil {
				em.setCombined(hostDeny(GateReason(err), err.Error()), nil)
				return
			}
		}
		em.setCombined(w, intp(win))
	case w.Liftable() && em.consultable():
		em.settleConsultation(w, intp(win))
	default:
		em.setCombined(w, intp(win))
	}
}

// unanimous is parallel/unanimous (§7.5).
func (em *emission) unanimous() {
	slots := em.invokeParallel()
	for i := range slots {
		if slots[i].Decision != DecisionAllow {
			em.conflict(hostDeny(ReasonCompositionDisagreement, "interceptors did not unanimously allow"),
				em.e.composition.OnDisagreement)
			return
		}
	}
	em.setCombined(slots[0], nil) // the lowest-index allow wins (§7.3)
}

// conflict settles a profile-synthesized deny: plain under the deny knob,
// liftable (and consulted) under the approval knob. decided_by is null.
func (em *emission) conflict(d Verdict, knob string) {
	if knob != KnobApproval {
		em.setCombined(d, nil)
		return
	}
	d.Approval = map[string]any{}
	if !em.consultable() {
		em.setCombined(d, nil)
		return
	}
	em.settleConsultation(d, nil)
}

// settleConsultation consults the seam once for deny and makes the outcome
// the combined verdict; a permit's transform applies on top of the fold.
func (em *emission) settleConsultation(deny Verdict, idx *int) {
	res, lifted, synthesized := em.consult(deny)
	if !lifted {
		if synthesized {
			idx = nil
		}
		em.setCombined(res, idx)
		return
	}
	if res.Decision == DecisionTransform {
		if err := em.applyOrCheck(res); err != nil {
			em.setCombined(hostDeny(GateReason(err), err.Error()), nil)
			return
		}
	}
	em.setCombined(res, idx)
}

func attribution(i int, synthesized bool) *int {
	if synthesized {
		return nil
	}
	return intp(i)
}

// invokeParallel gives every interceptor its own copy of the same
// untransformed snapshot and runs them concurrently (§7.5 names isolation,
// not scheduling; concurrency bounds latency by the slowest interceptor).
func (em *emission) invokeParallel() []Verdict {
	n := len(em.e.regs)
	slots := make([]Verdict, n)
	if n == 1 {
		slots[0] = em.invoke(0, em.orig)
	} else {
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				slots[i] = em.invoke(i, em.orig)
			}()
		}
		wg.Wait()
	}
	for i := range slots {
		em.addSlot(i, slots[i])
	}
	return slots
}

// addSlot adds slot i's post-gate verdict to the pool and the summaries.
func (em *emission) addSlot(i int, v Verdict) {
	em.pool = append(em.pool, v)
	em.summaries = append(em.summaries, VerdictSummary{Index: i, Decision: v.Decision, Reason: v.Reason, Name: em.e.regs[i].Name})
}

// invoke calls interceptor i on a private deep copy of snapshot (the
// snapshot itself for a ReadsOnly interceptor) and passes
// the answer through the §5 gate; every failure becomes that slot's deny
// (§6.3). It is safe to call concurrently.
func (em *emission) invoke(i int, snapshot Context) Verdict {
	if err := em.ctx.Err(); err != nil {
		em.interrupted.Store(true)
		return hostDeny(ReasonInterceptorFailed, "emission canceled: "+errName(err))
	}
	reg := em.e.regs[i]
	start := time.Now()
	v := em.call(i, reg, snapshot)
	if obs := em.e.observer; obs != nil {
		obs.ObserveInterceptor(InterceptorObservation{
			Index: i, Name: reg.Name, Point: em.point, Mode: em.mode,
			Decision: v.Decision, Reason: v.Reason, Duration: time.Since(start),
		})
	}
	return v
}

// call runs one interceptor and the §5 gate.
func (em *emission) call(i int, reg Registration, snapshot Context) Verdict {
	if ps, ok := reg.Interceptor.(PointScoped); ok && !ps.AppliesAt(em.point) {
		return Allow() // the private copy below is most of an idle call's cost
	}
	cp := snapshot
	if _, ok := reg.Interceptor.(ReadsOnly); !ok {
		cp = snapshot.Clone()
	}
	var v Verdict
	var err error
	if _, ok := reg.Interceptor.(NonBlocking); ok {
		v, err = callRecovered(em.ctx, reg.Interceptor, cp)
	} else {
		fn := func(ctx context.Context) (Verdict, error) { return reg.Interceptor.Intercept(ctx, cp) }
		v, err = callBounded(em.ctx, em.e.timeout, fn)
	}
	if err != nil {
		if em.ctx.Err() != nil {
			em.interrupted.Store(true)
		}
		return failureVerdict(err, "interceptor", i, reg.Name)
	}
	if err := v.Validate(em.point); err != nil {
		return hostDeny(GateReason(err), fmt.Sprintf("interceptor %s returned an invalid verdict: %v", slotName(i, reg.Name), err))
	}
	_, built := reg.Interceptor.(OwnsTransforms)
	return owned(v, em.settings.memo, built)
}

// owned copies the parts of an accepted verdict that reach the outcome and
// the record by reference (transform value, evidence), so a caller that
// keeps and mutates what it returned cannot rewrite them afterwards. A value
// FromGo rejects is kept for applyParsed to report as transform_invalid.
// The objects memo keeps (nil: none) are shared, not copied: nothing
// modifies them (see applyParsed). built says the interceptor built the
// value for the verdict alone (OwnsTransforms): it is taken as it is.
// Either way the value is then the verdict's own, which the transform's
// adoptable mark records.
func owned(v Verdict, memo ObjectMemo, built bool) Verdict {
	if v.Transform != nil {
		t := *v.Transform
		if built {
			t.adoptable = true
		} else if tv, err := fromGo(t.Value, memo); err == nil {
			t.Value, t.adoptable = tv, true
		}
		v.Transform = &t
	}
	if v.Evidence != nil {
		v.Evidence = v.Evidence.clone()
	}
	return v
}

func slotName(i int, name string) string {
	if name != "" {
		return fmt.Sprintf("%d (%s)", i, name)
	}
	return fmt.Sprint(i)
}

var (
	errTimeout = errors.New("timed out")
	errPanic   = errors.New("panicked")
)

// ErrInterceptorTimeout is for interceptors that bound their own I/O more
// tightly than the emitter's timeout (a remote verdict service with a
// per-attempt deadline): an error wrapping it is reported as
// host_error:interceptor_timeout, as the emitter's own timeout is.
var ErrInterceptorTimeout = errors.New("interceptor timed out")

// failureVerdict maps a call failure to its §6.3 deny. The message names the
// failure type, never an error string that could carry target content.
func failureVerdict(err error, what string, i int, name string) Verdict {
	who := what + " " + slotName(i, name)
	switch {
	case errors.Is(err, errTimeout), errors.Is(err, ErrInterceptorTimeout):
		return hostDeny(ReasonInterceptorTimeout, who+" exceeded its timeout")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return hostDeny(ReasonInterceptorFailed, who+" interrupted: "+errName(err))
	case errors.Is(err, ErrVerdictInvalid):
		// Only the gate's own message is payload-free; the text of an error
		// wrapping it may quote what failed to decode.
		var g *gateError
		if errors.As(err, &g) {
			return hostDeny(g.reason, who+" returned an invalid verdict: "+g.msg)
		}
		return hostDeny(ReasonVerdictInvalid, fmt.Sprintf("%s returned an invalid verdict (%T)", who, rootCause(err)))
	case errors.Is(err, errPanic):
		return hostDeny(ReasonInterceptorFailed, who+" "+err.Error())
	}
	return hostDeny(ReasonInterceptorFailed, fmt.Sprintf("%s failed (%T)", who, rootCause(err)))
}

func errName(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "context canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "context deadline exceeded"
	}
	return fmt.Sprintf("%T", err)
}

// callBounded runs fn under the timeout with panic recovery. A late answer is
// discarded: lateness is judged against the deadline when fn returns, not by
// which channel the select sees first, because under load the timer's cancel
// can lag behind an answer that came after it. The caller's cancellation is
// reported as ctx.Err(), distinct from the emitter's own timeout (errTimeout).
func callBounded[T any](ctx context.Context, timeout time.Duration, fn func(context.Context) (T, error)) (T, error) {
	var zero T
	if timeout < 0 {
		return recovered(ctx, fn)
	}
	deadline := time.Now().Add(timeout)
	cctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	type result struct {
		v    T
		err  error
		late bool
	}
	done := make(chan result, 1)
	go func() {
		v, err := recovered(cctx, fn)
		done <- result{v, err, !time.Now().Before(deadline)}
	}()
	select {
	case r := <-done:
		// The caller's end wins over a result that came with it: select
		// picks at random among ready cases, and the answer must not.
		if err := ctx.Err(); err != nil {
			return zero, fmt.Errorf("call interrupted: %w", err)
		}
		if r.err == nil && !r.late {
			return r.v, nil
		}
		if r.late {
			if r.err != nil {
				return zero, fmt.Errorf("%w: %w", errTimeout, r.err)
			}
			return zero, errTimeout
		}
		return r.v, r.err
	case <-cctx.Done():
		if err := ctx.Err(); err != nil {
			return zero, fmt.Errorf("call interrupted: %w", err)
		}
		return zero, errTimeout
	}
}

// callRecovered is recovered for an interceptor call, without the closure
// (an allocation per call on the non-blocking path).
func callRecovered(ctx context.Context, ic Interceptor, c Context) (v Verdict, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w (%T)", errPanic, r)
		}
	}()
	return ic.Intercept(ctx, c)
}

func recovered[T any](ctx context.Context, fn func(context.Context) (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w (%T)", errPanic, r)
		}
	}()
	return fn(ctx)
}

// applyOrCheck applies a transform to the working context in enforce mode
// and only validates it in evaluate_only (§8).
func (em *emission) applyOrCheck(v Verdict) error {
	p, err := targetpath.Parse(v.Transform.Path)
	if err != nil {
		return pathGateError(err)
	}
	if em.mode != Enforce {
		return checkApplicable(em.working, p, v.Transform.Value, v.Transform.adoptable)
	}
	if !em.transformed {
		em.working = em.orig.transformBase(p)
	}
	// A transform of the whole target installs the verdict's own value
	// as the target (adopt). The target is then that verdict's value, so
	// a later transform of a path inside it works on a copy.
	adopt := v.Transform.adoptable && p.IsRoot()
	if em.targetAdopted && !p.IsRoot() {
		em.working["target"] = jsonvalue.DeepCopy(em.working["target"])
		em.targetAdopted = false
	}
	if err := applyParsed(em.working, em.point, p, v.Transform.Value, em.settings.memo, adopt); err != nil {
		return err
	}
	em.targetAdopted = adopt
	em.transformed = true
	return nil
}

// consultable reports whether the approval seam may be consulted (§9).
func (em *emission) consultable() bool {
	return em.mode == Enforce && em.e.resolver != nil && em.point != AgentShutdown
}

// consult asks the resolver about a liftable deny and validates the answer
// in the §9 order. It returns the verdict that results, whether it lifts the
// deny, and whether a non-lifting result was synthesized by the host.
func (em *emission) consult(deny Verdict) (Verdict, bool, bool) {
	em.resolvedBy = ResolvedByRejection
	reqCtx := em.working.Clone()
	if em.e.redactor != nil {
		red, err := callBounded(em.ctx, em.e.timeout, func(ctx context.Context) (Context, error) {
			return em.e.redactor.Redact(ctx, Context(reqCtx))
		})
		if err != nil {
			return hostDeny(ReasonApprovalResolverFailed, "approval redactor failed: "+errName(err)), false, true
		}
		reqCtx = red
	}
	id, err := em.e.identity.Identity(reqCtx)
	if err != nil {
		return hostDeny(ReasonContextInvalid, "approval request identity: "+err.Error()), false, true
	}
	req := ApprovalRequest{ContextIdentity: id, InterceptionPoint: em.point, Verdict: deny, Context: reqCtx}
	res, err := callBounded(em.ctx, em.e.resolverTO, func(ctx context.Context) (ApprovalResolution, error) {
		return em.e.resolver.Resolve(ctx, req)
	})
	if err != nil {
		if em.ctx.Err() != nil {
			em.interrupted.Store(true)
		}
		return resolverFailure(err), false, true
	}
	// §9 order: 1 echo rule, 2 outcome and verdict presence (and the
	// resolution's shape), 3 the carried verdict's §5 gate, 4 consistency.
	if res.identityErr != nil || !sameIdentity(res.ContextIdentity, id) {
		return hostDeny(ReasonApprovalIdentityMismatch, "resolution context_identity does not echo the request's"), false, true
	}
	if res.shapeErr != nil {
		return hostDeny(ReasonApprovalResolverFailed, res.shapeErr.Error()), false, true
	}
	switch res.Outcome {
	case OutcomeApprove, OutcomeReject:
		if res.Verdict == nil {
			return hostDeny(ReasonApprovalResolverFailed, "resolution "+res.Outcome+" carries no verdict"), false, true
		}
	case OutcomeUnresolved:
		if res.Verdict != nil {
			return hostDeny(ReasonApprovalResolverFailed, "unresolved resolution carries a verdict"), false, true
		}
		return hostDeny(ReasonApprovalUnresolved, "the approval resolver could not decide"), false, true
	default:
		return hostDeny(ReasonApprovalResolverFailed, "resolution outcome is not approve, reject or unresolved"), false, true
	}
	if res.verdictErr != nil {
		return hostDeny(ReasonVerdictInvalid, "resolution verdict: "+res.verdictErr.Error()), false, true
	}
	rv := owned(*res.Verdict, em.settings.memo, false)
	if err := rv.Validate(em.point); err != nil {
		return hostDeny(ReasonVerdictInvalid, "resolution verdict: "+err.Error()), false, true
	}
	if res.Outcome == OutcomeApprove && !rv.IsPermit() {
		return hostDeny(ReasonVerdictInvalid, "approve carries a non-permit verdict"), false, true
	}
	if res.Outcome == OutcomeReject && rv.Decision != DecisionDeny {
		return hostDeny(ReasonVerdictInvalid, "reject carries a non-deny verdict"), false, true
	}
	em.pool = append(em.pool, rv)
	if res.Outcome == OutcomeReject {
		return rv, false, false
	}
	em.resolvedBy = ResolvedByApproval
	return rv, true, false
}

// resolverFailure maps a resolver's error. An answer that failed the §5
// gate as a whole (a webhook's answer naming a member twice has no single
// reading, so not even its context_identity can be echo-checked) is
// host_error:verdict_invalid with the gate's payload-free message; anything
// else is the resolver failing.
func resolverFailure(err error) Verdict {
	var g *gateError
	if errors.As(err, &g) && !errors.Is(err, errTimeout) {
		return hostDeny(g.reason, "approval resolver returned an invalid answer: "+g.msg)
	}
	return hostDeny(ReasonApprovalResolverFailed, "approval resolver failed: "+failureKind(err))
}

func failureKind(err error) string {
	switch {
	case errors.Is(err, errTimeout):
		return "timeout"
	case errors.Is(err, errPanic):
		return "panic"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return errName(err)
	}
	return fmt.Sprintf("%T", rootCause(err))
}

// rootCause unwraps err to its innermost single cause; its type name is
// safe to record, its text is not (§6.3).
func rootCause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

func sameIdentity(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// record builds the emission's payload-free record (§10.3).
func (em *emission) record() *Record {
	rec := &em.rec
	*rec = Record{
		InterceptionPoint:      em.point,
		Mode:                   em.mode,
		Verdict:                em.combined,
		IdentityProvider:       em.e.identity.name,
		SessionID:              em.orig.SessionID(),
		Sequence:               em.orig.Sequence(),
		DecidedBy:              em.decidedBy,
		Composition:            em.e.composition,
		Verdicts:               nilIfEmpty(em.summaries),
		FoldTruncated:          em.foldTruncated,
		ResolvedBy:             em.resolvedBy,
		InterceptorsRegistered: len(em.e.regs),
		Extensions:             em.e.extensions,
		extensionsJSON:         em.e.extensionsJSON,
	}
	if em.dispatched {
		rec.InputIdentity, rec.EnforcedIdentity = em.inputID, em.enforcedID
	}
	if ts, ok := em.orig["timestamp"].(string); ok {
		em.tsValue = ts
		rec.Timestamp = &em.tsValue
	}
	if tr, ok := em.orig["trace"].(map[string]any); ok {
		t := &em.traceValue
		t.TraceID, _ = tr["trace_id"].(string)
		t.SpanID, _ = tr["span_id"].(string)
		if t.TraceID != "" || t.SpanID != "" {
			rec.Trace = t
		}
	}
	return rec
}

// release drops the emission's references into contexts and verdicts it
// no longer needs: the record it returns lives inside it.
func (em *emission) release() {
	em.ctx, em.orig, em.working, em.validator = nil, nil, nil, nil
	em.settings = emitSettings{}
	clear(em.poolArr[:])
	em.pool = nil
}

// nilIfEmpty keeps a record without interceptor verdicts (a host's
// refusal) at nil, whatever capacity the emission reserved.
func nilIfEmpty(s []VerdictSummary) []VerdictSummary {
	if len(s) == 0 {
		return nil
	}
	return s
}
