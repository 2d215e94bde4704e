package sessions

// The Lua scripts of the Redis store. Every session script takes the same
// keys and leading arguments:
//
//	KEYS[1] the session's state hash   KEYS[2] its leases (sorted set)
//	KEYS[3] its open tool calls (set)  KEYS[4] its judged inputs (set)
//	ARGV[1] idle ms, ARGV[2] retention ms, then the script's own arguments.
//
// KEYS[1..4] share one hash tag (redis_keys.go), so every script runs in
// one Redis Cluster slot. No script touches the idle index: the session's
// idle deadline lives in its own hash ('deadline', ms on the server's
// clock), and the index (sharded, redis_keys.go) only holds a lower bound
// of it, written by the Go side (see Redis for why that is safe).
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
local idle = tonumber(ARGV[1])
local retain = tonumber(ARGV[2])
local function expire(ms)
  for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ms) end
end
local function stretch(ms)
  expire(math.max(redis.call('PTTL', KEYS[1]), ms))
end
local function touch()
  redis.call('HSET', KEYS[1], 'deadline', now + idle)
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

// beginScript: ARGV[3] owner key id, ARGV[4] agent id, ARGV[5] tenant,
// ARGV[6] session id. Replies a status with code 1 for the claim, 0
// otherwise (2 when the claimer has not yet confirmed the session is in
// the idle index: the caller then indexes it too), or {codeForeign}. The claim reserves sequence 0 for the
// claimer's agent_startup, so no replica's emission can precede it in the
// session's order.
var beginScript = newScript(sessionPrelude + `
local f = state()
if not f[1] then
  redis.call('HSET', KEYS[1], 'started', '1', 'starting', '1', 'seq', 1,
    'owner', ARGV[3], 'agent', ARGV[4], 'tenant', ARGV[5], 'id', ARGV[6],
    'unindexed', '1')
  touch()
  return reply(1, state())
end
if f[6] ~= ARGV[3] then return {-2} end
if not f[4] then touch() end
if f[4] or redis.call('HEXISTS', KEYS[1], 'unindexed') == 0 then return reply(0, f) end
return reply(2, f)
`)

// beginCallScript is beginScript followed by acquireScript, nextScript and
// inputsJudgedScript in one step: ARGV[3..6] as for beginScript, ARGV[7]
// call id, ARGV[8] lease ms, ARGV[9] the asserted agent (empty for none),
// ARGV[10..] input identities. Replies beginScript's status followed by
// leased (1 or 0), the first sequence number (-1 for none) and, per input
// identity, 1 when the session judged it, 0 when not, -1 when the step
// did not look (no lease, or Starting); or {codeForeign}. The lease is taken unless the session ended, is
// blocked or belongs to another agent than ARGV[9]; the number only on an
// admitted session (not claimed now, not Starting). Code 2 takes none,
// so an indexing error after it leaves no hole (a session still marked
// unindexed is Starting anyway: Admit and Block clear the mark).
var beginCallScript = newScript(sessionPrelude + `
local f = state()
local code = 0
if not f[1] then
  redis.call('HSET', KEYS[1], 'started', '1', 'starting', '1', 'seq', 1,
    'owner', ARGV[3], 'agent', ARGV[4], 'tenant', ARGV[5], 'id', ARGV[6],
    'unindexed', '1')
  f = state()
  code = 1
elseif f[6] ~= ARGV[3] then
  return {-2}
elseif not f[4] and redis.call('HEXISTS', KEYS[1], 'unindexed') == 1 then
  code = 2
end
local r = reply(code, f)
r[8], r[9] = 0, -1
for i = 10, #ARGV do r[i] = -1 end
if f[4] then return r end
redis.call('HSET', KEYS[1], 'deadline', now + idle)
if f[3] or (ARGV[9] ~= '' and f[7] ~= ARGV[9]) then
  stretch(idle + retain)
  return r
end
local lease = tonumber(ARGV[8])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZADD', KEYS[2], now + lease, ARGV[7])
stretch(math.max(idle, lease) + retain)
r[8] = 1
if code == 1 then
  for i = 10, #ARGV do r[i] = 0 end
elseif not f[2] then
  for i = 10, #ARGV do r[i] = redis.call('SISMEMBER', KEYS[4], ARGV[i]) end
end
if code == 0 and not f[2] then r[9] = redis.call('HINCRBY', KEYS[1], 'seq', 1) - 1 end
return r
`)

// admitScript: ends the Starting state. Replies 1 or codeUnknown. Only the
// claimer admits, after its Begin put the session into the idle index, so
// it also clears the 'unindexed' mark (saving a round trip at creation).
var admitScript = newScript(sessionPrelude + `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
redis.call('HDEL', KEYS[1], 'starting', 'unindexed')
return 1
`)

// blockScript: marks the session blocked, ending the Starting state, and,
// like admitScript, clears the 'unindexed' mark. Replies 1 or codeUnknown.
var blockScript = newScript(sessionPrelude + `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
redis.call('HSET', KEYS[1], 'blocked', '1')
redis.call('HDEL', KEYS[1], 'starting', 'unindexed')
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

// acquireScript: ARGV[3] call id, ARGV[4] lease ms. Replies 1, codeUnknown
// or codeEnded. Expired leases are pruned on the way; the session's keys
// live at least until the lease ends plus the retention.
var acquireScript = newScript(sessionPrelude + `
local f = redis.call('HMGET', KEYS[1], 'started', 'ended')
if not f[1] then return -1 end
if f[2] then return -4 end
local lease = tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZADD', KEYS[2], now + lease, ARGV[3])
touch()
stretch(lease + retain)
return 1
`)

// releaseScript: ARGV[3] call id. Replies 1. A live session's idle time
// starts again now.
var releaseScript = newScript(sessionPrelude + `
redis.call('ZREM', KEYS[2], ARGV[3])
local f = redis.call('HMGET', KEYS[1], 'started', 'ended')
if f[1] and not f[2] then touch() end
return 1
`)

// inFlightScript replies the number of unexpired leases.
var inFlightScript = newScript(sessionPrelude + `
return redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf')
`)

// endScript: ARGV[3] owner key id. Replies a status with code 1 for the
// one caller that ended the session, 0 if it had ended, or {codeUnknown}
// or {codeForeign}. Its keys are kept for the retention; the caller takes
// it out of the idle index.
var endScript = newScript(sessionPrelude + `
local f = state()
if not f[1] then return {-1} end
if f[6] ~= ARGV[3] then return {-2} end
if f[4] then return reply(0, f) end
redis.call('HSET', KEYS[1], 'ended', '1')
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

// openToolScript: ARGV[3] tool-call id, ARGV[4] the open-call limit.
// Replies 1, codeUnknown, codeSealed or codeTooManyTools. The set takes
// the state hash's TTL, so it expires with the session.
var openToolScript = newScript(sessionPrelude + `
local f = redis.call('HMGET', KEYS[1], 'started', 'sealed')
if not f[1] then return -1 end
if f[2] then return -3 end
if redis.call('SISMEMBER', KEYS[3], ARGV[3]) == 1 then return 1 end
if redis.call('SCARD', KEYS[3]) >= tonumber(ARGV[4]) then return -6 end
redis.call('SADD', KEYS[3], ARGV[3])
stretch(0)
return 1
`)

// inputsJudgedScript: ARGV[3..] input identities. Replies, per identity,
// 1 when the session recorded it, else 0; or {codeUnknown}.
var inputsJudgedScript = newScript(sessionPrelude + `
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1} end
local out = {}
for i = 3, #ARGV do out[#out + 1] = redis.call('SISMEMBER', KEYS[4], ARGV[i]) end
return out
`)

// nextMarkingScript records input identities judged, then is nextScript:
// ARGV[3] the most identities a session records, ARGV[4..] input
// identities. Replies the sequence number, codeUnknown or codeSealed.
var nextMarkingScript = newScript(sessionPrelude + `
local f = redis.call('HMGET', KEYS[1], 'started', 'sealed', 'ended')
if not f[1] then return -1 end
if f[2] then return -3 end
local n = redis.call('SCARD', KEYS[4])
for i = 4, #ARGV do
  if n >= tonumber(ARGV[3]) then break end
  n = n + redis.call('SADD', KEYS[4], ARGV[i])
end
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
if not f[3] then touch() else stretch(0) end
return seq - 1
`)

// closeToolScript: ARGV[3] tool-call id. Replies 1 to the one caller that
// closed an open call, 0 when there was none, or codeUnknown.
var closeToolScript = newScript(sessionPrelude + `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
return redis.call('SREM', KEYS[3], ARGV[3])
`)

// idleDueScript: KEYS[1] an idle-index shard; ARGV[1] max. Replies up to
// max members whose score is at or before the server's clock, oldest
// first, each followed by its score. Read-only.
var idleDueScript = newScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[1]))
`)

// unindexScript: KEYS[1] an idle-index shard; ARGV[1] member, ARGV[2] the
// score the sweep saw. Removes the entry only if its score is unchanged:
// a Begin that re-created a forgotten session in the meantime re-added it
// with a new score, and that entry must stay. Replies 1 if removed.
var unindexScript = newScript(`
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if s and tonumber(s) == tonumber(ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
`)

// claimScript decides, on one session's own keys (one slot), whether the
// sweep ends it: KEYS[1..3] as for the session scripts; ARGV[1] retention
// ms, ARGV[2] idle ms. Replies:
//
//	{0}                                         gone or already ended: drop
//	                                            the index entry
//	{2, at}                                     not due: reschedule the entry
//	                                            at at (ms)
//	{1, tenant, id, owner, agent, blocked 0/1}  this call ended it
//
// A session not due is rescheduled at its idle deadline if that is in the
// future, else (it is leased) one idle timeout from now: a release may come
// any time before the lease ends and pushes the deadline to the release
// plus the idle timeout, so polling once per idle timeout keeps the entry
// at or before the true deadline.
//
// Only this script and endScript set 'ended', each only when it is unset,
// and Redis runs scripts one at a time, so exactly one caller sees 1 for a
// session however many replicas sweep.
var claimScript = newScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local f = redis.call('HMGET', KEYS[1], 'started', 'ended', 'tenant', 'id', 'owner', 'agent', 'blocked', 'deadline')
if not f[1] or f[2] then return {0} end
redis.call('HDEL', KEYS[1], 'unindexed')
local at = tonumber(f[8] or '0')
if at > now then return {2, at} end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[2]) > 0 then return {2, now + tonumber(ARGV[2])} end
redis.call('HSET', KEYS[1], 'ended', '1')
for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ARGV[1]) end
return {1, f[3], f[4], f[5], f[6], f[7] and 1 or 0}
`)
