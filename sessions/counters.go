package sessions

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// maxCounterKeyLen bounds a counter key; keys embed agent and tenant ids,
// and a runaway id must not become a runaway key.
const maxCounterKeyLen = 1024

// ErrInvalidCounter is returned (wrapped) for an empty or oversized key or
// a non-positive ttl.
var ErrInvalidCounter = errors.New("sessions: invalid counter")

// checkCounter validates a counter's key and ttl; it never echoes the key.
func checkCounter(key string, ttl time.Duration) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: empty key", ErrInvalidCounter)
	case len(key) > maxCounterKeyLen:
		return fmt.Errorf("%w: key of %d bytes", ErrInvalidCounter, len(key))
	case ttl <= 0:
		return fmt.Errorf("%w: ttl %v is not positive", ErrInvalidCounter, ttl)
	}
	return nil
}

// memCounter is one counter of a Memory store; guarded by Memory.mu.
type memCounter struct {
	value    int64
	expireAt time.Time
}

// counterPruneEvery is how often (at most) a Memory store scans its
// counters for expired ones. Expired counters are also ignored on access,
// so this only bounds memory, not correctness.
const counterPruneEvery = time.Minute

// counter returns key's live counter, creating it with ttl when create is
// true (nil otherwise). The caller holds m.mu.
func (m *Memory) counter(key string, ttl time.Duration, now time.Time, create bool) *memCounter {
	if !now.Before(m.counterPruneAt) {
		for k, c := range m.counters {
			if !now.Before(c.expireAt) {
				delete(m.counters, k)
			}
		}
		m.counterPruneAt = now.Add(counterPruneEvery)
	}
	c := m.counters[key]
	if c != nil && !now.Before(c.expireAt) {
		delete(m.counters, key)
		c = nil
	}
	if c == nil && create {
		c = &memCounter{expireAt: now.Add(ttl)}
		m.counters[strings.Clone(key)] = c // see Memory on retention
	}
	return c
}

// ReserveCounter adds n to the counter at key only if the result stays at
// or below limit, atomically. It returns the counter's value afterwards
// (unchanged when refused) and whether n was added. A counter created by
// the call expires ttl later.
func (m *Memory) ReserveCounter(_ context.Context, key string, ttl time.Duration, n, limit int64) (int64, bool, error) {
	if err := checkCounter(key, ttl); err != nil {
		return 0, false, err
	}
	now := m.opts.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	var cur int64
	if c := m.counter(key, ttl, now, false); c != nil {
		cur = c.value
	}
	if cur+n > limit {
		return cur, false, nil
	}
	c := m.counter(key, ttl, now, true)
	c.value += n
	return c.value, true, nil
}

// AddCounter adds n (negative to give back) to the counter at key and
// returns the new value. A counter created by the call expires ttl later.
func (m *Memory) AddCounter(_ context.Context, key string, ttl time.Duration, n int64) (int64, error) {
	if err := checkCounter(key, ttl); err != nil {
		return 0, err
	}
	now := m.opts.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.counter(key, ttl, now, true)
	c.value += n
	return c.value, nil
}

// ReadCounter returns the counter's value, 0 when it does not exist.
func (m *Memory) ReadCounter(_ context.Context, key string) (int64, error) {
	if err := checkCounter(key, time.Nanosecond); err != nil {
		return 0, err
	}
	now := m.opts.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := m.counter(key, 0, now, false); c != nil {
		return c.value, nil
	}
	return 0, nil
}

// counterKey is the Redis key of a counter.
func (r *Redis) counterKey(key string) string { return r.prefix + "budget:" + key }

// reserveScript: KEYS[1] counter; ARGV[1] n, ARGV[2] limit, ARGV[3] ttl ms.
// Returns {value, added}. The TTL is set when the counter is created (a key
// without one is given one), never pushed, so a window's counter expires on
// schedule however busy it is.
var reserveScript = newScript(`
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
local n = tonumber(ARGV[1])
if v + n > tonumber(ARGV[2]) then return {v, 0} end
v = redis.call('INCRBY', KEYS[1], n)
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return {v, 1}
`)

// addScript: KEYS[1] counter; ARGV[1] n, ARGV[2] ttl ms. Returns the new
// value.
var addScript = newScript(`
local v = redis.call('INCRBY', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return v
`)

// ReserveCounter implements the same operation as [Memory.ReserveCounter]
// in one round-trip (one Lua script, never retried by the client).
func (r *Redis) ReserveCounter(ctx context.Context, key string, ttl time.Duration, n, limit int64) (int64, bool, error) {
	if err := checkCounter(key, ttl); err != nil {
		return 0, false, err
	}
	v, err := r.run(ctx, reserveScript, []string{r.counterKey(key)}, n, limit, ceilMS(ttl)).Int64Slice()
	if err != nil {
		return 0, false, fmt.Errorf("sessions: redis reserve counter: %w", err)
	}
	if len(v) != 2 {
		return 0, false, fmt.Errorf("sessions: redis reserve counter: unexpected reply of %d values", len(v))
	}
	return v[0], v[1] == 1, nil
}

// AddCounter implements the same operation as [Memory.AddCounter] in one
// round-trip (one Lua script, never retried by the client).
func (r *Redis) AddCounter(ctx context.Context, key string, ttl time.Duration, n int64) (int64, error) {
	if err := checkCounter(key, ttl); err != nil {
		return 0, err
	}
	v, err := r.run(ctx, addScript, []string{r.counterKey(key)}, n, ceilMS(ttl)).Int64()
	if err != nil {
		return 0, fmt.Errorf("sessions: redis add counter: %w", err)
	}
	return v, nil
}

// ReadCounter implements the same operation as [Memory.ReadCounter] with
// one GET (read-only, so safe for the client to retry).
func (r *Redis) ReadCounter(ctx context.Context, key string) (int64, error) {
	if err := checkCounter(key, time.Nanosecond); err != nil {
		return 0, err
	}
	v, err := r.client.Get(ctx, r.counterKey(key)).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("sessions: redis read counter: %w", err)
	}
	return v, nil
}
