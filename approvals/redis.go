package approvals

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultPollInterval is how often a Redis waiter checks for its decision.
const DefaultPollInterval = 200 * time.Millisecond

// RedisOptions configures a Redis store.
type RedisOptions struct {
	// URL is a redis:// or rediss:// URL; ignored when Client is set.
	URL string
	// Client, when set, is used (and not closed by Close).
	Client *redis.Client
	// KeyPrefix prefixes every key (the session store's prefix).
	KeyPrefix string
	// Retention is how long an approval is kept past its deadline
	// (DefaultRetention when 0).
	Retention time.Duration
	// PollInterval is how often Wait looks for the decision
	// (DefaultPollInterval when 0).
	PollInterval time.Duration
}

// Redis is a Store shared by replicas: any of them lists and decides, and
// the replica holding the request sees the decision.
//
// Each approval is a hash ({prefix}approval:{id}: field "a" the approval,
// "d" the decision, set once with HSETNX) expiring at deadline+retention;
// the pending ids are a sorted set by creation time. Waiters poll the
// decision field rather than block on a list: a blocking pop would hold
// one pooled connection per waiting request, and approvals wait for
// humans, for whom a fraction of a second does not matter.
type Redis struct {
	client     *redis.Client
	ownsClient bool
	prefix     string
	retention  time.Duration
	poll       time.Duration
	now        func() time.Time
}

var _ Store = (*Redis)(nil)

// NewRedis returns a Redis store; it performs no I/O.
func NewRedis(opts RedisOptions) (*Redis, error) {
	r := &Redis{client: opts.Client, prefix: opts.KeyPrefix, retention: opts.Retention, poll: opts.PollInterval, now: time.Now}
	if r.retention <= 0 {
		r.retention = DefaultRetention
	}
	if r.poll <= 0 {
		r.poll = DefaultPollInterval
	}
	if r.client == nil {
		co, err := redis.ParseURL(opts.URL)
		if err != nil {
			// url.Parse errors quote the whole URL, password included.
			if ue := (*url.Error)(nil); errors.As(err, &ue) {
				err = ue.Err
			}
			return nil, fmt.Errorf("approvals: redis url: %w", err)
		}
		// Fail fast while Redis is unreachable (the request fails closed)
		// rather than retrying for seconds per command.
		if co.DialTimeout == 0 {
			co.DialTimeout = time.Second
		}
		if co.ReadTimeout == 0 {
			co.ReadTimeout = time.Second
		}
		if co.WriteTimeout == 0 {
			co.WriteTimeout = time.Second
		}
		co.DialerRetries = 1
		co.ContextTimeoutEnabled = true
		r.client = redis.NewClient(co)
		r.ownsClient = true
	}
	return r, nil
}

// Close closes the client NewRedis built.
func (r *Redis) Close() error {
	if r.ownsClient {
		return r.client.Close()
	}
	return nil
}

func (r *Redis) key(id string) string { return r.prefix + "approval:{" + id + "}" }
func (r *Redis) indexKey() string     { return r.prefix + "approvals:pending" }

// Put implements Store.
func (r *Redis) Put(ctx context.Context, a Approval) error {
	a.Decision = nil
	body, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("approvals: encode: %w", err)
	}
	k := r.key(a.ID)
	_, err = r.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSetNX(ctx, k, "a", body)
		p.PExpireAt(ctx, k, a.Deadline.Add(r.retention))
		p.ZAdd(ctx, r.indexKey(), redis.Z{Score: float64(a.Created.UnixMilli()), Member: a.ID})
		return nil
	})
	if err != nil {
		return fmt.Errorf("approvals: redis put: %w", err)
	}
	return nil
}

// Get implements Store.
func (r *Redis) Get(ctx context.Context, id string) (Approval, error) {
	vals, err := r.client.HMGet(ctx, r.key(id), "a", "d").Result()
	if err != nil {
		return Approval{}, fmt.Errorf("approvals: redis get: %w", err)
	}
	return decodeApproval(vals)
}

// List implements Store.
func (r *Redis) List(ctx context.Context) ([]Approval, error) {
	ids, err := r.client.ZRange(ctx, r.indexKey(), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("approvals: redis list: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	cmds := make([]*redis.SliceCmd, len(ids))
	if _, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HMGet(ctx, r.key(id), "a", "d")
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("approvals: redis list: %w", err)
	}
	now := r.now()
	var gone []any
	var list []Approval
	for i, c := range cmds {
		a, err := decodeApproval(c.Val())
		switch {
		case errors.Is(err, ErrNotFound):
			gone = append(gone, ids[i]) // expired with its owner gone
		case err != nil:
			return nil, err
		case a.Pending() && now.Before(a.Deadline):
			list = append(list, a)
		}
	}
	if len(gone) > 0 {
		// Best effort: the next List retries.
		r.client.ZRem(ctx, r.indexKey(), gone...)
	}
	return list, nil
}

// decideScript records the decision once and drops the id from the pending
// index. Returns 0 not found, 1 already decided, 2 decided now.
var decideScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('HSETNX', KEYS[1], 'd', ARGV[1]) == 0 then return 1 end
redis.call('ZREM', KEYS[2], ARGV[2])
return 2`)

// Decide implements Store.
func (r *Redis) Decide(ctx context.Context, id string, d Decision) error {
	body, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("approvals: encode decision: %w", err)
	}
	n, err := decideScript.Run(ctx, r.client, []string{r.key(id), r.indexKey()}, body, id).Int()
	if err != nil {
		return fmt.Errorf("approvals: redis decide: %w", err)
	}
	switch n {
	case 0:
		return ErrNotFound
	case 1:
		return ErrConflict
	}
	return nil
}

// Wait implements Store.
func (r *Redis) Wait(ctx context.Context, id string) (Decision, error) {
	t := time.NewTicker(r.poll)
	defer t.Stop()
	for {
		a, err := r.Get(ctx, id)
		if err != nil {
			if ctx.Err() != nil {
				return Decision{}, ctx.Err()
			}
			return Decision{}, err
		}
		if a.Decision != nil {
			return *a.Decision, nil
		}
		select {
		case <-ctx.Done():
			return Decision{}, ctx.Err()
		case <-t.C:
		}
	}
}

// decodeApproval decodes an HMGET of fields a and d.
func decodeApproval(vals []any) (Approval, error) {
	raw, ok := vals[0].(string)
	if !ok {
		return Approval{}, ErrNotFound
	}
	var a Approval
	if err := decodeJSON(raw, &a); err != nil {
		return Approval{}, fmt.Errorf("approvals: decode: %w", err)
	}
	if d, ok := vals[1].(string); ok {
		a.Decision = new(Decision)
		if err := decodeJSON(d, a.Decision); err != nil {
			return Approval{}, fmt.Errorf("approvals: decode decision: %w", err)
		}
	}
	return a, nil
}

// decodeJSON keeps numbers as json.Number, as the engine expects.
func decodeJSON(s string, v any) error {
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	return dec.Decode(v)
}
