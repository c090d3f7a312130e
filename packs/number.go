package packs

import (
	"errors"

	"github.com/toolgate/toolgate/strictjson"
)

// maxNumberDigits bounds the decimal text a JSON number may expand to in
// argv: 1e1000000000 is a valid JSON number, and writing it out would take a
// gigabyte.
const maxNumberDigits = 1024

// canonicalDecimal writes a JSON number literal as a plain decimal without
// an exponent and without trailing fraction zeros, exactly (strictjson's
// Decimal moves the digits, never converting through a float), so
// 9007199254740993 and 0.1000000000000000055511151231257827 reach argv as
// written. "3.0" is "3", "1.5e3" is "1500", "-0.0" is "0".
func canonicalDecimal(lit string) (string, error) {
	d, ok := strictjson.ParseDecimal(lit)
	if !ok {
		return "", errors.New("is not a JSON number")
	}
	s, ok := d.Plain(maxNumberDigits)
	if !ok {
		return "", errors.New("has more digits than a command-line number should; pass the value as a string")
	}
	return s, nil
}
