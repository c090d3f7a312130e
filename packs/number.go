package packs

import (
	"errors"
	"strings"
)

// maxNumberDigits bounds the decimal text a JSON number may expand to in
// argv: 1e1000000000 is a valid JSON number, and writing it out would take a
// gigabyte.
const maxNumberDigits = 1024

// canonicalDecimal writes a JSON number literal as a plain decimal without
// an exponent and without trailing fraction zeros, exactly: the digits are
// moved, never converted through a float, so 9007199254740993 and
// 0.1000000000000000055511151231257827 reach argv as written. "3.0" is "3",
// "1.5e3" is "1500", "-0.0" is "0".
func canonicalDecimal(lit string) (string, error) {
	s := lit
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	mant, expPart, hasExp := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	if !allDigits(intPart) || intPart == "" || (len(intPart) > 1 && intPart[0] == '0') ||
		!allDigits(frac) || strings.Contains(lit, ".") && frac == "" {
		return "", errors.New("is not a JSON number")
	}
	exp := 0
	if hasExp {
		e := expPart
		eneg := false
		switch {
		case strings.HasPrefix(e, "+"):
			e = e[1:]
		case strings.HasPrefix(e, "-"):
			e, eneg = e[1:], true
		}
		if e == "" || !allDigits(e) {
			return "", errors.New("is not a JSON number")
		}
		e = strings.TrimLeft(e, "0")
		if len(e) > 9 {
			return "", errors.New("has an exponent too large to write out; pass the value as a string")
		}
		for _, c := range e {
			exp = exp*10 + int(c-'0')
		}
		if eneg {
			exp = -exp
		}
	}
	// value = digits × 10^(exp - len(frac))
	digits := strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		return "0", nil
	}
	point := len(intPart+frac) - len(frac) + exp // decimal point position in intPart+frac
	point -= len(intPart+frac) - len(digits)     // leading zeros were dropped
	if point > maxNumberDigits || len(digits)-point > maxNumberDigits || len(digits) > maxNumberDigits {
		return "", errors.New("has more digits than a command-line number should; pass the value as a string")
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	switch {
	case point <= 0:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -point))
		b.WriteString(strings.TrimRight(digits, "0"))
	case point >= len(digits):
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", point-len(digits)))
	default:
		b.WriteString(digits[:point])
		if f := strings.TrimRight(digits[point:], "0"); f != "" {
			b.WriteByte('.')
			b.WriteString(f)
		}
	}
	return b.String(), nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
