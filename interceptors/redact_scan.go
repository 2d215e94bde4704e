package interceptors

import (
	"cmp"
	"slices"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/internal/textview"
)

// span is one accepted match: s[start:end], found by detector det.
type span struct{ start, end, det int }

// scanner runs the detectors over strings and rewrites what they find.
type scanner struct {
	detectors []detector
	replace   func(detector, match string) string
}

// tally counts matches per detector index.
type tally []int

// find returns the matches in s that survive overlap resolution, in order:
// among overlapping matches the leftmost wins, then the longest, then the
// detector that runs first.
func (sc *scanner) find(s string) []span {
	var found []span
	digits := -1
	// A short string (an object key, a name, a schema's description) costs
	// little to scan but a search per hint: one pass over its bytes rules
	// most hints out first.
	var present *byteSet
	if len(s) <= shortString {
		present = byteSetOf(s)
	}
	for i := range sc.detectors {
		d := &sc.detectors[i]
		if len(d.hints) > 0 && !containsAnyHint(s, d.hints, present) {
			continue
		}
		if d.minDigits > 0 {
			if digits < 0 {
				digits = countDigits(s)
			}
			if digits < d.minDigits {
				continue
			}
		}
		found = d.appendMatches(found, s, i)
	}
	if len(found) == 0 {
		return nil
	}
	slices.SortFunc(found, func(a, b span) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(b.end, a.end), cmp.Compare(a.det, b.det))
	})
	kept := found[:0]
	end := 0
	for _, m := range found {
		if m.start >= end {
			kept = append(kept, m)
			end = m.end
		}
	}
	return kept
}

// appendMatches appends d's accepted matches in s, labelled det.
func (d *detector) appendMatches(out []span, s string, det int) []span {
	if d.accept == nil {
		// The expression alone decides (custom detectors, private_key),
		// with the whole string as context for its anchors.
		for _, loc := range d.re.FindAllStringIndex(s, -1) {
			if loc[1] > loc[0] {
				out = append(out, span{loc[0], loc[1], det})
			}
		}
		return out
	}
	if d.next != nil {
		return d.appendAnchored(out, s, det)
	}
	for pos := 0; pos < len(s); {
		loc := d.re.FindStringIndex(s[pos:])
		if loc == nil {
			break
		}
		start, end := pos+loc[0], pos+loc[1]
		if end == start {
			pos = end + 1
			continue
		}
		// A rejected candidate is skipped whole, as FindAll would, which
		// keeps the scan linear; an accepted prefix resumes right after it
		// so that what the expression ran on into is searched again.
		if n := d.accept(s, start, end); n > 0 {
			out = append(out, span{start, start + n, det})
			pos = start + n
		} else {
			pos = end
		}
	}
	return out
}

// appendAnchored tries d's anchored expression wherever d.next says a
// match may start. After a rejection the next start is tried, so a
// candidate the expression ran too far on costs only its window.
func (d *detector) appendAnchored(out []span, s string, det int) []span {
	for i := d.next(s, 0); i >= 0; i = d.next(s, i) {
		loc := d.re.FindStringIndex(s[i:min(len(s), i+d.window)])
		if loc != nil && loc[1] > 0 {
			if n := d.accept(s, i, i+loc[1]); n > 0 {
				out = append(out, span{i, i + n, det})
				i += n
				continue
			}
		}
		i++
	}
	return out
}

// appendEdits appends an edit for every match in the view of s (see
// textview), over the original bytes it came from. A replacement that
// quotes the match (mask, hash) quotes it as the view has it, so a
// disguised secret hashes as the plain one does.
func (sc *scanner) appendEdits(dst []edit, s string) []edit {
	v := textview.Of(s)
	for _, m := range sc.find(v.Text) {
		o, e := v.Original(m.start, m.end)
		dst = append(dst, edit{start: o, end: e, det: m.det,
			repl: sc.replace(sc.detectors[m.det].name, v.Text[m.start:m.end])})
	}
	return dst
}

// anyMatch reports whether a detector finds something in the view of a
// string value or object key of v.
func (sc *scanner) anyMatch(v any) bool {
	return anyText(v, func(s string) bool { return len(sc.find(textview.Of(s).Text)) > 0 })
}

// shortString is the length up to which find checks hints against the
// string's byte set first.
const shortString = 256

// byteSet records which byte values occur in a string.
type byteSet [4]uint64

func byteSetOf(s string) *byteSet {
	var bs byteSet
	for i := range len(s) {
		c := s[i]
		bs[c>>6] |= 1 << (c & 63)
	}
	return &bs
}

// mayContain reports whether every byte of sub occurs in the set, which
// strings.Contains needs.
func (bs *byteSet) mayContain(sub string) bool {
	for i := range len(sub) {
		c := sub[i]
		if bs[c>>6]&(1<<(c&63)) == 0 {
			return false
		}
	}
	return true
}

// containsAnyHint is containsAny, ruling hints out by present (when not
// nil) before searching for them.
func containsAnyHint(s string, hints []string, present *byteSet) bool {
	for _, h := range hints {
		if (present == nil || present.mayContain(h)) && strings.Contains(s, h) {
			return true
		}
	}
	return false
}

func countDigits(s string) int {
	n := 0
	for i := range len(s) {
		if isDigit(s[i]) {
			n++
		}
	}
	return n
}
