package grantcheck

import (
	"cmp"
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Arguments keep their numbers as literal text (json.Number), and that
// text is what the downstream server receives: a bound checked on the
// float64 nearest to it would let 9007199254740993 pass `maximum:
// 9007199254740992` (both round to 2^53) and then reach the server whole.
// So constraints compare numbers exactly: the literal's decimal value
// against the exact value of the bound's float64.

// compareNumber compares the number v with the bound b exactly: -1, 0
// or +1; ok is false when v is not a number. strconv.ParseFloat is not
// trusted here: it is not correctly rounded for literals with many
// leading zeros ("0.000…05e100001" reads as 0, not 5), so a bound checked
// on its result could be passed by a literal a correct reader takes for
// far more.
func compareNumber(v any, b decimal) (c int, ok bool) {
	d, ok := toDecimal(v)
	if !ok {
		return 0, false
	}
	return d.cmp(b), true
}

// below and above compare a number with a bound (false for a non-number,
// which the caller refuses first).
func below(v any, b decimal) bool { c, ok := compareNumber(v, b); return ok && c < 0 }
func above(v any, b decimal) bool { c, ok := compareNumber(v, b); return ok && c > 0 }

// numbersEqual reports whether two numbers are equal as exact values.
func numbersEqual(a, b any) bool {
	da, ok1 := toDecimal(a)
	db, ok2 := toDecimal(b)
	return ok1 && ok2 && da.cmp(db) == 0
}

// toDecimal is the exact value of a JSON number: a literal (json.Number),
// or a number built in Go.
func toDecimal(v any) (decimal, bool) {
	switch x := v.(type) {
	case json.Number:
		return parseDecimal(string(x))
	case int:
		return parseDecimal(strconv.Itoa(x))
	case int64:
		return parseDecimal(strconv.FormatInt(x, 10))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return decimal{}, false
		}
		return exactDecimal(x), true
	}
	return decimal{}, false
}

// decimal is a finite decimal number 0.digits × 10^exp, digits without
// leading or trailing zeros ("" for zero).
type decimal struct {
	neg    bool
	digits string
	exp    int64
}

// expCap bounds exponents: beyond it every comparison is decided by the
// exponent's sign alone (a literal has at most a few million digits).
const expCap = 1e15

// parseDecimal reads a JSON number literal exactly.
func parseDecimal(s string) (decimal, bool) {
	var d decimal
	i := 0
	if i < len(s) && s[i] == '-' {
		d.neg = true
		i++
	}
	digitsFrom := func() string {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return s[start:i]
	}
	intPart := digitsFrom()
	if intPart == "" {
		return decimal{}, false
	}
	var frac string
	if i < len(s) && s[i] == '.' {
		i++
		if frac = digitsFrom(); frac == "" {
			return decimal{}, false
		}
	}
	var e int64
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		negExp := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			negExp = s[i] == '-'
			i++
		}
		ed := digitsFrom()
		if ed == "" {
			return decimal{}, false
		}
		for _, c := range []byte(ed) {
			if e < expCap {
				e = e*10 + int64(c-'0')
			}
		}
		if negExp {
			e = -e
		}
	}
	if i != len(s) {
		return decimal{}, false
	}
	all := intPart + frac
	exp := e - int64(len(frac)) + int64(len(all))
	trimmed := strings.TrimLeft(all, "0")
	exp -= int64(len(all) - len(trimmed))
	d.digits = strings.TrimRight(trimmed, "0")
	if d.digits == "" {
		return decimal{}, true // zero, whatever its sign
	}
	d.exp = exp
	return d, true
}

// exactDecimal is the exact decimal value of a finite float64 (at most
// 767 significant digits).
func exactDecimal(f float64) decimal {
	if f == 0 {
		return decimal{}
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<63 {
		d, _ := parseDecimal(strconv.FormatInt(int64(f), 10))
		return d
	}
	d, _ := parseDecimal(strings.Replace(new(big.Float).SetFloat64(f).Text('e', 800), "e+", "e", 1))
	return d
}

func (d decimal) sign() int {
	switch {
	case d.digits == "":
		return 0
	case d.neg:
		return -1
	}
	return 1
}

// cmp compares two decimals: -1, 0 or +1.
func (d decimal) cmp(o decimal) int {
	if s, t := d.sign(), o.sign(); s != t || s == 0 {
		return cmp.Compare(s, t)
	}
	m := cmp.Compare(d.exp, o.exp)
	if m == 0 {
		m = strings.Compare(d.digits, o.digits)
	}
	if d.neg {
		return -m
	}
	return m
}
