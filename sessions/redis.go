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
// Layout (per session id, plus the budget counters):
//
//	<prefix>s:{<id>}  hash: started, blocked, ended, seq
//	<prefix>idle      sorted set: id scored by its idle deadline (ms)
//	<prefix>budget:<key>  integer: a budget counter (counters.go), TTL set
//	                  when it is created
//
// Every operation is one atomic Lua script (EVALSHA, falling back to EVAL
// after a script-cache flush such as a Redis restart), so each costs one
// round-trip and replicas never interleave inside one. The scripts read
// the Redis server's clock (TIME), not the replica's, so skewed replica
// clocks cannot end a session early or twice; Redis 5+ replicates scripts
// by effects, which is what makes TIME legal in a writing script.
// Every session hash carries a TTL (IdleTimeout+Retention while live,
// Retention once ended), so abandoned keys never leak even if no replica
// ever sweeps.
//
// ClaimExpired builds session keys inside the script from the idle index,
// and the idle index and session hashes live in different hash slots, so
// this layout does not run on Redis Cluster.
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

// sessionKey is the hash holding one session. The id is validated, and the
// fixed "s:{" and "}" around it keep the id-to-key mapping injective.
func (r *Redis) sessionKey(id string) string {
	return r.prefix + "s:{" + id + "}"
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

// nowMS is the Lua prelude giving the Redis server's clock in milliseconds.
// Doubles hold it exactly; Redis formats it with 14 significant digits,
// which is exact until the year 5138.
const nowMS = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`

// beginScript: KEYS[1] session hash, KEYS[2] idle index; ARGV[1] id,
// ARGV[2] idle ms, ARGV[3] retention ms. Returns {claimed, blocked, ended}.
var beginScript = newScript(nowMS + `
local f = redis.call('HMGET', KEYS[1], 'started', 'blocked', 'ended')
local blocked = f[2] and 1 or 0
if f[3] then return {0, blocked, 1} end
local claimed = 0
if not f[1] then
  -- The claim reserves sequence 0 for the claimer's agent_startup, so no
  -- other replica's emission can come before it in the session's order.
  redis.call('HSET', KEYS[1], 'started', '1', 'seq', 1)
  claimed = 1
end
local idle = tonumber(ARGV[2])
redis.call('ZADD', KEYS[2], now + idle, ARGV[1])
redis.call('PEXPIRE', KEYS[1], idle + tonumber(ARGV[3]))
return {claimed, blocked, 0}
`)

// nextScript: same KEYS and ARGV as beginScript. Returns the sequence
// number, or -1 for an unknown session. An ended session still counts (its
// shutdown needs a number) but is not put back into the idle index.
var nextScript = newScript(nowMS + `
local f = redis.call('HMGET', KEYS[1], 'started', 'ended')
if not f[1] then return -1 end
local n = redis.call('HINCRBY', KEYS[1], 'seq', 1)
if not f[2] then
  local idle = tonumber(ARGV[2])
  redis.call('ZADD', KEYS[2], now + idle, ARGV[1])
  redis.call('PEXPIRE', KEYS[1], idle + tonumber(ARGV[3]))
end
return n - 1
`)

// blockScript: KEYS[1] session hash. Returns 1, or 0 for an unknown session.
var blockScript = newScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'blocked', '1')
return 1
`)

// endScript: KEYS[1] session hash, KEYS[2] idle index; ARGV[1] id,
// ARGV[2] retention ms. Returns 1 to the one caller that ended the session,
// 0 if it had already ended, -1 if it is unknown.
var endScript = newScript(`
local f = redis.call('HMGET', KEYS[1], 'started', 'ended')
if not f[1] then return -1 end
if f[2] then return 0 end
redis.call('HSET', KEYS[1], 'ended', '1')
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`)

// claimScript: KEYS[1] idle index; ARGV[1] key prefix, ARGV[2] max,
// ARGV[3] retention ms. Returns the ids this call ended, oldest deadline
// first. The ZREM guard makes each id's transition happen once even if the
// index and hashes ever disagree; a hash already gone (forgotten before
// anyone swept) is dropped from the index without being returned.
var claimScript = newScript(nowMS + `
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for _, id in ipairs(ids) do
  if redis.call('ZREM', KEYS[1], id) == 1 then
    local k = ARGV[1] .. 's:{' .. id .. '}'
    local f = redis.call('HMGET', k, 'started', 'ended')
    if f[1] and not f[2] then
      redis.call('HSET', k, 'ended', '1')
      redis.call('PEXPIRE', k, ARGV[3])
      out[#out + 1] = id
    end
  end
end
return out
`)

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

// Begin implements [Store.Begin] in one round-trip.
func (r *Redis) Begin(ctx context.Context, id string) (bool, Status, error) {
	if err := ValidateID(id); err != nil {
		return false, Status{}, err
	}
	v, err := r.run(ctx, beginScript, []string{r.sessionKey(id), r.idleKey}, id, r.idleMS, r.retainMS).Int64Slice()
	if err != nil {
		return false, Status{}, fmt.Errorf("sessions: redis begin: %w", err)
	}
	if len(v) != 3 {
		return false, Status{}, fmt.Errorf("sessions: redis begin: unexpected reply of %d values", len(v))
	}
	return v[0] == 1, Status{Started: true, Blocked: v[1] == 1, Ended: v[2] == 1}, nil
}

// Next implements [Store.Next] in one round-trip.
func (r *Redis) Next(ctx context.Context, id string) (int64, error) {
	if err := ValidateID(id); err != nil {
		return 0, err
	}
	n, err := r.run(ctx, nextScript, []string{r.sessionKey(id), r.idleKey}, id, r.idleMS, r.retainMS).Int64()
	if err != nil {
		return 0, fmt.Errorf("sessions: redis next: %w", err)
	}
	if n < 0 {
		return 0, ErrUnknownSession
	}
	return n, nil
}

// Block implements [Store.Block] in one round-trip.
func (r *Redis) Block(ctx context.Context, id string) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	n, err := r.run(ctx, blockScript, []string{r.sessionKey(id)}).Int64()
	if err != nil {
		return fmt.Errorf("sessions: redis block: %w", err)
	}
	if n == 0 {
		return ErrUnknownSession
	}
	return nil
}

// End implements [Store.End] in one round-trip.
func (r *Redis) End(ctx context.Context, id string) (bool, error) {
	if err := ValidateID(id); err != nil {
		return false, err
	}
	n, err := r.run(ctx, endScript, []string{r.sessionKey(id), r.idleKey}, id, r.retainMS).Int64()
	if err != nil {
		return false, fmt.Errorf("sessions: redis end: %w", err)
	}
	if n < 0 {
		return false, ErrUnknownSession
	}
	return n == 1, nil
}

// ClaimExpired implements [Store.ClaimExpired] in one round-trip.
func (r *Redis) ClaimExpired(ctx context.Context, max int) ([]string, error) {
	if max <= 0 {
		return nil, nil
	}
	ids, err := r.run(ctx, claimScript, []string{r.idleKey}, r.prefix, max, r.retainMS).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("sessions: redis claim expired: %w", err)
	}
	return ids, nil
}

// Status implements [Store.Status] with one HMGET (read-only, so safe for
// the client to retry).
func (r *Redis) Status(ctx context.Context, id string) (Status, bool, error) {
	if err := ValidateID(id); err != nil {
		return Status{}, false, err
	}
	v, err := r.client.HMGet(ctx, r.sessionKey(id), "started", "blocked", "ended").Result()
	if err != nil {
		return Status{}, false, fmt.Errorf("sessions: redis status: %w", err)
	}
	if len(v) != 3 || v[0] == nil {
		return Status{}, false, nil
	}
	return Status{Started: true, Blocked: v[1] != nil, Ended: v[2] != nil}, true, nil
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
