package sessions

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultKeyPrefix prefixes every key the Redis store writes.
const DefaultKeyPrefix = "hooks-gateway:"

// Default client timeouts for a store built from a URL. They are short so a
// dead Redis turns into a fast error (and a fail-closed response) rather
// than a hung request. A URL's own dial_timeout/read_timeout/write_timeout
// query parameters take precedence.
const (
	defaultDialTimeout = time.Second
	defaultIOTimeout   = time.Second
)

// RedisOptions configures a Redis store.
type RedisOptions struct {
	// URL locates Redis: redis://[user:password@]host:port[/db][?options],
	// rediss:// for TLS, or unix:///path. Ignored when Client is set.
	URL string
	// KeyPrefix prefixes every key; empty means DefaultKeyPrefix. Replicas
	// sharing sessions must use the same prefix (and the same Options).
	KeyPrefix string
	// Options sets the idle timeout and retention (Now is ignored: the
	// store uses the Redis server's clock).
	Options
	// Client, when set, is used instead of dialling URL (tests, or sharing a
	// connection pool). The store does not close it.
	Client *redis.Client
}

// Redis is a [Store] shared by gateway replicas through one Redis (standalone
// or Sentinel-managed; not Redis Cluster, see below). Requires Redis 5 or
// later.
//
// Layout (per session, plus the budget counters), where <tag> encodes the
// session's tenant and id (redis_keys.go: length-prefixed, braces escaped,
// so every key of one session shares one Redis Cluster hash tag and two
// sessions never share a key):
//
//	<prefix>s:{<tag>}        hash: started, starting, blocked, ended,
//	                         sealed, seq, owner, agent, tenant, id
//	<prefix>s:{<tag>}:calls  sorted set: call id scored by its lease end (ms)
//	<prefix>s:{<tag>}:tools  set: open tool-call ids
//	<prefix>idle             sorted set: <tag> scored by its idle deadline
//	                         (ms), live sessions only
//	<prefix>budget:<key>     integer: a budget counter (counters.go), TTL
//	                         set when it is created
//
// Every operation is one atomic Lua script (EVALSHA, falling back to EVAL
// after a script-cache flush such as a Redis restart), so each costs one
// round-trip and replicas never interleave inside one. The scripts read
// the Redis server's clock (TIME), not the replica's, so skewed replica
// clocks cannot end a session early or twice, or expire a lease early;
// Redis 5+ replicates scripts by effects, which is what makes TIME legal
// in a writing script. A session's keys carry one TTL (IdleTimeout+
// Retention after its last activity while live, or its last lease's end
// plus Retention if later; Retention once ended), so abandoned keys never
// leak even if no replica ever sweeps.
//
// The idle index is one key for all sessions, and ClaimExpired builds
// session keys inside its script from the index, so scripts that touch
// the index span two slots: this layout does not run on Redis Cluster yet
// (a sharded index would fix that; each session's own keys already share
// a slot). A KeyPrefix holding braces changes which text Redis hashes;
// keep braces out of it.
//
// Writing scripts are sent with client-side retries disabled: a retry after
// an ambiguous failure (a read timeout after the script ran) would run the
// script twice, which silently burns a sequence number or loses a claim
// (the first run claims, the retry reports "already claimed", and nobody
// emits). An error is returned instead and the gateway fails closed.
// Without Redis persistence a Redis restart forgets every session: the
// next Begin claims the id afresh (a second agent_startup, sequence from
// 0); run Redis with AOF or replication where that matters.
type Redis struct {
	client     *redis.Client
	ownsClient bool
	idleKey    string
	prefix     string
	idleMS     int64
	retainMS   int64
}

var _ Store = (*Redis)(nil)

// NewRedis returns a Redis store. It performs no I/O, so a gateway starts
// even while Redis is down (readiness reports it through Ping); it fails
// only for an unparseable URL. ctx is accepted for symmetry with the
// store's other constructors and is currently unused.
//
// A client built from URL defaults to a 1 s dial timeout, 1 s read/write
// timeouts, one dial attempt per command and context deadlines honoured,
// so every method fails fast while Redis is unreachable.
func NewRedis(_ context.Context, opts RedisOptions) (*Redis, error) {
	o := opts.Options.withDefaults()
	r := &Redis{
		client:   opts.Client,
		prefix:   opts.KeyPrefix,
		idleMS:   ceilMS(o.IdleTimeout),
		retainMS: ceilMS(o.Retention),
	}
	if r.prefix == "" {
		r.prefix = DefaultKeyPrefix
	}
	r.idleKey = r.prefix + "idle"
	if r.client == nil {
		co, err := redis.ParseURL(opts.URL)
		if err != nil {
			// url.Parse errors quote the whole URL, password included.
			if ue := (*url.Error)(nil); errors.As(err, &ue) {
				err = ue.Err
			}
			return nil, fmt.Errorf("sessions: redis url: %w", err)
		}
		if co.DialTimeout == 0 {
			co.DialTimeout = defaultDialTimeout
		}
		if co.ReadTimeout == 0 {
			co.ReadTimeout = defaultIOTimeout
		}
		if co.WriteTimeout == 0 {
			co.WriteTimeout = defaultIOTimeout
		}
		// go-redis otherwise dials 5 times per command with 100 ms pauses.
		co.DialerRetries = 1
		co.ContextTimeoutEnabled = true
		r.client = redis.NewClient(co)
		r.ownsClient = true
	}
	return r, nil
}

// ceilMS converts d to whole milliseconds, rounding up, at least 1.
func ceilMS(d time.Duration) int64 {
	return max(1, int64((d+time.Millisecond-1)/time.Millisecond))
}

// script is a Lua script with its source kept for the EVAL fallback
// (redis.Script does not expose it). Immutable after package init.
type script struct {
	*redis.Script
	src string
}

func newScript(src string) script { return script{redis.NewScript(src), src} }

// onceCmd is a command go-redis must not retry: it may have run on the
// server even when the client saw an error.
type onceCmd struct{ *redis.Cmd }

// NoRetry reports that the command is not idempotent.
func (onceCmd) NoRetry() bool { return true }

// run executes a writing script once: EVALSHA, then EVAL if the server's
// script cache lacks it (NOSCRIPT means it did not run, so that is safe).
func (r *Redis) run(ctx context.Context, s script, keys []string, args ...any) *redis.Cmd {
	argv := func(verb, body string) []any {
		a := make([]any, 0, 3+len(keys)+len(args))
		a = append(a, verb, body, len(keys))
		for _, k := range keys {
			a = append(a, k)
		}
		return append(a, args...)
	}
	cmd := redis.NewCmd(ctx, argv("evalsha", s.Hash())...)
	_ = r.client.Process(ctx, onceCmd{cmd})
	if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
		cmd = redis.NewCmd(ctx, argv("eval", s.src)...)
		_ = r.client.Process(ctx, onceCmd{cmd})
	}
	return cmd
}

// redisErr maps a script's reply code to the package's sentinel errors;
// it returns nil for a non-negative code.
func redisErr(code int64) error {
	switch code {
	case codeUnknown:
		return ErrUnknownSession
	case codeForeign:
		return ErrForeignSession
	case codeSealed:
		return ErrSessionSealed
	case codeEnded:
		return ErrSessionEnded
	case codeNotEnded:
		return ErrSessionNotEnded
	case codeTooManyTools:
		return ErrTooManyToolCalls
	}
	if code < 0 {
		return fmt.Errorf("sessions: redis: unexpected reply code %d", code)
	}
	return nil
}

// runSession runs a session script for k with the common arguments
// (redis_scripts.go) followed by args.
func (r *Redis) runSession(ctx context.Context, s script, k Key, args ...any) *redis.Cmd {
	keys, member := r.sessionKeys(k)
	return r.run(ctx, s, keys, append([]any{member, r.idleMS, r.retainMS}, args...)...)
}

// runCode runs a session script replying one integer and maps negative
// codes to errors.
func (r *Redis) runCode(ctx context.Context, op string, s script, k Key, args ...any) (int64, error) {
	if err := ValidateKey(k); err != nil {
		return 0, err
	}
	n, err := r.runSession(ctx, s, k, args...).Int64()
	if err != nil {
		return 0, fmt.Errorf("sessions: redis %s: %w", op, err)
	}
	if err := redisErr(n); err != nil {
		return 0, err
	}
	return n, nil
}

// runStatus runs a session script replying a status (code, starting,
// blocked, ended, sealed, owner key id, agent id) or just a negative code.
func (r *Redis) runStatus(ctx context.Context, op string, s script, k Key, args ...any) (int64, Status, error) {
	if err := ValidateKey(k); err != nil {
		return 0, Status{}, err
	}
	v, err := r.runSession(ctx, s, k, args...).Slice()
	if err != nil {
		return 0, Status{}, fmt.Errorf("sessions: redis %s: %w", op, err)
	}
	if len(v) == 0 {
		return 0, Status{}, fmt.Errorf("sessions: redis %s: empty reply", op)
	}
	code, ok := v[0].(int64)
	if !ok {
		return 0, Status{}, fmt.Errorf("sessions: redis %s: unexpected reply", op)
	}
	if err := redisErr(code); err != nil {
		return 0, Status{}, err
	}
	st, err := parseStatus(v[1:])
	if err != nil {
		return 0, Status{}, fmt.Errorf("sessions: redis %s: %w", op, err)
	}
	return code, st, nil
}

// parseStatus reads the four flags and the owner of a status reply.
func parseStatus(v []any) (Status, error) {
	if len(v) != 6 {
		return Status{}, fmt.Errorf("unexpected reply of %d values", len(v)+1)
	}
	var flags [4]bool
	for i := range flags {
		n, ok := v[i].(int64)
		if !ok {
			return Status{}, errors.New("unexpected reply: flag is not an integer")
		}
		flags[i] = n == 1
	}
	keyID, ok1 := v[4].(string)
	agentID, ok2 := v[5].(string)
	if !ok1 || !ok2 {
		return Status{}, errors.New("unexpected reply: owner is not a string")
	}
	return Status{Started: true, Starting: flags[0], Blocked: flags[1], Ended: flags[2], Sealed: flags[3],
		Owner: Owner{KeyID: keyID, AgentID: agentID}}, nil
}

// Begin implements [Store.Begin] in one round-trip.
func (r *Redis) Begin(ctx context.Context, k Key, owner Owner) (bool, Status, error) {
	code, st, err := r.runStatus(ctx, "begin", beginScript, k, owner.KeyID, owner.AgentID, k.Tenant, k.ID)
	return code == 1, st, err
}

// Admit implements [Store.Admit] in one round-trip.
func (r *Redis) Admit(ctx context.Context, k Key) error {
	_, err := r.runCode(ctx, "admit", admitScript, k)
	return err
}

// Block implements [Store.Block] in one round-trip.
func (r *Redis) Block(ctx context.Context, k Key) error {
	_, err := r.runCode(ctx, "block", blockScript, k)
	return err
}

// Next implements [Store.Next] in one round-trip.
func (r *Redis) Next(ctx context.Context, k Key) (int64, error) {
	return r.runCode(ctx, "next", nextScript, k)
}

// Acquire implements [Store.Acquire] in one round-trip; the lease runs on
// the Redis server's clock.
func (r *Redis) Acquire(ctx context.Context, k Key, callID string, lease time.Duration) error {
	if err := checkLease(callID, lease); err != nil {
		return err
	}
	_, err := r.runCode(ctx, "acquire", acquireScript, k, callID, ceilMS(lease))
	return err
}

// Release implements [Store.Release] in one round-trip. Releasing a call
// of an unknown (or forgotten) session is not an error either.
func (r *Redis) Release(ctx context.Context, k Key, callID string) error {
	if err := validateCallID(callID); err != nil {
		return err
	}
	_, err := r.runCode(ctx, "release", releaseScript, k, callID)
	return err
}

// InFlight implements [Store.InFlight] in one round-trip; an unknown
// session has none.
func (r *Redis) InFlight(ctx context.Context, k Key) (int, error) {
	n, err := r.runCode(ctx, "in flight", inFlightScript, k)
	return int(n), err
}

// End implements [Store.End] in one round-trip.
func (r *Redis) End(ctx context.Context, k Key, owner Owner) (bool, Status, error) {
	code, st, err := r.runStatus(ctx, "end", endScript, k, owner.KeyID)
	return code == 1, st, err
}

// Seal implements [Store.Seal] in one round-trip.
func (r *Redis) Seal(ctx context.Context, k Key) (int64, error) {
	return r.runCode(ctx, "seal", sealScript, k)
}

// OpenToolCall implements [Store.OpenToolCall] in one round-trip. It works
// until the session is sealed (like Next: an emission in flight at End may
// still open one).
func (r *Redis) OpenToolCall(ctx context.Context, k Key, toolCallID string) error {
	if err := validateCallID(toolCallID); err != nil {
		return err
	}
	_, err := r.runCode(ctx, "open tool call", openToolScript, k, toolCallID, MaxOpenToolCalls)
	return err
}

// CloseToolCall implements [Store.CloseToolCall] in one round-trip.
func (r *Redis) CloseToolCall(ctx context.Context, k Key, toolCallID string) (bool, error) {
	if err := validateCallID(toolCallID); err != nil {
		return false, err
	}
	n, err := r.runCode(ctx, "close tool call", closeToolScript, k, toolCallID)
	return n == 1, err
}

// ClaimExpired implements [Store.ClaimExpired] in one round-trip.
func (r *Redis) ClaimExpired(ctx context.Context, max int) ([]Expired, error) {
	if max <= 0 {
		return nil, nil
	}
	v, err := r.run(ctx, claimScript, []string{r.idleKey}, r.prefix, max, r.retainMS).Slice()
	if err != nil {
		return nil, fmt.Errorf("sessions: redis claim expired: %w", err)
	}
	if len(v)%5 != 0 {
		return nil, fmt.Errorf("sessions: redis claim expired: unexpected reply of %d values", len(v))
	}
	out := make([]Expired, 0, len(v)/5)
	for i := 0; i < len(v); i += 5 {
		tenant, ok1 := v[i].(string)
		id, ok2 := v[i+1].(string)
		keyID, ok3 := v[i+2].(string)
		agentID, ok4 := v[i+3].(string)
		blocked, ok5 := v[i+4].(int64)
		if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
			return nil, errors.New("sessions: redis claim expired: unexpected reply types")
		}
		out = append(out, Expired{Key: Key{Tenant: tenant, ID: id}, Owner: Owner{KeyID: keyID, AgentID: agentID}, Blocked: blocked == 1})
	}
	return out, nil
}

// Status implements [Store.Status] with one HMGET (read-only, so safe for
// the client to retry).
func (r *Redis) Status(ctx context.Context, k Key) (Status, bool, error) {
	if err := ValidateKey(k); err != nil {
		return Status{}, false, err
	}
	keys, _ := r.sessionKeys(k)
	v, err := r.client.HMGet(ctx, keys[0], "started", "starting", "blocked", "ended", "sealed", "owner", "agent").Result()
	if err != nil {
		return Status{}, false, fmt.Errorf("sessions: redis status: %w", err)
	}
	if len(v) != 7 || v[0] == nil {
		return Status{}, false, nil
	}
	keyID, _ := v[5].(string)
	agentID, _ := v[6].(string)
	return Status{Started: true, Starting: v[1] != nil, Blocked: v[2] != nil, Ended: v[3] != nil, Sealed: v[4] != nil,
		Owner: Owner{KeyID: keyID, AgentID: agentID}}, true, nil
}

// Ping implements [Store.Ping].
func (r *Redis) Ping(ctx context.Context) error {
	if err := r.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("sessions: redis ping: %w", err)
	}
	return nil
}

// Close implements [Store.Close]: it closes the client unless the caller
// supplied it.
func (r *Redis) Close() error {
	if !r.ownsClient {
		return nil
	}
	if err := r.client.Close(); err != nil {
		return fmt.Errorf("sessions: redis close: %w", err)
	}
	return nil
}

// Active reports how many sessions have begun and not yet ended (idle
// sessions not yet swept included): the size of the idle index, one ZCARD;
// for metrics.
func (r *Redis) Active(ctx context.Context) (int64, error) {
	n, err := r.client.ZCard(ctx, r.idleKey).Result()
	if err != nil {
		return 0, fmt.Errorf("sessions: redis active: %w", err)
	}
	return n, nil
}
