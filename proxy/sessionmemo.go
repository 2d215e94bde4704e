package proxy

import (
	"net/http"

	"github.com/hooks-gateway/hooks-gateway/internal/sessioncache"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// sessionMemo is the cache of the managed session r names (by
// Agent-Hooks-Session, or its agent's native run header), within the
// client's tenant; nil for a request in a session of its own, or with
// the cache off. It is looked up before the body is parsed, so before the
// route decides whether a native id makes a managed session: a cache
// whose request turns out per-request is only used for its parse, which
// is the same with the cache or without it.
func (s *Server) sessionMemo(r *http.Request, p Principal) *sessioncache.Cache {
	if s.opts.SessionCache == nil {
		return nil
	}
	id := r.Header.Get(HeaderSession)
	if id == "" && s.opts.Store != nil && s.opts.NativeSessions {
		id = nativeSessionID(r.Header)
	}
	if id == "" {
		return nil
	}
	return s.opts.SessionCache.Cache(memoKey(sessions.Key{Tenant: p.Tenant, ID: id}))
}

// memoKey names session k's cache.
func memoKey(k sessions.Key) string { return k.Tenant + "\x00" + k.ID }

// dropMemo forgets the cache of session k, which ended.
func (s *Server) dropMemo(k sessions.Key) { s.opts.SessionCache.Drop(memoKey(k)) }

// memoOf is c as a wire.Memo: a nil interface for a nil cache, so that
// surfaces skip the memo entirely.
func memoOf(c *sessioncache.Cache) wire.Memo {
	if c == nil {
		return nil
	}
	return c
}
