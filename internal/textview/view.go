// Package textview presents a string as a reader sees it — Unicode NFKC
// with default-ignorable code points removed — and maps positions in that
// view back to the original bytes, so that a pattern matched on the view
// can be redacted in the original.
package textview

import (
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/hooks-gateway/hooks-gateway/internal/swar"
)

// View is a string as a reader sees it. Text is what matchers run on;
// Original maps a range of Text back to the original string.
type View struct {
	// Text is the original normalized to NFKC with every
	// Default_Ignorable_Code_Point removed.
	Text string
	// same is set when Text is the original byte for byte.
	same bool
	// segs cover Text in order (the first starts at 0); original bytes
	// between them are ignorable code points that contribute nothing.
	segs []segment
}

// segment is one stretch of Text and the original bytes it came from.
// An identity segment is byte-identical to its original and maps byte by
// byte; any other is one normalization segment (a starter and what
// combines with it, a ligature, a fullwidth letter) that maps only whole.
type segment struct {
	n        int // start in Text; it ends where the next one starts
	o, oEnd  int // original range
	identity bool
}

// Of returns the view of s. ASCII text, and text already in NFKC with no
// ignorable code points, is its own view: Of then allocates nothing.
func Of(s string) View {
	i := swar.IndexHighString(s, 0)
	if i == len(s) {
		return View{Text: s, same: true}
	}
	ign := indexIgnorable(s, i)
	if ign >= 0 {
		return build(s, ign, 0)
	}
	// The last ASCII byte is a starter that combining marks after it may
	// compose with, so the check starts there. QuickSpan starts afresh
	// after every ASCII byte, so the span from there is, offset by from,
	// the span from 0, which build would compute first.
	from := max(i-1, 0)
	span := from + norm.NFKC.QuickSpanString(s[from:])
	if span == len(s) {
		return View{Text: s, same: true}
	}
	return build(s, -1, span)
}

// Same reports whether Text is the original byte for byte, so that
// positions need no mapping.
func (v *View) Same() bool { return v.same }

// Original returns the smallest range of the original string whose bytes
// produced Text[start:end]: every original code point that contributed to
// that text lies inside it, and ignorable code points around it do not.
// An empty range maps to an empty range. It panics unless
// 0 <= start <= end <= len(Text).
func (v *View) Original(start, end int) (int, int) {
	if start < 0 || start > end || end > len(v.Text) {
		panic("textview: range out of bounds")
	}
	if v.same {
		return start, end
	}
	if start == end {
		p := v.pos(start)
		return p, p
	}
	first := v.seg(start)
	o := first.o
	if first.identity {
		o += start - first.n
	}
	last := v.seg(end - 1)
	oEnd := last.oEnd
	if last.identity {
		oEnd = last.o + end - last.n
	}
	return o, oEnd
}

// pos maps an empty range at p: the original position of the byte at p,
// or the end of the last segment when p is the end of Text.
func (v *View) pos(p int) int {
	if len(v.segs) == 0 {
		return 0
	}
	if p == len(v.Text) {
		return v.segs[len(v.segs)-1].oEnd
	}
	s := v.seg(p)
	if s.identity {
		return s.o + p - s.n
	}
	return s.o
}

// seg returns the segment holding Text[p], p < len(Text).
func (v *View) seg(p int) *segment {
	i := sort.Search(len(v.segs), func(i int) bool { return v.segs[i].n > p }) - 1
	return &v.segs[i]
}

// indexIgnorable returns the index of the first ignorable code point of
// s at or after i, or -1. ASCII holds none: it is skipped eight bytes at a
// time, and only the other code points are decoded (an invalid byte
// decodes as U+FFFD, which is not ignorable).
func indexIgnorable(s string, i int) int {
	for {
		if i = swar.IndexHighString(s, i); i == len(s) {
			return -1
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if isIgnorable(r) {
			return i
		}
		i += size
	}
}

// chunk is a run of bytes kept when ignorables are stripped: stripped
// text from s on is the original from o on, up to the next chunk.
type chunk struct{ s, o int }

// strip removes the ignorable code points of s, the first of which is at
// first, returning the rest and where each kept run lies in s. With
// first < 0 (none) s comes back as it is, with no chunks: the stripped
// text is then the original byte for byte.
func strip(s string, first int) (string, []chunk) {
	if first < 0 {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	var chunks []chunk
	kept := 0 // start in s of the run before the ignorable at i
	for i := first; i >= 0; i = indexIgnorable(s, kept) {
		if i > kept {
			// Earlier runs are written, so b.Len() is where this one
			// starts in the stripped text.
			chunks = append(chunks, chunk{s: b.Len(), o: kept})
			b.WriteString(s[kept:i])
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		kept = i + size
	}
	if kept < len(s) {
		chunks = append(chunks, chunk{s: b.Len(), o: kept})
		b.WriteString(s[kept:])
	}
	return b.String(), chunks
}

// build computes the view of s and its segments; first is the index of
// s's first ignorable code point, -1 when it has none, and span, when
// first is -1, what QuickSpan returns for s. Stretches already in NFKC
// (QuickSpan ends each at a segment boundary) are copied whole; the
// iterator normalizes only the segments in between, one at a time.
func build(s string, first, span int) View {
	stripped, chunks := strip(s, first)
	b := builder{stripped: stripped, chunks: chunks}
	b.text.Grow(len(stripped) + len(stripped)/8)
	if first >= 0 {
		span = norm.NFKC.QuickSpanString(stripped)
	}
	var it norm.Iter
	for p := 0; p < len(stripped); {
		q := span
		if p > 0 {
			q = p + norm.NFKC.QuickSpanString(stripped[p:])
		}
		if q > p {
			b.text.WriteString(stripped[p:q])
			b.identity(p, q)
			p = q
			continue
		}
		it.InitString(norm.NFKC, stripped[p:])
		out := it.Next()
		if it.Pos() == 0 {
			// One code point decomposing into several segments (U+FDFA)
			// yields them before the iterator moves past it: they all map
			// to that code point.
			out = append([]byte(nil), out...)
			for it.Pos() == 0 {
				out = append(out, it.Next()...)
			}
		}
		b.add(p, p+it.Pos(), out)
		p += it.Pos()
	}
	return View{Text: b.text.String(), segs: b.segs}
}

// builder accumulates the view of a stripped string.
type builder struct {
	stripped string
	chunks   []chunk
	ci       int // chunk cursor: segments arrive in order
	text     strings.Builder
	segs     []segment
}

// add appends the normalization of stripped[a:b], out, to the view.
func (b *builder) add(a, c int, out []byte) {
	n := b.text.Len()
	for len(out) > 0 {
		// Normalization may produce an ignorable (the grapheme joiner
		// it inserts into overlong runs of combining marks): drop it.
		r, size := utf8.DecodeRune(out)
		if !isIgnorable(r) {
			b.text.Write(out[:size])
		}
		out = out[size:]
	}
	if b.text.Len() == n {
		return
	}
	if b.text.String()[n:] != b.stripped[a:c] {
		b.segs = append(b.segs, segment{n: n, o: b.orig(a), oEnd: b.orig(c-1) + 1})
		return
	}
	b.identity(a, c)
}

// identity records that stripped[a:c], already appended to the text,
// is unchanged by normalization: it maps byte by byte, one identity
// segment per kept run it spans, merged with the previous one when they
// are contiguous on both sides.
func (b *builder) identity(a, c int) {
	n := b.text.Len() - (c - a)
	for a < c {
		o := b.orig(a)
		end := c
		if b.ci+1 < len(b.chunks) {
			end = min(end, b.chunks[b.ci+1].s)
		}
		if l := len(b.segs) - 1; l >= 0 && b.segs[l].identity && b.segs[l].oEnd == o {
			b.segs[l].oEnd += end - a
		} else {
			b.segs = append(b.segs, segment{n: n, o: o, oEnd: o + end - a, identity: true})
		}
		n += end - a
		a = end
	}
}

// orig returns the original offset of stripped byte p, moving the chunk
// cursor to the chunk holding p. Without chunks nothing was stripped.
func (b *builder) orig(p int) int {
	if len(b.chunks) == 0 {
		return p
	}
	for b.ci+1 < len(b.chunks) && b.chunks[b.ci+1].s <= p {
		b.ci++
	}
	k := b.chunks[b.ci]
	return k.o + p - k.s
}
