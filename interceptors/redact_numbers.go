package interceptors

import "strings"

// Validators and candidate finders of the number detectors: phone,
// iban, credit_card.

// The longest text each number expression can match, spaces included.
const (
	phoneWindow = 48 // +CC and six groups of up to 7 characters
	ibanWindow  = 64 // 34 characters and a space before each but the first
	cardWindow  = 24 // 19 digits in groups
)

// numberEdge reports whether a number starting at start and ending at end
// stands alone: no letter, digit or underscore next to it, and no "-", "."
// or "/" joining it to more digits (a longer serial, a decimal, a date).
func numberEdge(s string, start, end int) bool {
	return numberStart(s, start) && numberEnd(s, end)
}

// numberStart is numberEdge's left half.
func numberStart(s string, start int) bool {
	if start == 0 {
		return true
	}
	c := s[start-1]
	if isWordByte(c) {
		return false
	}
	return strings.IndexByte("-./", c) < 0 || start < 2 || !isDigit(s[start-2])
}

// numberEnd is numberEdge's right half.
func numberEnd(s string, end int) bool {
	if end >= len(s) {
		return true
	}
	c := s[end]
	if isWordByte(c) {
		return false
	}
	return strings.IndexByte("-./", c) < 0 || end+1 >= len(s) || !isDigit(s[end+1])
}

// phoneStart: a phone number begins with +, ( or a digit, standing alone.
func phoneStart(s string, i int) bool {
	switch c := s[i]; {
	case c == '+' || c == '(':
		return (i == 0 || !isWordByte(s[i-1])) && digitsAhead(s, i, 8, phoneWindow)
	case isDigit(c):
		return groupStart(s, i) && digitsAhead(s, i, 8, phoneWindow)
	}
	return false
}

// cardStart: a card number begins with a digit, standing alone, and has
// 13 digits at least.
func cardStart(s string, i int) bool {
	return isDigit(s[i]) && groupStart(s, i) && digitsAhead(s, i, 13, cardWindow)
}

// digitsAhead reports whether the run of digits, spaces and the
// punctuation of phone and card numbers from i holds at least want digits
// within limit bytes: a cheap test that spares the expression most numbers
// in prose. The limit keeps a long run of punctuation from being rescanned
// from each of its positions.
func digitsAhead(s string, i, want, limit int) bool {
	n := 0
	for end := min(len(s), i+limit); i < end && n < want; i++ {
		switch c := s[i]; {
		case isDigit(c):
			n++
		case c != ' ' && c != '-' && c != '.' && c != '(' && c != ')' && c != '+':
			return false
		}
	}
	return n >= want
}

// groupStart is numberStart for numbers printed in groups: the digit at i
// must not continue a group before it either ("1234 5678"), or a rejected
// long number would be searched again from each of its groups.
func groupStart(s string, i int) bool {
	return numberStart(s, i) && (i < 2 || s[i-1] != ' ' || !isDigit(s[i-2]))
}

// ibanStart: two capitals and two digits, not glued to a word.
func ibanStart(s string, i int) bool {
	return i+4 <= len(s) && isUpper(s[i]) && isUpper(s[i+1]) && isDigit(s[i+2]) && isDigit(s[i+3]) &&
		(i == 0 || !isWordByte(s[i-1]))
}

// digitsOf returns the ASCII digits of s.
func digitsOf(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := range len(s) {
		if isDigit(s[i]) {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// acceptPhone bounds the digit count (E.164 allows at most 15; fewer than
// 8 are extensions, years or counts) and wants the number to stand alone.
// A national number (leading 0) needs 10 or 11 digits, which keeps dates
// such as 01-02-2024 out.
func acceptPhone(s string, start, end int) int {
	n := len(digitsOf(s[start:end]))
	switch {
	case n < 8 || n > 15:
		return 0
	case s[start] == '0' && (n < 10 || n > 11):
		return 0
	case !numberEdge(s, start, end):
		return 0
	}
	return end - start
}

// acceptCard tries the candidate and, when it is printed in groups, its
// prefixes of whole groups (a card may be followed by a year or a CVV in
// the same run): the longest that is a known issuer's length and passes
// the Luhn check wins.
func acceptCard(s string, start, end int) int {
	for e := end; e > start; {
		d := digitsOf(s[start:e])
		if len(d) < 13 {
			return 0
		}
		if len(d) <= 19 && knownIssuer(d) && luhn(d) && numberEdge(s, start, e) {
			return e - start
		}
		sep := strings.LastIndexAny(s[start:e], " -")
		if sep < 0 {
			return 0
		}
		e = start + sep
	}
	return 0
}

// luhn reports whether the digit string passes the Luhn (mod 10) check.
func luhn(d string) bool {
	sum := 0
	double := false
	for i := len(d) - 1; i >= 0; i-- {
		n := int(d[i] - '0')
		if double {
			n *= 2
			if n > 9 {
				n -= 9
			}
		}
		sum += n
		double = !double
	}
	return sum%10 == 0
}

// knownIssuer reports whether d starts with the prefix of a major card
// network and has one of that network's lengths.
func knownIssuer(d string) bool {
	n := len(d)
	p2, p3, p4 := prefixNum(d, 2), prefixNum(d, 3), prefixNum(d, 4)
	switch {
	case d[0] == '4': // Visa
		return n == 13 || n == 16 || n == 19
	case p2 >= 51 && p2 <= 55, p4 >= 2221 && p4 <= 2720: // Mastercard
		return n == 16
	case p2 == 34 || p2 == 37: // American Express
		return n == 15
	case p4 == 6011, p3 >= 644 && p3 <= 649, p2 == 65, // Discover
		p4 >= 3528 && p4 <= 3589, // JCB
		p2 == 62:                 // UnionPay
		return n >= 16 && n <= 19
	case p3 >= 300 && p3 <= 305, p2 == 36, p2 == 38, p2 == 39: // Diners Club
		return n >= 14 && n <= 19
	}
	return false
}

// prefixNum is the number formed by the first k digits of d.
func prefixNum(d string, k int) int {
	v := 0
	for i := range min(k, len(d)) {
		v = v*10 + int(d[i]-'0')
	}
	return v
}

// ibanLengths lists the IBAN length of every country in the IBAN registry.
const ibanLengths = "AD24 AE23 AL28 AT20 AZ28 BA20 BE16 BG22 BH22 BI27 BR29 BY28 CH21 CR22 CY28 CZ24 " +
	"DE22 DJ27 DK18 DO28 EE20 EG29 ES24 FI18 FK18 FO18 FR27 GB22 GE22 GI23 GL18 GR27 GT28 HN28 " +
	"HR21 HU28 IE22 IL23 IQ23 IS26 IT27 JO30 KW30 KZ20 LB28 LC32 LI21 LT20 LU20 LV21 LY25 MC27 " +
	"MD24 ME22 MK19 MN20 MR27 MT31 MU30 NI28 NL18 NO15 OM23 PK24 PL28 PS29 PT25 QA29 RO24 RS22 " +
	"RU33 SA24 SC31 SD18 SE24 SI19 SK24 SM27 SO23 ST25 SV28 TL23 TN24 TR26 UA29 VA22 VG24 XK20 YE30"

// ibanLength returns the IBAN length of country, 0 when it has none.
func ibanLength(country string) int {
	i := strings.Index(ibanLengths, country)
	if i < 0 || i%5 != 0 {
		return 0
	}
	return int(ibanLengths[i+2]-'0')*10 + int(ibanLengths[i+3]-'0')
}

// acceptIBAN takes as many characters as the country's IBAN length (the
// expression may have run on into following words), then checks the
// ISO 13616 mod-97 check digits.
func acceptIBAN(s string, start, end int) int {
	want := ibanLength(s[start : start+2])
	if want == 0 {
		return 0
	}
	compact := make([]byte, 0, want)
	e := start
	for ; e < end && len(compact) < want; e++ {
		if s[e] != ' ' {
			compact = append(compact, s[e])
		}
	}
	if len(compact) < want || (e < len(s) && isWordByte(s[e])) {
		return 0
	}
	if !mod97(compact) {
		return 0
	}
	return e - start
}

// mod97 moves the first four characters to the end, reads letters as
// 10..35 and checks that the number is 1 modulo 97.
func mod97(iban []byte) bool {
	rem := 0
	for i := range iban {
		c := iban[(i+4)%len(iban)]
		switch {
		case isDigit(c):
			rem = (rem*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			rem = (rem*100 + int(c-'A') + 10) % 97
		default:
			return false
		}
	}
	return rem == 1
}
