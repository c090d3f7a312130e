package grantcheck

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/strictjson"
)

// TestCmpNumberExact: a literal is compared with a bound by its exact
// value, not by the float64 it rounds to.
func TestCmpNumberExact(t *testing.T) {
	t.Parallel()
	cases := []struct {
		v    any
		b    float64
		want int
	}{
		{json.Number("9007199254740993"), 9007199254740992, 1},
		{json.Number("9007199254740992"), 9007199254740992, 0},
		{json.Number("9007199254740991"), 9007199254740992, -1},
		{json.Number("9.007199254740993e15"), 9007199254740992, 1},
		{json.Number("90071992547409920001e-4"), 9007199254740992, 1},
		{json.Number("9007199254740992.0000000001"), 9007199254740992, 1},
		{json.Number("9007199254740991.9999999999"), 9007199254740992, -1},
		{json.Number("9007199254740992.000"), 9007199254740992, 0},
		{json.Number("0.9007199254740992e16"), 9007199254740992, 0},
		{json.Number("-9007199254740993"), -9007199254740992, -1},
		{json.Number("-9007199254740991"), -9007199254740992, 1},
		{json.Number("0.1"), 0.1, -1}, // 0.1 is below float64(0.1) = 0.1000000000000000055…
		{json.Number("0.1000000000000000055511151231257827021181583404541015625"), 0.1, 0},
		{json.Number("0.10000000000000001"), 0.1, 1},
		{json.Number("-0"), 0, 0},
		{json.Number("0e-99999999999999999999999"), 0, 0},
		{json.Number("1e-99999999999999999999999"), 0, 1},
		{json.Number("-1e-99999999999999999999999"), 0, -1},
		{json.Number("-1e-400"), 0, -1},
		{json.Number("1e-400"), 0, 1},
		{json.Number("5e-324"), 5e-324, 1},
		{json.Number("4.9406564584124654e-324"), 5e-324, 0 - 1},
		{json.Number("1"), 1, 0},
		{json.Number("1.7976931348623157e308"), math.MaxFloat64, -1},
		{json.Number("1e400"), math.MaxFloat64, 1},
		{json.Number("-1e400"), -math.MaxFloat64, -1},
		// strconv.ParseFloat reads these as 0.
		{json.Number("0." + strings.Repeat("0", 100000) + "5e100001"), 2, 1},
		{json.Number("0." + strings.Repeat("0", 100000) + "5e100001"), 5, 0},
		{float64(3), 2, 1},
		{2, 2, 0},
		{int64(-1), 0, -1},
	}
	for _, c := range cases {
		got, ok := compareNumber(c.v, exactDecimal(c.b))
		if !ok || got != c.want {
			t.Errorf("compareNumber(%v, %v) = %d, %v; want %d", c.v, c.b, got, ok, c.want)
		}
	}
	for _, v := range []any{json.Number("x"), json.Number("1."), json.Number(".5"), json.Number("01x"), json.Number("1e"), json.Number("+1"), "1", nil, true, math.NaN()} {
		if _, ok := compareNumber(v, strictjson.Decimal{}); ok {
			t.Errorf("compareNumber(%#v) compared a non-number", v)
		}
	}
}

// TestCmpNumberHugeLiteral: a long literal costs linear time, whatever
// its exponent.
func TestCmpNumberHugeLiteral(t *testing.T) {
	t.Parallel()
	long := json.Number("0." + strings.Repeat("0", 1<<20) + "1e1048577")
	if got, ok := compareNumber(long, exactDecimal(1)); !ok || got != 0 {
		t.Errorf("0.0…01e1048577 vs 1: %d %v", got, ok)
	}
}

func TestNumbersEqual(t *testing.T) {
	t.Parallel()
	cases := []struct {
		a, b any
		want bool
	}{
		{json.Number("9007199254740993"), float64(9007199254740992), false},
		{json.Number("9007199254740992"), float64(9007199254740992), true},
		{json.Number("1.0"), float64(1), true},
		{json.Number("1e0"), 1, true},
		{json.Number("-0"), float64(0), true},
		{json.Number("1.0000000000000001"), float64(1), false},
		{json.Number("1"), "1", false},
		{json.Number("1e400"), math.MaxFloat64, false},
		{json.Number("17976931348623157e292"), math.MaxFloat64, false},
		{json.Number("0.30000000000000004"), math.Nextafter(0.3, 1), false},
		{json.Number("0.3000000000000000444089209850062616169452667236328125"), math.Nextafter(0.3, 1), true},
	}
	for _, c := range cases {
		if got := numbersEqual(c.a, c.b); got != c.want {
			t.Errorf("numbersEqual(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
