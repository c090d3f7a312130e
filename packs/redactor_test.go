package packs

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

const redactSecret = "ghp_AbCdEf0123456789XyZ"

// TestRedactEncodings: each encoding the redactor claims to catch, built
// in Go, inside surrounding text.
func TestRedactEncodings(t *testing.T) {
	t.Parallel()
	rd := newRedactor(map[string]string{"tok": redactSecret, "short": "abc"})
	s := redactSecret
	b := []byte(s)
	rev := reverseRunes(s)
	jsonOf := func(v any) string { out, _ := json.Marshal(v); return string(out) }
	cases := map[string]string{
		"raw":                     s,
		"upper":                   strings.ToUpper(s),
		"lower":                   strings.ToLower(s),
		"reversed":                rev,
		"reversed upper":          strings.ToUpper(rev),
		"hex":                     hex.EncodeToString(b),
		"HEX":                     strings.ToUpper(hex.EncodeToString(b)),
		"base64":                  base64.StdEncoding.EncodeToString(b),
		"base64 no padding":       base64.RawStdEncoding.EncodeToString(b),
		"base64 url":              base64.URLEncoding.EncodeToString(b),
		"base64 after 1 byte":     base64.StdEncoding.EncodeToString(append([]byte("x"), b...)),
		"base64 after 2 bytes":    base64.StdEncoding.EncodeToString(append([]byte("xy"), b...)),
		"base64 inside a text":    base64.StdEncoding.EncodeToString([]byte("user:" + s + "\n")),
		"base64 of the reverse":   base64.StdEncoding.EncodeToString([]byte(rev)),
		"base32":                  base32.StdEncoding.EncodeToString(b),
		"base32 after 3 bytes":    base32.StdEncoding.EncodeToString(append([]byte("abc"), b...)),
		"json escaped":            jsonOf(s + `"`),
		"json escaped twice":      jsonOf(jsonOf(s)),
		"percent-encoded":         strings.ReplaceAll(s, "_", "%5F"),
		"code points":             jsonOf(codepoints(s)),
		"code points, indented":   strings.ReplaceAll(jsonOf(codepoints(s)), ",", ",\n  "),
		"code points reversed":    jsonOf(codepoints(rev)),
		"slice of 12":             s[3:15],
		"slice from 5":            s[5:],
		"slice of 12 code points": jsonOf(codepoints(s[4:16])),
	}
	for name, enc := range cases {
		text := "before " + enc + " after"
		got := rd.redact(text)
		if !strings.Contains(got, "[REDACTED:tok]") || !strings.HasPrefix(got, "before ") || !strings.HasSuffix(got, " after") {
			t.Errorf("%s: %q -> %q", name, text, got)
		}
		if strings.Contains(strings.ToLower(got), "0123456789") {
			t.Errorf("%s: the secret's digits survive: %q", name, got)
		}
	}
	// Ordinary text and short values are left alone.
	for _, text := range []string{"abc and ABC stay", "ghp_ alone", "[1, 2, 3, 103, 104]", "0123456"} {
		if got := rd.redact(text); got != text {
			t.Errorf("%q changed to %q", text, got)
		}
	}
	// A decoded list of code points becomes one mark element.
	list := []any{json.Number("1")}
	for _, c := range codepoints(s) {
		list = append(list, json.Number(jsonOf(c)))
	}
	got := rd.redactNumbers(append(list, json.Number("2")))
	if want := []any{json.Number("1"), "[REDACTED:tok]", json.Number("2")}; !reflect.DeepEqual(got, want) {
		t.Errorf("redactNumbers = %v", got)
	}
}

// TestRedactJQTricks runs real jq with the credential in its env and
// applies the transformations an agent's filter would: none reaches the
// result.
func TestRedactJQTricks(t *testing.T) {
	t.Parallel()
	requireProgram(t, "jq")
	r := newTestRunner(t, map[string]string{"sec": redactSecret})
	c := command("q", "jq", "-n", "-r", "{filter}")
	pack := packOf(c)
	pack.Env = map[string]string{"SEC": "{credential.sec}"}
	filters := []string{
		`env.SEC`,
		`$ENV.SEC`,
		`env | getpath(["SEC"])`,
		`env.SEC | @base64`,
		`"x" + env.SEC | @base64`,
		`"xy" + env.SEC | @base64`,
		`env.SEC | @base64 | rtrimstr("=")`,
		`env.SEC | @base64 | gsub("\\+"; "-") | gsub("/"; "_")`,
		`env.SEC | @uri`,
		`env.SEC | @html`,
		`env.SEC | @sh`,
		`env.SEC | tojson`,
		`env.SEC | tojson | tojson`,
		`[env.SEC] | tojson`,
		`env.SEC | explode`,
		`env.SEC | explode | tojson`,
		`env.SEC | explode | map(tostring) | join(",")`,
		`env.SEC | explode | reverse | implode`,
		`env.SEC | ascii_upcase`,
		`env.SEC | ascii_downcase`,
		`env.SEC[0:12]`,
		`env.SEC[5:]`,
		`env.SEC | explode | .[2:14]`,
		`{(env.SEC): 1}`,
		`env.SEC | @base64 | @base64d`,
		`env | tostring`,
	}
	for _, f := range filters {
		res := mustRun(t, r, pack, c, map[string]any{"filter": f})
		out := string(res.Stdout) + res.StderrTail
		if !res.OK() {
			t.Errorf("%s: %s", f, res.Err)
		}
		if strings.Contains(strings.ToLower(out), "0123456789") || !strings.Contains(out, "REDACTED:sec") {
			t.Errorf("%s: leaked %q", f, out)
		}
	}
}

func BenchmarkRedact(b *testing.B) {
	rd := newRedactor(map[string]string{"a": redactSecret, "b": "another-credential-value-42"})
	text := strings.Repeat("some ordinary output line, with numbers 1, 2, 3 and words\n", 8000) // ~460 KB
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		rd.redact(text)
	}
}
