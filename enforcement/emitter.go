package enforcement

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// Interceptor returns a verdict for a context (§7). It receives its own deep
// copy of the context and may modify it freely; nothing it does to the copy
// affects enforcement, identity or other interceptors.
//
// An error maps to host_error:interceptor_failed, an error wrapping
// ErrVerdictInvalid (as ParseVerdict returns) to host_error:verdict_invalid,
// and exceeding the emitter's timeout to host_error:interceptor_timeout.
type Interceptor interface {
	Intercept(ctx context.Context, c Context) (Verdict, error)
}

// InterceptorFunc adapts a function to Interceptor.
type InterceptorFunc func(ctx context.Context, c Context) (Verdict, error)

// Intercept calls f.
func (f InterceptorFunc) Intercept(ctx context.Context, c Context) (Verdict, error) {
	return f(ctx, c)
}

// NonBlocking is implemented by interceptors that never wait on anything:
// no I/O, no locks held across calls, CPU work bounded by the size of the
// context (allow, deny, a regular-expression scan). The emitter calls them
// on the emission's own goroutine, without the timeout's goroutine and
// timer, because nothing can hold them past a bound; panics are still
// recovered. An interceptor that calls out (HTTP, a database) must not
// claim it: the timeout is what bounds those.
type NonBlocking interface {
	Interceptor
	NonBlocking()
}

// ReadsOnly is implemented by non-blocking interceptors that only read the
// context they are given: they never modify it and keep no reference into
// it after they return (a transform value is built from a copy). The
// emitter hands them its own snapshot instead of a private deep copy,
// which is most of the cost of a call on a large context. Claim it only
// for audited code: a violation would change what later interceptors see
// and what is hashed. Under the parallel profiles several such
// interceptors read the snapshot concurrently, which is safe because none
// of them writes.
type ReadsOnly interface {
	NonBlocking
	ReadsOnly()
}

// OwnsTransforms is implemented by read-only interceptors whose
// transform values are value trees (map[string]any, []any, string,
// json.Number, bool, nil) built for the verdict alone: no container of
// one is shared with anything but what nothing modifies (the objects a
// session's ObjectMemo keeps; the context's target, when ContextsFrozen
// says the host froze it), and the interceptor never touches it after
// it returns. The emitter then takes
// the value as it is instead of converting and copying it, which for a
// redaction of a long conversation is a copy of the whole conversation.
// Claim it only for audited code.
type OwnsTransforms interface {
	ReadsOnly
	OwnsTransforms()
}

// PointScoped is implemented by interceptors configured for some points
// only. At a point where AppliesAt is false the interceptor would answer
// allow without reading the context, so the emitter records that allow
// itself: it neither copies the context for the interceptor nor calls it.
// The allow counts like any other verdict (records list it; under
// parallel/unanimous it votes).
type PointScoped interface {
	Interceptor
	AppliesAt(p Point) bool
}

// NonBlockingFunc adapts a function that never blocks to a NonBlocking
// interceptor.
type NonBlockingFunc func(ctx context.Context, c Context) (Verdict, error)

// Intercept calls f.
func (f NonBlockingFunc) Intercept(ctx context.Context, c Context) (Verdict, error) { return f(ctx, c) }

// NonBlocking marks f as never blocking.
func (NonBlockingFunc) NonBlocking() {}

// Registration is an interceptor with its optional, payload-free name (it
// appears as verdicts[].name on records).
type Registration struct {
	Name        string
	Interceptor Interceptor
}

// RecordSink receives every record. Its errors and panics never alter
// control flow; they are counted (Emitter.SinkFailures).
type RecordSink interface {
	WriteRecord(ctx context.Context, r *Record) error
}

// RecordSinkFunc adapts a function to RecordSink.
type RecordSinkFunc func(ctx context.Context, r *Record) error

// WriteRecord calls f.
func (f RecordSinkFunc) WriteRecord(ctx context.Context, r *Record) error { return f(ctx, r) }

// TargetValidator checks that a transformed target can be written back by
// the host (for example onto a wire format). Its error turns the combined
// verdict into deny host_error:transform_invalid inside the emission, so the
// record tells the truth.
type TargetValidator func(target any) error

// Default bounds (§7, §12.3).
const (
	DefaultTimeout         = 5000 * time.Millisecond
	DefaultMaxContextBytes = 5 << 20
)

// Options configures an Emitter. The zero value is a valid enforce-mode
// emitter with no interceptors (so every emission is denied with
// host_error:no_interceptor), jcs-sha256 identities and the default bounds.
type Options struct {
	Interceptors []Registration
	Composition  Composition
	// Mode is the default mode (enforce when empty); PointModes overrides it
	// per point, and WithMode per emission.
	Mode       Mode
	PointModes map[Point]Mode
	// Identity defaults to jcs-sha256 when nil.
	Identity *IdentityProvider
	Resolver ApprovalResolver
	Redactor ApprovalRedactor
	// Timeout bounds each interceptor and redactor call, and resolver calls
	// unless ResolverTimeout is set: 0 means the default 5 s, a negative
	// value disables the bound.
	Timeout time.Duration
	// ResolverTimeout bounds each resolver call: a human approval takes far
	// longer than an interceptor. 0 means Timeout, negative disables.
	ResolverTimeout time.Duration
	// MaxContextBytes and MaxDepth bound contexts (§12.3): 0 means the
	// defaults (5 MiB, 128 levels), negative disables. The size is the
	// compact JSON encoding with a target that aliases its member (as
	// Builder makes it) counted once.
	MaxContextBytes int
	MaxDepth        int
	Sink            RecordSink
	// RecordBuffer keeps the last N records for TakeRecords, dropping the
	// oldest beyond it; 0 keeps none.
	RecordBuffer     int
	TargetValidators map[Point]TargetValidator
	// Observer, when set, receives telemetry about every emission and
	// interceptor call (metrics). It must be fast and must not block.
	Observer Observer
	// RecordExtensions, when not empty, is every record's "extensions"
	// member: namespaced host data such as the policy version. It must be
	// payload-free and JSON-marshalable; the emitter keeps its own copy.
	// The spec's record schema is closed, so a strict validator rejects
	// records carrying it.
	RecordExtensions map[string]any
	// FrozenContexts is the host's promise that it never modifies a
	// context it emits, an outcome's context, or anything either holds
	// (the gateway only reads its projections of a request). Interceptors
	// then may share what a rewrite leaves unchanged of the target with
	// their transform values instead of copying it (see ContextsFrozen):
	// a redaction of one message of a long conversation no longer copies
	// the conversation.
	FrozenContexts bool
}

// Observer receives emission telemetry. The engine calls it synchronously,
// after the fact; it never alters control flow, and its panics are the
// caller's bug, not recovered (an observer is host code, like a sink).
type Observer interface {
	// ObserveEmission is called once per record the emitter produces
	// (emissions, refusals and host failures), with the time the emission
	// took (zero for host failures).
	ObserveEmission(r *Record, d time.Duration)
	// ObserveInterceptor is called once per interceptor invocation with
	// its post-gate verdict: a failure shows as its host_error:* reason.
	ObserveInterceptor(o InterceptorObservation)
}

// InterceptorObservation describes one interceptor invocation.
type InterceptorObservation struct {
	Index    int
	Name     string
	Point    Point
	Mode     Mode
	Decision Decision
	Reason   string
	Duration time.Duration
}

// Emitter runs emissions: envelope and bounds checks, identity, dispatch per
// the composition profile, the approval seam, records. It is safe for
// concurrent use; its configuration is fixed at construction (swap emitters
// to change policy).
type Emitter struct {
	// projections holds the scratch storage of identity projections
	// (*projection): needed only while an emission's identity is hashed,
	// it would otherwise be a third of every emission's allocation.
	projections sync.Pool

	regs        []Registration
	composition Composition
	mode        Mode
	pointModes  map[Point]Mode
	identity    IdentityProvider
	resolver    ApprovalResolver
	redactor    ApprovalRedactor
	timeout     time.Duration
	resolverTO  time.Duration
	limits      jsonvalue.Limits
	sink        RecordSink
	validators  map[Point]TargetValidator
	observer    Observer
	// frozen is, under Options.FrozenContexts, hostPromises{frozen: true}
	// boxed once, so that an emission without a memo tells its
	// interceptors for the cost of its context layer alone; nil otherwise.
	frozen any
	// extensions is every record's Extensions (shared, never mutated).
	extensions map[string]any
	// extensionsJSON is extensions marshalled once, for every record.
	extensionsJSON []byte

	mu      sync.Mutex
	ring    recordRing
	dropped atomic.Int64
	sinkErr atomic.Int64
}

// recordRing is a fixed-capacity drop-oldest buffer.
type recordRing struct {
	buf   []*Record
	start int
	n     int
}

// push appends r and reports whether the oldest record was dropped.
func (q *recordRing) push(r *Record) bool {
	if q.n < len(q.buf) {
		q.buf[(q.start+q.n)%len(q.buf)] = r
		q.n++
		return false
	}
	q.buf[q.start] = r
	q.start = (q.start + 1) % len(q.buf)
	return true
}

func (q *recordRing) drain() []*Record {
	out := make([]*Record, q.n)
	for i := range out {
		out[i] = q.buf[(q.start+i)%len(q.buf)]
		q.buf[(q.start+i)%len(q.buf)] = nil
	}
	q.start, q.n = 0, 0
	return out
}

// NewEmitter validates opts and builds an emitter.
func NewEmitter(opts Options) (*Emitter, error) {
	if err := opts.Composition.Validate(); err != nil {
		return nil, err
	}
	e := &Emitter{
		regs:        append([]Registration(nil), opts.Interceptors...),
		composition: opts.Composition.Resolved(),
		mode:        opts.Mode,
		identity:    JCSSHA256(),
		resolver:    opts.Resolver,
		redactor:    opts.Redactor,
		timeout:     opts.Timeout,
		sink:        opts.Sink,
		observer:    opts.Observer,
	}
	if opts.FrozenContexts {
		e.frozen = hostPromises{frozen: true}
	}
	if len(opts.RecordExtensions) > 0 {
		ext, raw, err := cloneExtensions(opts.RecordExtensions)
		if err != nil {
			return nil, err
		}
		e.extensions, e.extensionsJSON = ext, raw
	}
	if opts.RecordBuffer > 0 {
		e.ring.buf = make([]*Record, opts.RecordBuffer)
	}
	if e.mode == "" {
		e.mode = Enforce
	}
	if !e.mode.Valid() {
		return nil, fmt.Errorf("unknown mode %q", e.mode)
	}
	for p, m := range opts.PointModes {
		if !p.Valid() || !m.Valid() {
			return nil, fmt.Errorf("invalid point mode %q: %q", p, m)
		}
	}
	e.pointModes = copyMap(opts.PointModes)
	e.validators = copyMap(opts.TargetValidators)
	for i, r := range e.regs {
		if r.Interceptor == nil {
			return nil, fmt.Errorf("interceptor %d (%q) is nil", i, r.Name)
		}
	}
	if opts.Identity != nil {
		e.identity = *opts.Identity
	}
	if e.timeout == 0 {
		e.timeout = DefaultTimeout
	}
	e.resolverTO = opts.ResolverTimeout
	if e.resolverTO == 0 {
		e.resolverTO = e.timeout
	}
	e.limits = jsonvalue.Limits{MaxBytes: opts.MaxContextBytes, MaxDepth: opts.MaxDepth}
	if e.limits.MaxBytes == 0 {
		e.limits.MaxBytes = DefaultMaxContextBytes
	}
	if e.limits.MaxDepth == 0 {
		e.limits.MaxDepth = DefaultMaxDepth
	}
	if e.limits.MaxBytes < 0 {
		e.limits.MaxBytes = 0
	}
	if e.limits.MaxDepth < 0 {
		e.limits.MaxDepth = 0
	}
	if e.identity.name == IdentityJCSSHA256 && e.limits.MaxDepth > 0 {
		e.identity.maxDepth = e.limits.MaxDepth
	}
	return e, nil
}

func copyMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return nil
	}
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Composition returns the resolved composition in effect.
func (e *Emitter) Composition() Composition { return e.composition }

// IdentityProvider returns the declared identity provider.
func (e *Emitter) IdentityProvider() IdentityProvider { return e.identity }

// Interceptors returns the number of registered interceptors.
func (e *Emitter) Interceptors() int { return len(e.regs) }

// ModeFor returns the configured mode at point p.
func (e *Emitter) ModeFor(p Point) Mode {
	if m, ok := e.pointModes[p]; ok {
		return m
	}
	return e.mode
}

// EmitOption adjusts one emission.
type EmitOption func(*emitSettings)

type emitSettings struct {
	mode      Mode
	validator TargetValidator
	memo      ObjectMemo
}

// WithMode selects the mode for one emission (per-session modes, §8).
func WithMode(m Mode) EmitOption { return func(s *emitSettings) { s.mode = m } }

// WithTargetValidator adds a write-back check for one emission, for hosts
// whose check depends on the action (a response's original tool-call ids).
// It runs after the point's configured validator.
func WithTargetValidator(v TargetValidator) EmitOption {
	return func(s *emitSettings) { s.validator = v }
}

// Outcome is the result of one emission.
type Outcome struct {
	// Verdict is the full combined verdict (the record holds its projection).
	Verdict Verdict
	// Context is the context the action must use: the transformed one when an
	// enforce-mode permit applied transforms, otherwise the emitted context.
	Context Context
	Record  *Record
	Mode    Mode
	// Proceed is false iff the mode is enforce and the combined verdict denies.
	Proceed bool
}

// Target returns the enforced target.
func (o *Outcome) Target() any { return o.Context.Target() }

// BlockedError is returned by Emit when the combined verdict blocks the action.
type BlockedError struct{ Outcome *Outcome }

func (e *BlockedError) Error() string {
	v := e.Outcome.Verdict
	if v.Reason == "" {
		return fmt.Sprintf("agent-hooks: %s denied", e.Outcome.Record.InterceptionPoint)
	}
	return fmt.Sprintf("agent-hooks: %s denied: %s", e.Outcome.Record.InterceptionPoint, v.Reason)
}

// Emit runs one emission and returns a *BlockedError when the action must
// not proceed. If ctx ends while interceptors run, the emission is recorded
// fail-closed (so the session has no sequence gap) and the context's error
// is returned wrapped.
func (e *Emitter) Emit(ctx context.Context, c Context, opts ...EmitOption) (*Outcome, error) {
	out, err := e.EmitUnchecked(ctx, c, opts...)
	if err != nil {
		return out, err
	}
	if !out.Proceed {
		return out, &BlockedError{Outcome: out}
	}
	return out, nil
}

// EmitUnchecked runs one emission and reports the outcome without turning a
// deny into an error (agent_shutdown uses it). It returns an error only when
// ctx ended during the emission.
func (e *Emitter) EmitUnchecked(ctx context.Context, c Context, opts ...EmitOption) (*Outcome, error) {
	em := e.newEmission(ctx, c, opts)
	point, mode := em.point, em.mode
	start := time.Now()
	em.run()
	rec := em.record()
	e.observe(rec, time.Since(start))
	e.deliver(ctx, rec)
	// The outcome is an allocation of its own: it holds the context, which
	// a record kept by a sink or the bounded buffer must not keep alive.
	out := &Outcome{
		Verdict: em.combined,
		Context: c,
		Record:  rec,
		Mode:    mode,
		Proceed: mode == EvaluateOnly || em.combined.Decision != DecisionDeny,
	}
	if mode == Enforce && em.combined.IsPermit() {
		out.Context = em.working
	}
	em.release()
	if em.canceled != nil {
		return out, fmt.Errorf("agent-hooks: %s emission canceled: %w", point, em.canceled)
	}
	return out, nil
}

// Refuse records a host-synthesized deny for a context the host will not
// dispatch, such as the §12.1 post_model_call over a stream it could not
// buffer (finish_reason stream_incomplete, host_error:streaming_unsupported).
// The context is validated and identified like any emission; no interceptor
// runs and no approval is consulted.
func (e *Emitter) Refuse(ctx context.Context, c Context, reason, message string, opts ...EmitOption) *Outcome {
	em := e.newEmission(ctx, c, opts)
	start := time.Now()
	if em.admit() {
		em.combined = hostDeny(reason, message)
	}
	rec := em.record()
	e.observe(rec, time.Since(start))
	e.deliver(ctx, rec)
	out := &Outcome{Verdict: em.combined, Context: c, Record: rec, Mode: em.mode, Proceed: em.mode == EvaluateOnly}
	em.release()
	return out
}

// poolSlots is the longest interceptor chain whose verdicts an emission
// keeps in its own storage.
const poolSlots = 4

// newEmission applies the emission options and resolves the mode.
func (e *Emitter) newEmission(ctx context.Context, c Context, opts []EmitOption) *emission {
	em := &emission{e: e, ctx: ctx, orig: c, working: c}
	for _, o := range opts {
		o(&em.settings)
	}
	em.point = c.Point()
	em.mode = em.settings.mode
	if em.mode == "" {
		em.mode = e.ModeFor(em.point)
	}
	em.validator = em.settings.validator
	switch {
	case em.settings.memo != nil:
		em.ctx = withHostPromises(ctx, hostPromises{memo: em.settings.memo, frozen: e.frozen != nil})
	case e.frozen != nil:
		em.ctx = context.WithValue(ctx, hostPromisesKey{}, e.frozen)
	}
	// Sized once: a verdict per interceptor, one more for an approval
	// resolution; in the emission's own storage for a short chain.
	switch n := len(e.regs); {
	case n == 0:
	case n <= poolSlots:
		em.pool, em.summaries = em.poolArr[:0:n+1], em.summaryArr[:0:n]
	default:
		em.pool, em.summaries = make([]Verdict, 0, n+1), make([]VerdictSummary, 0, n)
	}
	return em
}

// HostFailure describes a failed projection to the wire: the host could not
// construct a context for a point at all (§10.3).
type HostFailure struct {
	Point     Point
	SessionID string
	// Sequence is the number the failed emission would have carried (the
	// host consumes it so records stay gapless); -1 when unknown.
	Sequence  int64
	Timestamp string
	// Message names the failure type or path, never content.
	Message string
	Mode    Mode
}

// RecordHostFailure produces the §10.3 host-projection-failure record: deny
// host_error:context_invalid, null identities under the declared provider,
// no interceptor invoked. It goes through the same sink and buffer as every
// record.
func (e *Emitter) RecordHostFailure(ctx context.Context, f HostFailure) *Record {
	mode := f.Mode
	if mode == "" {
		mode = e.ModeFor(f.Point)
	}
	rec := &Record{
		InterceptionPoint:      f.Point,
		Mode:                   mode,
		Verdict:                hostDeny(ReasonContextInvalid, f.Message),
		IdentityProvider:       e.identity.name,
		SessionID:              f.SessionID,
		Sequence:               f.Sequence,
		Composition:            e.composition,
		InterceptorsRegistered: len(e.regs),
		Extensions:             e.extensions,
		extensionsJSON:         e.extensionsJSON,
	}
	if f.Timestamp != "" {
		ts := f.Timestamp
		rec.Timestamp = &ts
	}
	e.observe(rec, 0)
	e.deliver(ctx, rec)
	return rec
}

func (e *Emitter) observe(rec *Record, d time.Duration) {
	if e.observer != nil {
		e.observer.ObserveEmission(rec, d)
	}
}

// deliver sends a record to the sink (failures counted, never propagated)
// and to the bounded buffer.
func (e *Emitter) deliver(ctx context.Context, rec *Record) {
	if e.sink != nil {
		if h := HeldRecordsFrom(ctx); h == nil || !h.add(e, rec) {
			if ctx.Done() != nil {
				// Detach the sink from cancellation; a context whose Done
				// is nil never ends (the agent_shutdown path already
				// detached it), so it is passed as it is, without another
				// wrapper.
				ctx = context.WithoutCancel(ctx)
			}
			h.writePast(e, ctx, rec)
		}
	}
	if len(e.ring.buf) == 0 {
		return
	}
	e.mu.Lock()
	if e.ring.push(rec) {
		e.dropped.Add(1)
	}
	e.mu.Unlock()
}

// writeSink writes rec to the sink, counting a failure or a panic.
func (e *Emitter) writeSink(ctx context.Context, rec *Record) {
	defer func() {
		if recover() != nil {
			e.sinkErr.Add(1)
		}
	}()
	if err := e.sink.WriteRecord(ctx, rec); err != nil {
		e.sinkErr.Add(1)
	}
}

// TakeRecords returns and clears the buffered records, oldest first.
func (e *Emitter) TakeRecords() []*Record {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ring.drain()
}

// RecordsDropped counts records the bounded buffer discarded.
func (e *Emitter) RecordsDropped() int64 { return e.dropped.Load() }

// SinkFailures counts sink errors and panics.
func (e *Emitter) SinkFailures() int64 { return e.sinkErr.Load() }
