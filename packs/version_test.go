package packs

import "testing"

func TestParseVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		output string
		want   string
	}{
		{"jq-1.6\n", "1.6.0"},
		{"jq-1.7.1\n", "1.7.1"},
		{"git version 2.39.5\n", "2.39.5"},
		{"gh version 2.23.0 (2023-02-09)\nhttps://github.com/cli/cli/releases/tag/v2.23.0\n", "2.23.0"},
		{"ripgrep 13.0.0\n-SIMD -AVX (compiled)\n+SIMD +AVX (runtime)\n", "13.0.0"},
		{"rg 14.1.0\n", "14.1.0"},
		{"v20.1.0\n", "20.1.0"},
		{"1.2", "1.2.0"},
		{"jq-1.7rc1", "1.7.0"},
		{"Python 3.11.2", "3.11.2"},
		{"curl 7.88.1 (x86_64-pc-linux-gnu) libcurl/7.88.1 OpenSSL/3.0.11", "7.88.1"},
		{"tool 1.2.3.4", "1.2.3"},
		{"node v18.19.0", "18.19.0"},
		{"build 5 of tool 2.4", "2.4.0"},
	}
	for _, tt := range tests {
		t.Run(tt.output, func(t *testing.T) {
			t.Parallel()
			v, err := ParseVersion(tt.output)
			if err != nil {
				t.Fatalf("ParseVersion(%q): %v", tt.output, err)
			}
			if got := v.String(); got != tt.want {
				t.Errorf("ParseVersion(%q) = %s, want %s", tt.output, got, tt.want)
			}
		})
	}
}

func TestParseVersionRefusesOutputWithoutVersion(t *testing.T) {
	t.Parallel()
	for _, out := range []string{"", "usage: tool [options]", "version 7", "release 2023"} {
		if v, err := ParseVersion(out); err == nil {
			t.Errorf("ParseVersion(%q) = %s, want an error", out, v)
		}
	}
}
