package strictjson

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestAppendUnquote(t *testing.T) {
	t.Parallel()
	tests := []struct {
		lit  string
		want string
		ok   bool
	}{
		{`plain`, "plain", true},
		{`a\"b\\c\/d`, `a"b\c/d`, true},
		{`\b\f\n\r\t`, "\b\f\n\r\t", true},
		{`\u0041\u00e9`, "Aé", true},
		{`\ud83d\ude00`, "😀", true},
		{`\ud83d`, "\uFFFD", true},
		{`\ude00x`, "\uFFFDx", true},
		{`\ud83d\u0041`, "\uFFFDA", true},
		{`\u12`, "", false},
		{`\x`, "", false},
		{`tail\`, "", false},
	}
	for _, tt := range tests {
		got, ok := AppendUnquote(nil, []byte(tt.lit))
		if ok != tt.ok || (ok && string(got) != tt.want) {
			t.Errorf("AppendUnquote(%q) = %q, %v; want %q, %v", tt.lit, got, ok, tt.want, tt.ok)
		}
	}
}

// FuzzAppendUnquote holds AppendUnquote to what encoding/json reads from
// the same string body: redaction must see what any decoder would see.
func FuzzAppendUnquote(f *testing.F) {
	for _, s := range []string{`a\u0041`, `\ud83d\ude00`, `\ud83d`, `\\\"`, "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, lit string) {
		if !utf8.ValidString(lit) {
			return // copied byte for byte, where encoding/json writes U+FFFD
		}
		var want string
		if json.Unmarshal([]byte(`"`+lit+`"`), &want) != nil {
			return
		}
		got, ok := AppendUnquote(nil, []byte(lit))
		if !ok {
			t.Fatalf("AppendUnquote(%q) refused what encoding/json reads as %q", lit, want)
		}
		if string(got) != want {
			t.Fatalf("AppendUnquote(%q) = %q; encoding/json reads %q", lit, got, want)
		}
	})
}
