package interceptors

import (
	"errors"
	"iter"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode"
)

// foundURL is one URL found in a string.
type foundURL struct {
	start, end int    // byte range of the URL in the string
	scheme     string // lower-cased
	// hosts holds the URL's host under every reading parsers disagree on
	// (a backslash ends the authority for browsers but not for RFC 3986
	// parsers); a URL is allowed only when all of them are.
	hosts []host
}

// host is a normalised URL host.
type host struct {
	name  string // lower case, no trailing dot, IPs in canonical form
	ip    bool
	valid bool
}

// specialSchemes are those for which WHATWG URL parsers accept any run of
// slashes and backslashes after the colon ("https:\\evil.com").
var specialSchemes = map[string]bool{"http": true, "https": true, "ws": true, "wss": true, "ftp": true}

// findURLs yields the URLs in s, in order of their start: a scheme, a colon and "//" (for the
// special schemes, any run of slashes and backslashes). Hosts without a
// scheme ("example.com/x") are not URLs here. A URL nested in another
// ("https://a.example/?next=https://b.example") is found too.
//
// The work is linear in len(s) times maxAuthority whatever the text: the
// ends of URLs and authorities are searched once per string, not once per
// URL, as a model can emit "http:\http:\…" to make nested URLs share them.
func findURLs(s string) iter.Seq[foundURL] {
	return func(yield func(foundURL) bool) {
		sc := urlScanner{
			s:    s,
			term: runeFinder{match: isURLTerminator},
			rfc:  runeFinder{match: func(r rune) bool { return r == '/' || r == '?' || r == '#' }},
			web:  runeFinder{match: func(r rune) bool { return r == '/' || r == '?' || r == '#' || r == '\\' }},
		}
		for i := strings.IndexByte(s, ':'); i >= 0; {
			if u, ok := sc.urlAt(i); ok && !yield(u) {
				return
			}
			next := strings.IndexByte(s[i+1:], ':')
			if next < 0 {
				return
			}
			i += 1 + next
		}
	}
}

// maxAuthority bounds the userinfo, host and port of a URL; a longer one
// is not read and its host counts as invalid (forbidden).
const maxAuthority = 1024

// urlScanner finds URLs in one string.
type urlScanner struct {
	s              string
	term, rfc, web runeFinder
	// trimFloor is where the trailing punctuation before the terminator
	// trimFor starts (trimFor 0: none yet; no URL ends at 0).
	trimFor, trimFloor int
}

// runeFinder caches the next index at or after a position of a rune
// match accepts. Positions only grow, so a cached answer at or past the
// position is still right.
type runeFinder struct {
	match     func(rune) bool
	from, at  int
	populated bool
}

func (n *runeFinder) find(s string, p int) int {
	if n.populated && n.from <= p && p <= n.at {
		return n.at
	}
	n.from, n.populated = p, true
	if j := strings.IndexFunc(s[p:], n.match); j >= 0 {
		n.at = p + j
	} else {
		n.at = len(s)
	}
	return n.at
}

// isURLTerminator reports the runes a URL in free text cannot contain.
func isURLTerminator(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune("\"<>`", r)
}

// isTrailingPunct is the punctuation that usually closes a sentence or a
// parenthesis rather than a URL.
func isTrailingPunct(c byte) bool { return strings.IndexByte(".,;:!?')]}", c) >= 0 }

// urlAt reads the URL whose scheme ends at the colon s[colon].
func (sc *urlScanner) urlAt(colon int) (foundURL, bool) {
	s := sc.s
	start := colon
	for start > 0 && isSchemeByte(s[start-1]) {
		start--
	}
	for start < colon && !isASCIILetter(s[start]) {
		start++
	}
	if start == colon {
		return foundURL{}, false
	}
	scheme := strings.ToLower(s[start:colon])
	auth := colon + 1
	if specialSchemes[scheme] {
		for auth < len(s) && (s[auth] == '/' || s[auth] == '\\') {
			auth++
		}
		if auth == colon+1 {
			return foundURL{}, false
		}
	} else {
		if !strings.HasPrefix(s[auth:], "//") {
			return foundURL{}, false
		}
		auth += 2
	}
	end := sc.end(auth)
	u := foundURL{start: start, end: end, scheme: scheme}
	rfc := min(sc.rfc.find(s, auth), end)
	u.hosts = append(u.hosts, authorityHost(s[auth:rfc]))
	if specialSchemes[scheme] {
		if web := min(sc.web.find(s, auth), end); web != rfc {
			u.hosts = append(u.hosts, authorityHost(s[auth:web]))
		}
	}
	return u, true
}

// end finds where a URL whose authority starts at auth ends: at the next
// terminator, less trailing punctuation.
func (sc *urlScanner) end(auth int) int {
	t := sc.term.find(sc.s, auth)
	if sc.trimFor != t {
		floor := t
		for floor > 0 && isTrailingPunct(sc.s[floor-1]) {
			floor--
		}
		sc.trimFor, sc.trimFloor = t, floor
	}
	return max(auth, sc.trimFloor)
}

// authorityHost parses the host of an authority of bounded length.
func authorityHost(authority string) host {
	if len(authority) > maxAuthority {
		return host{}
	}
	return parseHost(authority)
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isSchemeByte(c byte) bool {
	return isASCIILetter(c) || isASCIIDigit(c) || c == '+' || c == '-' || c == '.'
}

// parseHost extracts and normalises the host of an authority. Userinfo
// is whatever precedes the last "@", as every common parser has it, so
// https://allowed.example@evil.example names evil.example.
func parseHost(authority string) host {
	hostport := authority
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		hostport = authority[at+1:]
	}
	if strings.HasPrefix(hostport, "[") {
		end := strings.IndexByte(hostport, ']')
		if end < 0 || !isPort(hostport[end+1:]) {
			return host{}
		}
		return ipv6Host(hostport[1:end])
	}
	name := hostport
	if c := strings.IndexByte(hostport, ':'); c >= 0 {
		if !isPort(hostport[c:]) {
			return host{}
		}
		name = hostport[:c]
	}
	return normaliseHost(name)
}

// isPort accepts "", or ":" and digits.
func isPort(s string) bool {
	if s == "" {
		return true
	}
	if s[0] != ':' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isASCIIDigit(s[i]) {
			return false
		}
	}
	return true
}

// ipv6Host normalises a bracketed IPv6 literal (zone dropped; an
// IPv4-mapped address is its IPv4 form).
func ipv6Host(literal string) host {
	if z := strings.IndexByte(literal, '%'); z >= 0 {
		literal = literal[:z]
	}
	addr, err := netip.ParseAddr(literal)
	if err != nil || !addr.Is6() {
		return host{}
	}
	return host{name: addr.Unmap().String(), ip: true, valid: true}
}

// hostDots are the full stops IDNA maps to ".".
var hostDots = strings.NewReplacer("\u3002", ".", "\uff0e", ".", "\uff61", ".")

// forbiddenHostBytes cannot appear in a host after percent-decoding
// (WHATWG forbidden domain code points, ASCII part).
const forbiddenHostBytes = " \t\n\r#/:<>?@[\\]^|%"

// normaliseHost percent-decodes, lower-cases and drops trailing dots, and
// reads the numeric forms browsers accept for IPv4 (0x7f.1, 2130706433)
// as the dotted address they stand for. IDNA is not applied: a Unicode or
// punycode host is matched as given.
func normaliseHost(name string) host {
	decoded, err := url.PathUnescape(name)
	if err != nil {
		return host{}
	}
	name = strings.TrimRight(hostDots.Replace(strings.ToLower(decoded)), ".")
	if name == "" || strings.ContainsAny(name, forbiddenHostBytes) || strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return host{}
	}
	if v4, numeric, ok := parseIPv4(name); numeric {
		if !ok {
			return host{}
		}
		return host{name: v4.String(), ip: true, valid: true}
	}
	return host{name: name, valid: true}
}

// parseIPv4 applies the WHATWG IPv4 parser: a host whose last label is a
// number is an IPv4 address (numeric) or invalid (!ok).
func parseIPv4(name string) (addr netip.Addr, numeric, ok bool) {
	parts := strings.Split(name, ".")
	lastPart := parts[len(parts)-1]
	if _, isNum := ipv4Part(lastPart); !isNum && strings.TrimLeft(lastPart, "0123456789") != "" {
		return addr, false, false
	}
	if len(parts) > 4 {
		return addr, true, false
	}
	var v uint64
	for i, p := range parts {
		n, isNum := ipv4Part(p)
		if !isNum {
			return addr, true, false
		}
		last := i == len(parts)-1
		if !last && n > 255 || last && n >= 1<<(8*(5-len(parts))) {
			return addr, true, false
		}
		if !last {
			v |= n << (8 * (3 - i))
		} else {
			v |= n
		}
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true, true
}

// ipv4Part parses one label as decimal, 0x hex or 0-prefixed octal.
// Values beyond 32 bits report as 1<<32, which every caller refuses.
func ipv4Part(p string) (uint64, bool) {
	base := 10
	switch {
	case p == "":
		return 0, false
	case len(p) >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		p, base = p[2:], 16
		if p == "" {
			return 0, true
		}
	case len(p) >= 2 && p[0] == '0':
		p, base = p[1:], 8
	}
	n, err := strconv.ParseUint(p, base, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			return 1 << 32, true
		}
		return 0, false
	}
	return min(n, 1<<32), true
}
