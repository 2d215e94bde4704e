package sessions

import (
	"context"
	"errors"
	"fmt"
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
	// Cluster, when non-empty, lists seed host:port addresses of a Redis
	// Cluster; URL then only supplies credentials, TLS and timeouts (its
	// host is ignored) and may be empty.
	Cluster []string
	// Sentinel, when set, reaches the master that Sentinel reports for
	// Sentinel.Master; URL then only supplies credentials, database, TLS and
	// timeouts. Cluster and Sentinel are exclusive.
	Sentinel *Sentinel
	// Client, when set, is used instead of dialling (tests, or sharing a
	// connection pool): a *redis.Client, *redis.ClusterClient or a failover
	// client. The store does not close it.
	Client redis.UniversalClient
}

// Sentinel locates a Sentinel-managed master.
type Sentinel struct {
	// Master is the master's name in the Sentinel configuration.
	Master string
	// Addrs are the Sentinels' host:port addresses.
	Addrs []string
}

// Redis is a [Store] shared by gateway replicas through one Redis:
// standalone, Sentinel-managed or Redis Cluster. Requires Redis 6.2 or
// later.
//
// Layout (per session, plus the budget counters), where <tag> encodes the
// session's tenant and id (redis_keys.go: length-prefixed, braces escaped,
// so every key of one session shares one Redis Cluster hash tag and two
// sessions never share a key):
//
//	<prefix>s:{<tag>}        hash: started, starting, blocked, ended,
//	                         sealed, seq, owner, agent, tenant, id,
//	                         deadline (idle deadline, ms), unindexed
//	<prefix>s:{<tag>}:calls  sorted set: call id scored by its lease end (ms)
//	<prefix>s:{<tag>}:tools  set: open tool-call ids
//	<prefix>{idle:<n>}       sorted set, n = 0..15 (the shard is a hash of
//	                         <tag>): <tag> scored by a lower bound of its
//	                         idle deadline (ms)
//	<prefix>budget:<key>     integer: a budget counter (counters.go), TTL
//	                         set when it is created
//
// Every operation on a session is one atomic Lua script on that session's
// three keys (EVALSHA, falling back to EVAL after a script-cache flush such
// as a Redis restart), so each costs one round-trip, runs in one Cluster
// slot, and replicas never interleave inside one. BeginCall folds Begin,
// Acquire and the turn's first Next into one script. Begin (and BeginCall)
// add a round-trip the first time, to put the new session into the idle
// index; End adds one to take it out. The scripts read the Redis server's clock
// (TIME), not the replica's, so skewed replica clocks cannot end a session
// early or twice, or expire a lease early; scripts are replicated by
// effects, which is what makes TIME legal in a writing script. A session's
// keys carry one TTL (IdleTimeout+Retention after its last activity while
// live, or its last lease's end plus Retention if later; Retention once
// ended), so abandoned keys never leak even if no replica ever sweeps.
//
// The idle index is not updated atomically with the session (it lives in
// other slots). It is safe because the index is only a schedule of when to
// look: the decision to end a session is taken by claimScript on the
// session's own keys, from the deadline and leases stored there, and sets
// 'ended' only if it is unset, so exactly one caller (a sweep or End) ends
// a session. The index must only never lose a live session nor hold it
// later than its deadline. Activity only pushes the deadline later, so a
// score written once stays a lower bound; a sweep that finds the session
// not due reschedules it (ZADD GT) at the deadline it read, or one idle
// timeout on while a call is in flight (a release may come at any time).
// A new session is marked 'unindexed' until its entry is confirmed (the
// claiming replica ZADDs right after the claim, and its Admit or Block,
// which only follow a successful ZADD, clear the mark; a sweep that
// reached the entry clears it too), and any Begin that sees the mark
// writes the entry too: a replica dying between the claim and its ZADD
// (or its Admit) leaves the session to the next Begin. While the mark is
// set the session is Starting, so BeginCall hands out no number then.
// Stale entries (ended or forgotten sessions, reschedules that raced a
// claim) are dropped when a sweep reaches them, only if their score is
// still the one the sweep saw (unindexScript): a Begin that re-created a
// forgotten session meanwhile wrote a new score, and its entry stays.
// A KeyPrefix holding braces changes which text
// Redis hashes; keep braces out of it.
//
// Writing scripts are sent with client-side retries disabled: a retry after
// an ambiguous failure (a read timeout after the script ran) would run the
// script twice, which silently burns a sequence number or loses a claim
// (the first run claims, the retry reports "already claimed", and nobody
// emits). An error is returned instead and the gateway fails closed.
// Without Redis persistence a Redis restart forgets every session: the
// next Begin claims the id afresh (a second agent_startup, sequence from
// 0); run Redis with AOF or replication where that matters. Replication is
// asynchronous: a failover can lose the last writes acknowledged by the
// old master (a sequence number could be handed out twice); WAIT-based
// durability is not used.
type Redis struct {
	client     redis.UniversalClient
	ownsClient bool
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
	if r.client == nil {
		c, err := dial(opts)
		if err != nil {
			return nil, err
		}
		r.client, r.ownsClient = c, true
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
	keys, _ := r.sessionKeys(k)
	return r.run(ctx, s, keys, append([]any{r.idleMS, r.retainMS}, args...)...)
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
// blocked, ended, sealed, owner key id, agent id), followed by
// len(tail) integers it stores into tail, or just a negative code.
func (r *Redis) runStatus(ctx context.Context, op string, s script, k Key, tail []*int64, args ...any) (int64, Status, error) {
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
	end := max(len(v)-len(tail), 1)
	st, err := parseStatus(v[1:end])
	for i := 0; err == nil && i < len(tail); i++ {
		var ok bool
		if *tail[i], ok = v[end+i].(int64); !ok {
			err = errors.New("unexpected reply: a trailing value is not an integer")
		}
	}
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

// Begin implements [Store.Begin] in one round-trip, plus one (ZADD to the
// idle index) when the session is new: the claimer's Admit or Block then
// clears the session's 'unindexed' mark. An error indexing a claimed
// session is returned as an error (fail closed): the session exists but
// the caller does not emit its agent_startup, and the next Begin indexes
// it (two more round trips: ZADD, then HDEL of the mark).
func (r *Redis) Begin(ctx context.Context, k Key, owner Owner) (bool, Status, error) {
	code, st, err := r.runStatus(ctx, "begin", beginScript, k, nil, owner.KeyID, owner.AgentID, k.Tenant, k.ID)
	if err != nil {
		return false, Status{}, err
	}
	if err := r.index(ctx, k, code); err != nil {
		return false, Status{}, err
	}
	return code == 1, st, nil
}

// BeginCall implements [Store.BeginCall] in one round-trip, plus Begin's
// for a new or unindexed session.
func (r *Redis) BeginCall(ctx context.Context, k Key, owner Owner, call Call) (CallStart, error) {
	if err := checkLease(call.ID, call.Lease); err != nil {
		return CallStart{}, err
	}
	var leased, seq int64
	tail := make([]*int64, 2+len(call.Inputs))
	judged := make([]int64, len(call.Inputs))
	tail[0], tail[1] = &leased, &seq
	args := make([]any, 0, 7+len(call.Inputs))
	args = append(args, owner.KeyID, owner.AgentID, k.Tenant, k.ID, call.ID, ceilMS(call.Lease), call.Agent)
	for i, id := range call.Inputs {
		tail[2+i] = &judged[i]
		args = append(args, id)
	}
	code, st, err := r.runStatus(ctx, "begin call", beginCallScript, k, tail, args...)
	if err != nil {
		return CallStart{}, err
	}
	if err := r.index(ctx, k, code); err != nil {
		// The caller fails closed and never learns of the lease: release
		// it here (should that fail too, it expires on its own). No
		// number was taken (beginCallScript takes none with codes 1 and 2).
		if leased == 1 {
			if rErr := r.Release(context.WithoutCancel(ctx), k, call.ID); rErr != nil {
				err = errors.Join(err, rErr)
			}
		}
		return CallStart{}, err
	}
	cs := CallStart{Claimed: code == 1, Status: st, Leased: leased == 1, Seq: seq}
	if len(judged) > 0 && judged[0] >= 0 {
		cs.Judged = make([]bool, len(judged))
		for i, j := range judged {
			cs.Judged[i] = j == 1
		}
	}
	return cs, nil
}

// index puts k into its idle-index shard after a begin script replied
// code: 1 (new session: the claimer's Admit or Block clears the
// 'unindexed' mark), 2 (a session whose claimer has not confirmed its
// entry: this caller clears the mark after the ZADD) or 0 (indexed: no
// I/O). The score is negative (due at once: the next sweep reads the real
// deadline and reschedules the entry) and new (minus the replica's clock
// in ms), so a sweep that saw a stale entry of a forgotten earlier session
// under the same member does not remove this one (see unindexScript).
// Both commands may be retried.
func (r *Redis) index(ctx context.Context, k Key, code int64) error {
	if code != 1 && code != 2 {
		return nil
	}
	keys, member := r.sessionKeys(k)
	score := -float64(time.Now().UnixMilli())
	if err := r.client.ZAdd(ctx, r.idleKeyOf(member), redis.Z{Score: score, Member: member}).Err(); err != nil {
		return fmt.Errorf("sessions: redis begin: index: %w", err)
	}
	if code == 2 {
		if err := r.client.HDel(ctx, keys[0], "unindexed").Err(); err != nil {
			return fmt.Errorf("sessions: redis begin: index: %w", err)
		}
	}
	return nil
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

// End implements [Store.End] in one round-trip, plus one (ZREM from the
// idle index) for the caller that ended the session. Should that ZREM fail
// the session has ended anyway and a sweep drops its entry, so End still
// reports success.
func (r *Redis) End(ctx context.Context, k Key, owner Owner) (bool, Status, error) {
	code, st, err := r.runStatus(ctx, "end", endScript, k, nil, owner.KeyID)
	if err == nil && code == 1 {
		_, member := r.sessionKeys(k)
		_ = r.client.ZRem(ctx, r.idleKeyOf(member), member).Err()
	}
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

// InputsJudged implements [Store.InputsJudged] in one round-trip.
func (r *Redis) InputsJudged(ctx context.Context, k Key, ids []string) ([]bool, error) {
	if err := ValidateKey(k); err != nil {
		return nil, err
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	v, err := r.runSession(ctx, inputsJudgedScript, k, args...).Int64Slice()
	if err != nil {
		return nil, fmt.Errorf("sessions: redis inputs judged: %w", err)
	}
	if len(v) == 1 && v[0] < 0 {
		return nil, redisErr(v[0])
	}
	if len(v) != len(ids) {
		return nil, fmt.Errorf("sessions: redis inputs judged: %d replies for %d ids", len(v), len(ids))
	}
	out := make([]bool, len(ids))
	for i, n := range v {
		out[i] = n == 1
	}
	return out, nil
}

// NextMarkingInputs implements [Store.NextMarkingInputs] in one
// round-trip.
func (r *Redis) NextMarkingInputs(ctx context.Context, k Key, ids []string) (int64, error) {
	return r.runCode(ctx, "next marking inputs", nextMarkingScript, k, markArgs(ids)...)
}

// markArgs is the arguments of the scripts that record ids judged
// (markInputsLua): MaxJudgedInputs, then ids.
func markArgs(ids []string) []any {
	args := make([]any, 0, len(ids)+1)
	args = append(args, MaxJudgedInputs)
	for _, id := range ids {
		args = append(args, id)
	}
	return args
}

// ClaimExpired implements [Store.ClaimExpired]. It walks the idle-index
// shards; per shard one round-trip lists the due entries, then each entry
// costs one single-slot claimScript on its session's keys and one ZADD or
// conditional ZREM (unindexScript) on the shard. Errors on the index after a claim are ignored: the
// claim stands (it is returned) and a stale entry is dropped later.
func (r *Redis) ClaimExpired(ctx context.Context, max int) ([]Expired, error) {
	if max <= 0 {
		return nil, nil
	}
	var out []Expired
	for i := 0; i < idleShards && len(out) < max; i++ {
		shard := r.idleShardKey(i)
		// Rescheduled and dropped entries leave the due range, so each pass
		// looks at new entries; the bound stops a shard that keeps
		// refilling from starving the others.
		for pass := 0; pass < 4 && len(out) < max; pass++ {
			due, err := r.run(ctx, idleDueScript, []string{shard}, max-len(out)).StringSlice()
			if err != nil {
				return out, fmt.Errorf("sessions: redis claim expired: %w", err)
			}
			if len(due) == 0 || len(due)%2 != 0 {
				break
			}
			for j := 0; j < len(due); j += 2 {
				e, ok, err := r.claimOne(ctx, shard, due[j], due[j+1])
				if err != nil {
					return out, err
				}
				if ok {
					out = append(out, e)
				}
			}
		}
	}
	return out, nil
}

// claimOne runs claimScript on the session of index member m, seen in
// shard with score, and updates its entry there.
func (r *Redis) claimOne(ctx context.Context, shard, m, score string) (Expired, bool, error) {
	unindex := func() { _ = r.run(ctx, unindexScript, []string{shard}, m, score).Err() }
	v, err := r.run(ctx, claimScript, r.sessionKeysOf(m), r.retainMS, r.idleMS).Slice()
	if err != nil {
		return Expired{}, false, fmt.Errorf("sessions: redis claim expired: %w", err)
	}
	bad := func() error {
		return fmt.Errorf("sessions: redis claim expired: unexpected reply of %d values", len(v))
	}
	if len(v) == 0 {
		return Expired{}, false, bad()
	}
	switch code, _ := v[0].(int64); {
	case code == 0 && len(v) == 1:
		unindex()
		return Expired{}, false, nil
	case code == 2 && len(v) == 2:
		at, ok := v[1].(int64)
		if !ok {
			return Expired{}, false, bad()
		}
		// GT: never move an entry earlier than a concurrent sweep put it.
		if err := r.client.ZAddGT(ctx, shard, redis.Z{Score: float64(at), Member: m}).Err(); err != nil {
			return Expired{}, false, fmt.Errorf("sessions: redis claim expired: reschedule: %w", err)
		}
		return Expired{}, false, nil
	case code == 1 && len(v) == 6:
		tenant, ok1 := v[1].(string)
		id, ok2 := v[2].(string)
		keyID, ok3 := v[3].(string)
		agentID, ok4 := v[4].(string)
		blocked, ok5 := v[5].(int64)
		if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
			return Expired{}, false, errors.New("sessions: redis claim expired: unexpected reply types")
		}
		unindex()
		return Expired{Key: Key{Tenant: tenant, ID: id}, Owner: Owner{KeyID: keyID, AgentID: agentID}, Blocked: blocked == 1}, true, nil
	}
	return Expired{}, false, bad()
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
// sessions not yet swept included, and, briefly, stale entries a sweep has
// yet to drop): the size of the idle index, one ZCARD per shard in one
// pipeline; for metrics.
func (r *Redis) Active(ctx context.Context) (int64, error) {
	cmds := make([]*redis.IntCmd, idleShards)
	if _, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range cmds {
			cmds[i] = p.ZCard(ctx, r.idleShardKey(i))
		}
		return nil
	}); err != nil {
		return 0, fmt.Errorf("sessions: redis active: %w", err)
	}
	var n int64
	for _, c := range cmds {
		n += c.Val()
	}
	return n, nil
}
