package redact

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

const redactSecret = "ghp_AbCdEf0123456789XyZ"

// TestEncodings: each encoding the redactor claims to catch, built in Go,
// inside surrounding text.
func TestEncodings(t *testing.T) {
	t.Parallel()
	rd := New(map[string]string{"tok": redactSecret, "short": "abc"})
	s := redactSecret
	b := []byte(s)
	rev := reverseRunes(s)
	jsonOf := func(v any) string { out, _ := json.Marshal(v); return string(out) }
	cases := []struct{ name, enc string }{
		{"raw", s},
		{"upper", strings.ToUpper(s)},
		{"lower", strings.ToLower(s)},
		{"reversed", rev},
		{"reversed upper", strings.ToUpper(rev)},
		{"hex", hex.EncodeToString(b)},
		{"HEX", strings.ToUpper(hex.EncodeToString(b))},
		{"base64", base64.StdEncoding.EncodeToString(b)},
		{"base64 no padding", base64.RawStdEncoding.EncodeToString(b)},
		{"base64 url", base64.URLEncoding.EncodeToString(b)},
		{"base64 after 1 byte", base64.StdEncoding.EncodeToString(append([]byte("x"), b...))},
		{"base64 after 2 bytes", base64.StdEncoding.EncodeToString(append([]byte("xy"), b...))},
		{"base64 inside a text", base64.StdEncoding.EncodeToString([]byte("user:" + s + "\n"))},
		{"base64 of the reverse", base64.StdEncoding.EncodeToString([]byte(rev))},
		{"base32", base32.StdEncoding.EncodeToString(b)},
		{"base32 after 3 bytes", base32.StdEncoding.EncodeToString(append([]byte("abc"), b...))},
		{"json escaped", jsonOf(s + `"`)},
		{"json escaped twice", jsonOf(jsonOf(s))},
		{"percent-encoded", strings.ReplaceAll(s, "_", "%5F")},
		{"code points", jsonOf(codepoints(s))},
		{"code points, indented", strings.ReplaceAll(jsonOf(codepoints(s)), ",", ",\n  ")},
		{"code points reversed", jsonOf(codepoints(rev))},
		{"slice of 12", s[3:15]},
		{"slice from 5", s[5:]},
		{"slice of 12 code points", jsonOf(codepoints(s[4:16]))},
	}
	for _, c := range cases {
		text := "before " + c.enc + " after"
		got := rd.Redact(text)
		if !strings.Contains(got, "[REDACTED:tok]") || !strings.HasPrefix(got, "before ") || !strings.HasSuffix(got, " after") {
			t.Errorf("%s: %q -> %q", c.name, text, got)
		}
		if strings.Contains(strings.ToLower(got), "0123456789") {
			t.Errorf("%s: the secret's digits survive: %q", c.name, got)
		}
	}
	// Ordinary text and short values are left alone.
	for _, text := range []string{"abc and ABC stay", "ghp_ alone", "[1, 2, 3, 103, 104]", "0123456"} {
		if got := rd.Redact(text); got != text {
			t.Errorf("%q changed to %q", text, got)
		}
	}
	// A decoded list of code points becomes one mark element.
	list := []any{json.Number("1")}
	for _, c := range codepoints(s) {
		list = append(list, json.Number(jsonOf(c)))
	}
	got := rd.Value(append(list, json.Number("2")))
	if want := []any{json.Number("1"), "[REDACTED:tok]", json.Number("2")}; !reflect.DeepEqual(got, want) {
		t.Errorf("Value of a code point list = %v", got)
	}
}

// TestNil: a nil Redactor (no credentials) passes everything through.
func TestNil(t *testing.T) {
	t.Parallel()
	var r *Redactor
	if r.Redact("x") != "x" || r.Redact(`"x"`) != `"x"` || r.Cut("x", true, true) != "x" || r.Forms() != nil {
		t.Error("a nil Redactor changed text")
	}
	if b, ok := r.JSON([]byte(`{"a":1}`)); !ok || string(b) != `{"a":1}` {
		t.Errorf("JSON = %s, %v", b, ok)
	}
}

// TestCut: a credential cut at the edge of a page or a tail is replaced
// even though only part of it shows.
func TestCut(t *testing.T) {
	t.Parallel()
	rd := New(map[string]string{"tok": redactSecret})
	cases := []struct {
		name, in         string
		cutStart, cutEnd bool
		want             string
	}{
		{"end cut", "out: " + redactSecret[:9], false, true, "out: [REDACTED:tok]"},
		{"start cut", redactSecret[14:] + " rest", true, false, "[REDACTED:tok] rest"},
		{"not cut", "out: " + redactSecret[:9], false, false, "out: " + redactSecret[:9]},
		{"whole value", "a " + redactSecret + " b", true, true, "a [REDACTED:tok] b"},
		{"fragment too short", "out: ghp", false, true, "out: ghp"},
	}
	for _, c := range cases {
		if got := rd.Cut(c.in, c.cutStart, c.cutEnd); got != c.want {
			t.Errorf("%s: Cut(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

// TestJQTricks runs real jq with the credential in its env and applies
// the transformations an agent's filter would: none survives redaction.
func TestJQTricks(t *testing.T) {
	t.Parallel()
	jq, err := exec.LookPath("jq")
	if err != nil {
		t.Fatalf("jq is needed: %v", err)
	}
	rd := New(map[string]string{"sec": redactSecret})
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
		cmd := exec.Command(jq, "-n", "-r", f)
		cmd.Env = []string{"SEC=" + redactSecret}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s: %v: %s", f, err, out)
			continue
		}
		got := rd.Redact(string(out))
		if strings.Contains(strings.ToLower(got), "0123456789") || !strings.Contains(got, "REDACTED:sec") {
			t.Errorf("%s: leaked %q", f, got)
		}
	}
}
