package strictjson

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestAppendString holds both string encoders to encoding/json: AppendString
// to json.Marshal (HTML escaping on), AppendStringNoHTML to an Encoder with
// SetEscapeHTML(false), byte for byte.
func TestAppendString(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"", "plain", `q"uote\back`, "<a href='x'>&amp;</a>", "\x00\x01\b\f\n\r\t\x1f\x7f",
		"é ü 漢字 🙂", "\u2028\u2029", "bad \xff\xfe utf8", "\xed\xa0\x80 surrogate half",
	} {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		want = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if got := AppendStringNoHTML([]byte("x"), s); !bytes.Equal(got[1:], want) || got[0] != 'x' {
			t.Errorf("AppendStringNoHTML(%q) = %s, want %s", s, got, want)
		}
	}
}
