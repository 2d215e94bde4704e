package sessions

// IdleKeyOf exposes idleKeyOf to the external tests: the idle-index shard
// holding a session's tag.
func (r *Redis) IdleKeyOf(member string) string { return r.idleKeyOf(member) }
