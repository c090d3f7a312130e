package strictjson

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"
)

// TestParseDecimal: a literal reads as its exact digits and exponent, by
// the JSON grammar and nothing looser.
func TestParseDecimal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		lit  string
		want Decimal
		ok   bool
	}{
		{"0", Decimal{}, true},
		{"-0.000e5", Decimal{}, true},
		{"9007199254740993", Decimal{Digits: "9007199254740993", Exp: 16}, true},
		{"-12.50", Decimal{Neg: true, Digits: "125", Exp: 2}, true},
		{"0.0012", Decimal{Digits: "12", Exp: -2}, true},
		{"1.5E+3", Decimal{Digits: "15", Exp: 4}, true},
		{"15e-3", Decimal{Digits: "15", Exp: -1}, true},
		{"1e1000000000000000000", Decimal{Digits: "1", Exp: expCap + 1}, true},
		{"01", Decimal{}, false},
		{"-", Decimal{}, false},
		{"1.", Decimal{}, false},
		{".5", Decimal{}, false},
		{"1e", Decimal{}, false},
		{"1e+", Decimal{}, false},
		{"+1", Decimal{}, false},
		{"1 ", Decimal{}, false},
		{"0x10", Decimal{}, false},
		{"NaN", Decimal{}, false},
		{"", Decimal{}, false},
	}
	for _, tt := range tests {
		got, ok := ParseDecimal(tt.lit)
		if ok != tt.ok || got != tt.want {
			t.Errorf("ParseDecimal(%q) = %+v, %v; want %+v, %v", tt.lit, got, ok, tt.want, tt.ok)
		}
	}
}

// TestDecimalCmp: comparison is by exact value, sign and magnitude.
func TestDecimalCmp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want int
	}{
		{"9007199254740993", "9007199254740992", 1},
		{"9007199254740992.000", "9007199254740992", 0},
		{"0.9007199254740992e16", "9007199254740992", 0},
		{"-9007199254740993", "-9007199254740992", -1},
		{"-0", "0", 0},
		{"1e-400", "0", 1},
		{"-1e-400", "0", -1},
		{"1e400", "1.7976931348623157e308", 1},
		{"0." + strings.Repeat("0", 100000) + "5e100001", "5", 0},
	}
	for _, tt := range tests {
		a, ok1 := ParseDecimal(tt.a)
		b, ok2 := ParseDecimal(tt.b)
		if !ok1 || !ok2 {
			t.Fatalf("%s or %s does not parse", tt.a, tt.b)
		}
		if got := a.Cmp(b); got != tt.want {
			t.Errorf("%.40s cmp %s = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := b.Cmp(a); got != -tt.want {
			t.Errorf("%s cmp %.40s = %d, want %d", tt.b, tt.a, got, -tt.want)
		}
	}
}

// TestDecimalPlain: the plain text keeps every digit, and refuses what
// would be absurdly long to write out.
func TestDecimalPlain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		lit       string
		maxDigits int
		want      string // "": refused
	}{
		{"3.0", 1024, "3"},
		{"-3.50", 1024, "-3.5"},
		{"0.1000000000000000055511151231257827", 1024, "0.1000000000000000055511151231257827"},
		{"9007199254740993.0", 1024, "9007199254740993"},
		{"1.5e3", 1024, "1500"},
		{"15e-3", 1024, "0.015"},
		{"-0.0", 1024, "0"},
		{"0e10", 1024, "0"},
		{"123.456e-1", 1024, "12.3456"},
		{"12e-1", 1024, "1.2"},
		{"1e1000000000", 1024, ""},
		{"1e1023", 1024, "1" + strings.Repeat("0", 1023)}, // 1024 digits
		{"1e1024", 1024, ""},
		{"1e1025", 1024, ""},
		{"1e-1025", 1024, ""},
		{"1e10", 11, "10000000000"},
		{"1e11", 11, ""}, // 12 digits before the point
		{"1e-11", 11, "0.00000000001"},
		{"1e-12", 11, ""},           // 12 after it
		{"123456789012e-6", 11, ""}, // 12 significant
		{"12345678901e-5", 11, "123456.78901"},
	}
	for _, tt := range tests {
		d, ok := ParseDecimal(tt.lit)
		if !ok {
			t.Fatalf("%s does not parse", tt.lit)
		}
		got, ok := d.Plain(tt.maxDigits)
		if ok != (tt.want != "") || got != tt.want {
			t.Errorf("Plain(%s, %d) = %.40q, %v; want %.40q", tt.lit, tt.maxDigits, got, ok, tt.want)
		}
	}
}

// FuzzCanonicalDecimal: ParseDecimal accepts exactly the strings that
// are one JSON number, reads each as its exact value, and the plain text
// denotes that same value, canonically written.
func FuzzCanonicalDecimal(f *testing.F) {
	for _, s := range []string{"0", "-1.5e3", "0.001", "9007199254740993", "1e-7", "12.34E+2", "01", "1.", "-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := ParseDecimal(s)
		var n json.Number
		isNumber := strings.TrimSpace(s) == s && json.Unmarshal([]byte(s), &n) == nil && string(n) == s
		if ok != isNumber {
			t.Fatalf("ParseDecimal(%q) ok=%v, encoding/json reads it as one number: %v", s, ok, isNumber)
		}
		if !ok {
			return
		}
		got, ok := d.Plain(1024)
		if !ok {
			return // too many digits: refused, never rounded
		}
		want, ok1 := new(big.Rat).SetString(s)
		have, ok2 := new(big.Rat).SetString(got)
		if !ok1 || !ok2 || want.Cmp(have) != 0 {
			t.Fatalf("%s -> %s: value changed", s, got)
		}
		if strings.ContainsAny(got, "eE+") || strings.HasSuffix(got, ".") || strings.Contains(got, ".") && strings.HasSuffix(got, "0") || got == "-0" {
			t.Fatalf("%s -> %s: not canonical", s, got)
		}
		if d.Sign() != want.Sign() {
			t.Fatalf("%s: sign %d, exact value's %d", s, d.Sign(), want.Sign())
		}
	})
}
