package sessions

import (
	"hash/fnv"
	"strconv"
	"strings"
)

// tagEscaper percent-encodes the bytes that would end or confuse a Redis
// Cluster hash tag ('{', '}') and the escape byte itself, so the encoding
// is reversible and never contains a brace.
var tagEscaper = strings.NewReplacer("%", "%25", "{", "%7B", "}", "%7D")

// sessionTag is the text inside the hash tag of every key of session k,
// and k's member in the idle index: the escaped tenant's length, ':', the
// escaped tenant, then the escaped id. The length prefix makes the split
// between tenant and id unambiguous and the escaping is injective, so two
// different keys never share a tag; no brace appears in it, so Redis hashes
// exactly this text.
func sessionTag(k Key) string {
	t := tagEscaper.Replace(k.Tenant)
	return strconv.Itoa(len(t)) + ":" + t + tagEscaper.Replace(k.ID)
}

// sessionKeyBase is the key of session k's state hash given its tag; its
// other keys append a suffix after the closing brace, so they share the
// hash tag and the Redis Cluster slot. ClaimExpired rebuilds these names
// from idle-index members (sessionKeysOf).
func (r *Redis) sessionKeyBase(tag string) string {
	return r.prefix + "s:{" + tag + "}"
}

// Suffixes of a session's keys after its base (the state hash).
const (
	callsSuffix  = ":calls"  // sorted set: call id scored by its lease end (ms)
	toolsSuffix  = ":tools"  // set: open tool-call ids
	inputsSuffix = ":inputs" // set: identities of the inputs judged
)

// sessionKeys returns the keys a session script takes, in the order the
// scripts expect (KEYS[1..3]), and k's idle-index member.
func (r *Redis) sessionKeys(k Key) (keys []string, member string) {
	tag := sessionTag(k)
	return r.sessionKeysOf(tag), tag
}

// sessionKeysOf returns the keys a session script takes for the session
// whose tag (idle-index member) is tag.
func (r *Redis) sessionKeysOf(tag string) []string {
	base := r.sessionKeyBase(tag)
	return []string{base, base + callsSuffix, base + toolsSuffix, base + inputsSuffix}
}

// idleShards is the number of idle-index shards. Each shard is one sorted
// set with its own hash tag, so on Redis Cluster the index spreads over
// the masters and every command on it stays in one slot. Changing it moves
// members between shards: replicas sharing a prefix must agree on it, so
// it is a constant.
const idleShards = 16

// idleShardKey is the key of idle-index shard i.
func (r *Redis) idleShardKey(i int) string {
	return r.prefix + "{idle:" + strconv.Itoa(i) + "}"
}

// idleKeyOf is the idle-index shard holding member (a session's tag).
func (r *Redis) idleKeyOf(member string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(member))
	return r.idleShardKey(int(h.Sum32() % idleShards))
}
