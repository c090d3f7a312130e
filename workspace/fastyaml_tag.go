package workspace

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// plainTag is the tag yaml.v3 resolves a plain scalar to (its resolve
// function, reduced to the tag): the decoder tells null, bool, int, float
// and merge keys apart by it. FuzzFastParse compares the two.
func plainTag(s string) string {
	switch s {
	case "<<":
		return "!!merge"
	case "", "~", "null", "Null", "NULL":
		return "!!null"
	case "true", "True", "TRUE", "false", "False", "FALSE":
		return "!!bool"
	case ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF":
		return "!!float"
	}
	switch c := s[0]; {
	case c == '.':
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return "!!float"
		}
	case c == '+' || c == '-' || '0' <= c && c <= '9':
		return numberTag(s)
	}
	return "!!str"
}

// yamlStyleFloat is yaml.v3's pattern for a float written without a base
// prefix.
var yamlStyleFloat = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

// numberTag resolves a plain scalar starting with a sign or a digit: a
// timestamp, an int (decimal, 0x, 0o, 0b, old-style octal, '_' between
// digits), a float, or else a string.
func numberTag(s string) string {
	if isTimestamp(s) {
		return "!!timestamp"
	}
	plain := strings.ReplaceAll(s, "_", "")
	if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return "!!int"
	}
	if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
		return "!!int"
	}
	if yamlStyleFloat.MatchString(plain) {
		if _, err := strconv.ParseFloat(plain, 64); err == nil {
			return "!!float"
		}
	}
	for _, prefix := range []struct {
		p    string
		base int
	}{{"0b", 2}, {"0o", 8}} {
		if rest, ok := strings.CutPrefix(plain, prefix.p); ok {
			if _, err := strconv.ParseInt(rest, prefix.base, 64); err == nil {
				return "!!int"
			}
			if _, err := strconv.ParseUint(rest, prefix.base, 64); err == nil {
				return "!!int"
			}
		} else if rest, ok := strings.CutPrefix(plain, "-"+prefix.p); ok {
			if _, err := strconv.ParseInt("-"+rest, prefix.base, 64); err == nil {
				return "!!int"
			}
		}
	}
	return "!!str"
}

// timestampFormats are the layouts yaml.v3 accepts as timestamps.
var timestampFormats = []string{
	"2006-1-2T15:4:5.999999999Z07:00",
	"2006-1-2t15:4:5.999999999Z07:00",
	"2006-1-2 15:4:5.999999999",
	"2006-1-2",
}

// isTimestamp reports whether yaml.v3 reads s as a timestamp.
func isTimestamp(s string) bool {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	if i != 4 || i == len(s) || s[i] != '-' {
		return false
	}
	for _, f := range timestampFormats {
		if _, err := time.Parse(f, s); err == nil {
			return true
		}
	}
	return false
}
