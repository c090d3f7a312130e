package strictjson

import (
	"cmp"
	"strings"
)

// The JSON number grammar (RFC 8259 §6) is written once, in scanNumber:
// the parser scans numbers with it, and ParseDecimal reads a literal's
// exact value with it, so what the gateway decides on (grantcheck's
// bounds) and what it executes (a pack's argv) are read by the same rules
// as the message itself.

// numberSyntax is where the parts of a JSON number lie in its text:
// -? int (. frac)? ([eE] [+-]? exp)?, each part as [start, end) indices
// (an absent fraction or exponent is empty).
type numberSyntax struct {
	neg                bool
	intStart, intEnd   int
	fracStart, fracEnd int
	expNeg             bool
	expStart, expEnd   int
}

// scanNumber reads the JSON number that starts at s[i]. It returns the
// number's parts and the index just past it, or the index where the
// grammar broke and what was wanted there.
func scanNumber[T string | []byte](s T, i int) (n numberSyntax, end int, problem string) {
	digits := func(i int) int {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i
	}
	if i < len(s) && s[i] == '-' {
		n.neg = true
		i++
	}
	n.intStart = i
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(i)
	default:
		return n, i, "invalid number"
	}
	n.intEnd, n.fracStart, n.fracEnd = i, i, i
	if i < len(s) && s[i] == '.' {
		i++
		n.fracStart = i
		if i = digits(i); i == n.fracStart {
			return n, i, "invalid number: digits must follow the decimal point"
		}
		n.fracEnd = i
	}
	n.expStart, n.expEnd = i, i
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			n.expNeg = s[i] == '-'
			i++
		}
		n.expStart = i
		if i = digits(i); i == n.expStart {
			return n, i, "invalid number: digits must follow the exponent"
		}
		n.expEnd = i
	}
	return n, i, ""
}

// Decimal is the exact value of a JSON number literal, which float64 may
// not hold (9007199254740993, 0.1): 0.Digits × 10^Exp, Digits without
// leading or trailing zeros ("" for zero, whatever the sign).
type Decimal struct {
	Neg    bool
	Digits string
	Exp    int64
}

// expCap bounds exponents: beyond it every comparison is decided by the
// exponent's sign alone (a literal has at most a few million digits).
const expCap = 1e15

// ParseDecimal reads lit, which must be exactly one JSON number, as its
// exact value; false when it is not a JSON number. It costs time linear in
// the literal whatever its exponent ("1e999999999999" is not expanded).
func ParseDecimal(lit string) (Decimal, bool) {
	n, end, problem := scanNumber(lit, 0)
	if problem != "" || end != len(lit) {
		return Decimal{}, false
	}
	var e int64
	for _, c := range []byte(lit[n.expStart:n.expEnd]) {
		if e < expCap {
			e = e*10 + int64(c-'0')
		}
	}
	if n.expNeg {
		e = -e
	}
	frac := lit[n.fracStart:n.fracEnd]
	all := lit[n.intStart:n.intEnd] + frac
	trimmed := strings.TrimLeft(all, "0")
	d := Decimal{Neg: n.neg, Digits: strings.TrimRight(trimmed, "0")}
	if d.Digits == "" {
		return Decimal{}, true // zero, whatever its sign
	}
	d.Exp = e + int64(len(all)-len(frac)) - int64(len(all)-len(trimmed))
	return d, true
}

// Sign is -1, 0 or +1.
func (d Decimal) Sign() int {
	switch {
	case d.Digits == "":
		return 0
	case d.Neg:
		return -1
	}
	return 1
}

// Cmp compares two decimals exactly: -1, 0 or +1.
func (d Decimal) Cmp(o Decimal) int {
	if s, t := d.Sign(), o.Sign(); s != t || s == 0 {
		return cmp.Compare(s, t)
	}
	m := cmp.Compare(d.Exp, o.Exp)
	if m == 0 {
		m = strings.Compare(d.Digits, o.Digits)
	}
	if d.Neg {
		return -m
	}
	return m
}

// Plain writes d as a plain decimal without an exponent and without
// trailing fraction zeros: the digits are moved, never converted through a
// float ("1.5e3" is "1500", "-0.0" is "0"). It reports false, writing
// nothing, when that text would hold more than maxDigits significant
// digits, or digits before or after the point: 1e1000000000 is a valid
// JSON number that would take a gigabyte to write out.
func (d Decimal) Plain(maxDigits int) (string, bool) {
	if d.Digits == "" {
		return "0", true
	}
	point, n, limit := d.Exp, int64(len(d.Digits)), int64(maxDigits)
	if point > limit || n-point > limit || n > limit {
		return "", false
	}
	var b strings.Builder
	if d.Neg {
		b.WriteByte('-')
	}
	switch {
	case point <= 0:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", int(-point)))
		b.WriteString(d.Digits)
	case point >= n:
		b.WriteString(d.Digits)
		b.WriteString(strings.Repeat("0", int(point-n)))
	default:
		b.WriteString(d.Digits[:point])
		b.WriteByte('.')
		b.WriteString(d.Digits[point:])
	}
	return b.String(), true
}
