package grantcheck

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/strictjson"
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
func compareNumber(v any, b strictjson.Decimal) (c int, ok bool) {
	d, ok := toDecimal(v)
	if !ok {
		return 0, false
	}
	return d.Cmp(b), true
}

// below and above compare a number with a bound (false for a non-number,
// which the caller refuses first).
func below(v any, b strictjson.Decimal) bool { c, ok := compareNumber(v, b); return ok && c < 0 }
func above(v any, b strictjson.Decimal) bool { c, ok := compareNumber(v, b); return ok && c > 0 }

// numbersEqual reports whether two numbers are equal as exact values.
func numbersEqual(a, b any) bool {
	da, ok1 := toDecimal(a)
	db, ok2 := toDecimal(b)
	return ok1 && ok2 && da.Cmp(db) == 0
}

// toDecimal is the exact value of a JSON number: a literal (json.Number),
// read by strictjson's grammar, or a number built in Go.
func toDecimal(v any) (strictjson.Decimal, bool) {
	switch x := v.(type) {
	case json.Number:
		return strictjson.ParseDecimal(string(x))
	case int:
		return strictjson.ParseDecimal(strconv.Itoa(x))
	case int64:
		return strictjson.ParseDecimal(strconv.FormatInt(x, 10))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return strictjson.Decimal{}, false
		}
		return exactDecimal(x), true
	}
	return strictjson.Decimal{}, false
}

// exactDecimal is the exact decimal value of a finite float64 (at most
// 767 significant digits).
func exactDecimal(f float64) strictjson.Decimal {
	if f == 0 {
		return strictjson.Decimal{}
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<63 {
		d, _ := strictjson.ParseDecimal(strconv.FormatInt(int64(f), 10))
		return d
	}
	d, _ := strictjson.ParseDecimal(strings.Replace(new(big.Float).SetFloat64(f).Text('e', 800), "e+", "e", 1))
	return d
}
