package sessions

// The Lua scripts of the Redis store. Every session script takes the same
// keys and leading arguments:
//
//	KEYS[1] the session's state hash   KEYS[2] its leases (sorted set)
//	KEYS[3] its open tool calls (set)  KEYS[4] the idle index
//	ARGV[1] the session's idle-index member, ARGV[2] idle ms,
//	ARGV[3] retention ms, then the script's own arguments.
//
// KEYS[1..3] share one hash tag (redis_keys.go). The idle index is one
// global key, so a script that touches it spans two slots: the layout
// still needs standalone or Sentinel Redis, not Redis Cluster, until the
// index is sharded.
//
// Replies: a negative integer (or a table starting with one) is one of the
// codes below; redisErr maps them to the package's sentinel errors.

// Reply codes shared by the scripts and redisErr.
const (
	codeUnknown      = -1
	codeForeign      = -2
	codeSealed       = -3
	codeEnded        = -4
	codeNotEnded     = -5
	codeTooManyTools = -6
)

// sessionPrelude defines, for the session scripts: now (the Redis server's
// clock in ms: doubles hold it exactly, and Redis formats it with 14
// significant digits, exact until the year 5138), idle and retain,
// stretch(ms) (gives every existing key of the session the same TTL, at
// least ms and never less than the state hash has), expire(ms) (sets it
// exactly), touch() (pushes the idle deadline and the TTL), state() (reads
// the reported fields) and reply(code, f) (a status reply).
const sessionPrelude = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local idle = tonumber(ARGV[2])
local retain = tonumber(ARGV[3])
local function expire(ms)
  for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ms) end
end
local function stretch(ms)
  expire(math.max(redis.call('PTTL', KEYS[1]), ms))
end
local function touch()
  redis.call('ZADD', KEYS[4], now + idle, ARGV[1])
  stretch(idle + retain)
end
local function state()
  return redis.call('HMGET', KEYS[1], 'started', 'starting', 'blocked', 'ended', 'sealed', 'owner', 'agent')
end
local function flag(v)
  if v then return 1 end
  return 0
end
local function reply(code, f)
  return {code, flag(f[2]), flag(f[3]), flag(f[4]), flag(f[5]), f[6] or '', f[7] or ''}
end
`

// beginScript: ARGV[4] owner key id, ARGV[5] agent id, ARGV[6] tenant,
// ARGV[7] session id. Replies a status with code 1 for the claim, 0
// otherwise, or {codeForeign}. The claim reserves sequence 0 for the
// claimer's agent_startup, so no replica's emission can precede it in the
// session's order.
var beginScript = newScript(sessionPrelude + `
local f = state()
if not f[1] then
  redis.call('HSET', KEYS[1], 'started', '1', 'starting', '1', 'seq', 1,
    'owner', ARGV[4], 'agent', ARGV[5], 'tenant', ARGV[6], 'id', ARGV[7])
  touch()
  return reply(1, state())
end
if f[6] ~= ARGV[4] then return {-2} end
if not f[4] then touch() end
return reply(0, f)
`)

// admitScript: ends the Starting state. Replies 1 or codeUnknown.
var admitScript = newScript(sessionPrelude + `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
redis.call('HDEL', KEYS[1], 'starting')
return 1
`)

// blockScript: marks the session blocked, ending the Starting state.
// Replies 1 or codeUnknown.
var blockScript = newScript(sessionPrelude + `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
redis.call('HSET', KEYS[1], 'blocked', '1')
redis.call('HDEL', KEYS[1], 'starting')
return 1
`)

// nextScript replies the sequence number, codeUnknown or codeSealed. An
// ended session still counts (calls in flight finish) but is not put back
// into the idle index.
var nextScript = newScript(sessionPrelude + `
local f = redis.call('HMGET', KEYS[1], 'started', 'sealed', 'ended')
if not f[1] then return -1 end
if f[2] then return -3 end
local n = redis.call('HINCRBY', KEYS[1], 'seq', 1)
if not f[3] then touch() end
return n - 1
`)

// acquireScript: ARGV[4] call id, ARGV[5] lease ms. Replies 1, codeUnknown
// or codeEnded. Expired leases are pruned on the way; the session's keys
// live at least until the lease ends plus the retention.
var acquireScript = newScript(sessionPrelude + `
local f = redis.call('HMGET', KEYS[1], 'started', 'ended')
if not f[1] then return -1 end
if f[2] then return -4 end
local lease = tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZADD', KEYS[2], now + lease, ARGV[4])
touch()
stretch(lease + retain)
return 1
`)

// releaseScript: ARGV[4] call id. Replies 1. A live session's idle time
// starts again now.
var releaseScript = newScript(sessionPrelude + `
redis.call('ZREM', KEYS[2], ARGV[4])
local f = redis.call('HMGET', KEYS[1], 'started', 'ended')
if f[1] and not f[2] then touch() end
return 1
`)

// inFlightScript replies the number of unexpired leases.
var inFlightScript = newScript(sessionPrelude + `
return redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf')
`)

// endScript: ARGV[4] owner key id. Replies a status with code 1 for the
// one caller that ended the session, 0 if it had ended, or {codeUnknown}
// or {codeForeign}. The session leaves the idle index and its keys are
// kept for the retention.
var endScript = newScript(sessionPrelude + `
local f = state()
if not f[1] then return {-1} end
if f[6] ~= ARGV[4] then return {-2} end
if f[4] then return reply(0, f) end
redis.call('HSET', KEYS[1], 'ended', '1')
redis.call('ZREM', KEYS[4], ARGV[1])
expire(retain)
return reply(1, state())
`)

// sealScript replies the session's last sequence number, codeUnknown,
// codeSealed or codeNotEnded.
var sealScript = newScript(sessionPrelude + `
local f = redis.call('HMGET', KEYS[1], 'started', 'sealed', 'ended')
if not f[1] then return -1 end
if f[2] then return -3 end
if not f[3] then return -5 end
local n = redis.call('HINCRBY', KEYS[1], 'seq', 1)
redis.call('HSET', KEYS[1], 'sealed', '1')
return n - 1
`)

// openToolScript: ARGV[4] tool-call id, ARGV[5] the open-call limit.
// Replies 1, codeUnknown, codeSealed or codeTooManyTools. The set takes
// the state hash's TTL, so it expires with the session.
var openToolScript = newScript(sessionPrelude + `
local f = redis.call('HMGET', KEYS[1], 'started', 'sealed')
if not f[1] then return -1 end
if f[2] then return -3 end
if redis.call('SISMEMBER', KEYS[3], ARGV[4]) == 1 then return 1 end
if redis.call('SCARD', KEYS[3]) >= tonumber(ARGV[5]) then return -6 end
redis.call('SADD', KEYS[3], ARGV[4])
stretch(0)
return 1
`)

// closeToolScript: ARGV[4] tool-call id. Replies 1 to the one caller that
// closed an open call, 0 when there was none, or codeUnknown.
var closeToolScript = newScript(sessionPrelude + `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
return redis.call('SREM', KEYS[3], ARGV[4])
`)

// claimScript: KEYS[1] the idle index; ARGV[1] key prefix, ARGV[2] max,
// ARGV[3] retention ms. Replies five values per session this call ended,
// oldest deadline first: tenant, id, owner key id, agent id, blocked (0/1).
// Entries whose session is gone (forgotten before anyone swept) or already
// ended leave the index; a session holding an unexpired lease is
// rescheduled at its latest lease end instead of being claimed. Every entry
// looked at leaves the range [-inf, now], so the loop ends. The session
// keys are built here from index members (see redis_keys.go), so they are
// not declared in KEYS: one more reason this needs non-cluster Redis.
var claimScript = newScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local max = tonumber(ARGV[2])
local out = {}
local n = 0
while n < max do
  local members = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, max - n)
  if #members == 0 then break end
  for _, m in ipairs(members) do
    local h = ARGV[1] .. 's:{' .. m .. '}'
    local calls, tools = h .. ':calls', h .. ':tools'
    local f = redis.call('HMGET', h, 'started', 'ended', 'tenant', 'id', 'owner', 'agent', 'blocked')
    if not f[1] or f[2] then
      redis.call('ZREM', KEYS[1], m)
    else
      redis.call('ZREMRANGEBYSCORE', calls, '-inf', now)
      local last = redis.call('ZRANGE', calls, -1, -1, 'WITHSCORES')
      if #last > 0 then
        redis.call('ZADD', KEYS[1], last[2], m)
      else
        redis.call('ZREM', KEYS[1], m)
        redis.call('HSET', h, 'ended', '1')
        for _, k in ipairs({h, calls, tools}) do redis.call('PEXPIRE', k, ARGV[3]) end
        out[#out + 1] = f[3]
        out[#out + 1] = f[4]
        out[#out + 1] = f[5]
        out[#out + 1] = f[6]
        out[#out + 1] = f[7] and 1 or 0
        n = n + 1
      end
    end
  end
end
return out
`)
