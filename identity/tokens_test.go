package identity

import (
	"net/http/httptest"
	"testing"
)

func TestTokens(t *testing.T) {
	t.Parallel()
	tt := NewTokens(map[string]string{"reader": "tok-r", "editor": "tok-e", "blank": ""})
	cases := map[string]string{"tok-r": "reader", "tok-e": "editor", "": "", "tok-": "", "tok-rr": "", "TOK-R": ""}
	for tok, want := range cases {
		if got := tt.Lookup(tok); got != want {
			t.Errorf("Lookup(%q) = %q, want %q", tok, got, want)
		}
	}
	tt.Replace(map[string]string{"editor": "tok-r"})
	if got := tt.Lookup("tok-r"); got != "editor" {
		t.Errorf("after Replace: Lookup(tok-r) = %q, want editor", got)
	}
	if got := tt.Lookup("tok-e"); got != "" {
		t.Errorf("after Replace: a removed token still names %q", got)
	}
}

func TestBearer(t *testing.T) {
	t.Parallel()
	for h, want := range map[string]string{"Bearer abc": "abc", "bearer abc ": "abc", "Basic abc": "", "Bearerabc": "", "": ""} {
		r := httptest.NewRequest("POST", "/mcp/x", nil)
		if h != "" {
			r.Header.Set("Authorization", h)
		}
		if got := Bearer(r); got != want {
			t.Errorf("Bearer(%q) = %q, want %q", h, got, want)
		}
	}
}
