package workspace

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestParseTemplate(t *testing.T) {
	t.Parallel()
	lit := func(s string) Segment { return Segment{Literal: s} }
	par := func(s string) Segment { return Segment{Param: s} }
	tests := []struct {
		in   string
		want []Segment
	}{
		{"jq", []Segment{lit("jq")}},
		{"", []Segment{lit("")}},
		{"{file}", []Segment{par("file")}},
		{"--repo={repo}", []Segment{lit("--repo="), par("repo")}},
		{"{dst}/{name}.bak", []Segment{par("dst"), lit("/"), par("name"), lit(".bak")}},
		{"{a}{b}", []Segment{par("a"), par("b")}},
		{"{credential.gh-token}", []Segment{par("credential.gh-token")}},
		{"Bearer {credential.api_key}", []Segment{lit("Bearer "), par("credential.api_key")}},
		{"{a.b}", []Segment{par("a.b")}},
		{"{_x-1}", []Segment{par("_x-1")}},
		// Braces around anything but a name are jq (or other) text.
		{"{a: .b}", []Segment{lit("{a: .b}")}},
		{"{a: .b, c: [.d[] | {e: .f}]}", []Segment{lit("{a: .b, c: [.d[] | {e: .f}]}")}},
		{"{}", []Segment{lit("{}")}},
		{"{1a}", []Segment{lit("{1a}")}},
		{"{a b}", []Segment{lit("{a b}")}},
		{"{ a }", []Segment{lit("{ a }")}},
		{"{credential.}", []Segment{lit("{credential.}")}},
		{"{ä}", []Segment{lit("{ä}")}},
		{"{a", []Segment{lit("{a")}},
		{"a}", []Segment{lit("a}")}},
		{"{{a}}", []Segment{lit("{"), par("a"), lit("}")}},
		{"${HOME}", []Segment{lit("$"), par("HOME")}},
		// jq's object shorthand {name} has the form of a placeholder and is
		// one; write {name: .name} to keep it jq.
		{".[] | {name}", []Segment{lit(".[] | "), par("name")}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got := ParseTemplate(tt.in)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseTemplate(%q) = %#v, want %#v", tt.in, got, tt.want)
			}
			if back := joinSegments(got); back != tt.in {
				t.Errorf("segments of %q join back to %q", tt.in, back)
			}
		})
	}
}

// joinSegments writes segments back as template text.
func joinSegments(segs []Segment) string {
	var b strings.Builder
	for _, s := range segs {
		if s.Param != "" {
			b.WriteString("{" + s.Param + "}")
		} else {
			b.WriteString(s.Literal)
		}
	}
	return b.String()
}

func TestSegmentIsCredential(t *testing.T) {
	t.Parallel()
	tests := []struct {
		seg      Segment
		wantName string
		wantOK   bool
	}{
		{Segment{Param: "credential.gh-token"}, "gh-token", true},
		{Segment{Param: "credential.a.b"}, "a.b", true},
		{Segment{Param: "repo"}, "", false},
		{Segment{Param: "Credential.x"}, "", false},
		{Segment{Param: "credentials.x"}, "", false},
		{Segment{Literal: "{credential.x}"}, "", false},
	}
	for _, tt := range tests {
		name, ok := tt.seg.IsCredential()
		if name != tt.wantName || ok != tt.wantOK {
			t.Errorf("%#v.IsCredential() = %q, %v; want %q, %v", tt.seg, name, ok, tt.wantName, tt.wantOK)
		}
	}
}

func TestPlaceholders(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		argv []string
		want []string
	}{
		{"none", []string{"git", "status"}, nil},
		{"nil argv", nil, nil},
		{"order of first use, no repeats", []string{"cp", "{src}", "{dst}/{name}", "--backup={src}"}, []string{"src", "dst", "name"}},
		{"credentials are not inputs", []string{"curl", "-H", "Authorization: {credential.t}", "{url}"}, []string{"url"}},
		{"jq objects are not placeholders", []string{"jq", "{a: .b}", "{file}"}, []string{"file"}},
		{"inside a larger element", []string{"gh", "--repo={owner}/{repo}"}, []string{"owner", "repo"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Placeholders(tt.argv); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Placeholders(%q) = %q, want %q", tt.argv, got, tt.want)
			}
		})
	}
}

// placeholderRE is the reference definition of a placeholder, which
// ParseTemplate's scanner must agree with.
var placeholderRE = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_.-]+)?)\}`)

// FuzzParseTemplate checks that any element splits into segments that
// join back to it, with no empty literal between placeholders, and that
// the placeholders found are exactly those of the reference expression.
func FuzzParseTemplate(f *testing.F) {
	for _, s := range []string{"", "{a}", "--x={a}{b}", "{a: .b}", "{{a}}", "{credential.x}", "}{", "{a.}"} {
		f.Add(s)
	}
	for _, s := range []string{"{a.b.c}", "{a-b_c.d-e}", "x{{y}}z", "{_}", "{a}.{b}", "{a.b}}", "{{a.}", "\xff{a}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, elem string) {
		segs := ParseTemplate(elem)
		if back := joinSegments(segs); back != elem {
			t.Fatalf("ParseTemplate(%q) joins back to %q", elem, back)
		}
		var params, want []string
		for _, m := range placeholderRE.FindAllStringSubmatch(elem, -1) {
			want = append(want, m[1])
		}
		for _, s := range segs {
			if s.Param != "" {
				params = append(params, s.Param)
			}
			if s.Param != "" && s.Literal != "" {
				t.Fatalf("segment %#v is both literal and placeholder", s)
			}
			if len(segs) > 1 && s.Param == "" && s.Literal == "" {
				t.Fatalf("empty literal segment in %#v", segs)
			}
		}
		if !slices.Equal(params, want) {
			t.Fatalf("ParseTemplate(%q) found %q, the reference expression %q", elem, params, want)
		}
	})
}
