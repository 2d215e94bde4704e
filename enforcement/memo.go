package enforcement

import "context"

// ObjectMemo remembers, across the emissions of one session, what was
// made of objects its contexts share from one request to the next (a
// conversation's earlier messages, which a host projects once and hands
// out again): their canonical bytes for the context identity, and the
// verdicts of interceptors that judge each such object on its own. It
// only ever answers for the very object it was told about, so a context
// is identified and judged exactly as without it. Implementations must
// be safe for concurrent use; the gateway's is internal/sessioncache.
type ObjectMemo interface {
	// Canonical returns obj's RFC 8785 bytes made at nesting level depth
	// under the depth bound maxDepth on the identity path, or false.
	Canonical(obj map[string]any, depth, maxDepth int) ([]byte, bool)
	// Keeps reports whether the memo remembers things about obj.
	Keeps(obj map[string]any) bool
	// Remember stores obj's canonical bytes made at depth under maxDepth.
	Remember(obj map[string]any, depth, maxDepth int, b []byte)
	// Verdict returns what judge (an interceptor) made of obj.
	Verdict(judge any, obj map[string]any) (any, bool)
	// RememberVerdict stores what judge made of obj.
	RememberVerdict(judge any, obj map[string]any, v any)
}

// WithObjectMemo has one emission use m: for the identity of its context,
// and handed to its interceptors through their context.Context (see
// ObjectMemoFrom).
func WithObjectMemo(m ObjectMemo) EmitOption {
	return func(s *emitSettings) { s.memo = m }
}

// hostPromises is what an emission tells its interceptors through their
// context.Context: its memo and whether the host froze its contexts. One
// value, so an emission adds at most one layer to the context.
type hostPromises struct {
	memo   ObjectMemo
	frozen bool
}

type hostPromisesKey struct{}

func withHostPromises(ctx context.Context, p hostPromises) context.Context {
	return context.WithValue(ctx, hostPromisesKey{}, p)
}

func promisesFrom(ctx context.Context) hostPromises {
	p, _ := ctx.Value(hostPromisesKey{}).(hostPromises)
	return p
}

// ContextWithObjectMemo returns ctx carrying m for the interceptors
// called with it, as an emission made WithObjectMemo(m) does.
func ContextWithObjectMemo(ctx context.Context, m ObjectMemo) context.Context {
	p := promisesFrom(ctx)
	p.memo = m
	return withHostPromises(ctx, p)
}

// ObjectMemoFrom returns the memo of the emission that called an
// interceptor with ctx, or nil.
func ObjectMemoFrom(ctx context.Context) ObjectMemo { return promisesFrom(ctx).memo }

// ContextWithFrozenContexts returns ctx telling the interceptors called
// with it that the host froze its contexts, as an emitter made with
// Options.FrozenContexts does.
func ContextWithFrozenContexts(ctx context.Context) context.Context {
	p := promisesFrom(ctx)
	p.frozen = true
	return withHostPromises(ctx, p)
}

// ContextsFrozen reports whether the emission that called an interceptor
// with ctx belongs to a host that never modifies its contexts
// (Options.FrozenContexts): the interceptor may then share the parts of
// the context's target it leaves unchanged with its transform value.
func ContextsFrozen(ctx context.Context) bool { return promisesFrom(ctx).frozen }
