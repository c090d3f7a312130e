package pin

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func d(c byte) Digest { return Digest("sha256:" + strings.Repeat(string(c), 64)) }

// tool pins one definition written as JSON.
func tool(t testing.TB, def string) Tool {
	t.Helper()
	p, err := DigestTool([]byte(def))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func sampleLock(t testing.TB) *Lock {
	l := New()
	l.SetSurface("mcpsrv_neotoma", []Tool{
		tool(t, `{"name":"store","description":"Stores an entity.","inputSchema":{"type":"object","properties":{"entity_type":{"type":"string","maxLength":64}},"required":["entity_type"]},"annotations":{"readOnlyHint":false}}`),
		tool(t, `{"name":"retrieve_entities","title":"Retrieve","description":"Reads entities.","inputSchema":{"type":"object"},"outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true},"_meta":{"ignored":1}}`),
	})
	l.SetSurface("json-tools", []Tool{{"query", d('c'), nil}, {"edit-in-place", d('d'), nil}, {"keys", d('e'), nil}})
	l.SetSurface("empty", nil)
	return l
}

// TestLockGolden: the lock file is deterministic and diff-friendly, and
// reads back to the same pins.
func TestLockGolden(t *testing.T) {
	t.Parallel()
	l := sampleLock(t)
	golden(t, "toolgate.lock.golden", l.Marshal())
	back, err := Parse("toolgate.lock", l.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	if string(back.Marshal()) != string(l.Marshal()) {
		t.Fatalf("round trip differs:\n%s", back.Marshal())
	}
	golden(t, "empty.lock.golden", New().Marshal())
	if _, err := Parse("empty.lock", New().Marshal()); err != nil {
		t.Fatal(err)
	}
}

func TestWriteAtomic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, sampleLock(t)); err != nil {
		t.Fatal(err)
	}
	l, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := l.Pinned("json-tools", "query"); got != d('c') {
		t.Fatalf("pinned %q", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v", fi.Mode())
	}
	if err := Write(filepath.Join(dir, "missing", FileName), New()); err == nil {
		t.Fatal("write into a missing directory succeeded")
	}
	if _, err := Read(filepath.Join(dir, "none.lock")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing lock: %v", err)
	}
	if got := PathFor("/srv/ws/toolgate.yaml"); got != "/srv/ws/toolgate.lock" {
		t.Fatalf("PathFor %q", got)
	}
}

// TestParseHostile: each broken or hostile lock is refused with the place
// and the fix.
func TestParseHostile(t *testing.T) {
	t.Parallel()
	a := string(d('a'))
	cases := []struct{ name, src, want string }{
		{"duplicate surface", `{"version":1,"surfaces":{"s":{},` + "\n" + `"s":{}}}`, `x.lock:2:1: duplicate key "s" in "surfaces"`},
		{"duplicate tool", `{"version":1,"surfaces":{"s":{"t":"` + a + `",  "t":"` + a + `"}}}`, `duplicate key "t" in surface "s"`},
		{"duplicate version", `{"version":1,"version":1,"surfaces":{}}`, `duplicate key "version"`},
		{"unknown key", `{"version":1,"surfaces":{},"comment":"x"}`, `x.lock:1:28: unknown key "comment"`},
		{"no version", `{"surfaces":{}}`, `no "version"`},
		{"future version", `{"version":3,"surfaces":{}}`, "version the number 3 is not supported"},
		{"surfaces before version", `{"surfaces":{},"version":2}`, `no "version" before "surfaces"`},
		{"v2 digest a string", `{"version":2,"surfaces":{"s":{"t":"` + a + `"}}}`, `surface "s" tool "t" must be an object`},
		{"v2 no digest", `{"version":2,"surfaces":{"s":{"t":{}}}}`, `surface "s" tool "t" has no "digest"`},
		{"v2 unknown key", `{"version":2,"surfaces":{"s":{"t":{"digest":"` + a + `","note":1}}}}`, `unknown key "note" in surface "s" tool "t"`},
		{"v2 definition not the digest's", "{\"version\":2,\"surfaces\":{\"s\":{\"t\":{\"digest\":\"" + a + "\",\n\"definition\": {\"name\":\"t\"}}}}}", `x.lock:2:15: surface "s" tool "t": the definition does not have the recorded digest`},
		{"v2 definition of another tool", `{"version":2,"surfaces":{"s":{"t":{"digest":"` + a + `","definition":{"name":"u"}}}}}`, `the definition is named "u"`},
		{"v2 definition duplicate key", `{"version":2,"surfaces":{"s":{"t":{"digest":"` + a + `","definition":{"name":"t","name":"t"}}}}}`, `surface "s" tool "t": tool definition:`},
		{"v2 definition not an object", `{"version":2,"surfaces":{"s":{"t":{"digest":"` + a + `","definition":[1]}}}}`, `tool definition:`},
		{"v2 definition truncated", `{"version":2,"surfaces":{"s":{"t":{"digest":"` + a + `","definition":{"name":`, `definition:`},
		{"version a string", `{"version":"1","surfaces":{}}`, `version the string "1" is not supported`},
		{"surfaces an array", `{"version":1,"surfaces":[]}`, `"surfaces" must be an object, found an array`},
		{"tools a string", `{"version":1,"surfaces":{"s":"x"}}`, `surface "s" must be an object`},
		{"digest a number", `{"version":1,"surfaces":{"s":{"t":5}}}`, `x.lock:1:35: surface "s" tool "t": want a digest`},
		{"digest malformed", `{"version":1,"surfaces":{"s":{"t":"sha256:abc"}}}`, "want a digest"},
		{"digest uppercase", `{"version":1,"surfaces":{"s":{"t":"` + strings.ToUpper(a) + `"}}}`, "want a digest"},
		{"digest nested", `{"version":1,"surfaces":{"s":{"t":{"sha256":"x"}}}}`, "found an object"},
		{"bad surface id", `{"version":1,"surfaces":{"a b":{}}}`, `surface id "a b"`},
		{"empty tool name", `{"version":1,"surfaces":{"s":{"":"` + a + `"}}}`, `tool name ""`},
		{"control in tool name", `{"version":1,"surfaces":{"s":{"a\u0000b":"` + a + `"}}}`, "printable"},
		{"not an object", `[]`, "the lock file must be an object"},
		{"empty file", ``, "ends early"},
		{"truncated", "{\"version\":1,\n\"surfaces\":{\"s\":{", "x.lock:2:18: the file ends early"},
		{"syntax error", "{\"version\":1,\n  \"surfaces\" {}}", "x.lock:2:14: not valid JSON"},
		{"trailing object", `{"version":1,"surfaces":{}}{}`, "data after the lock object"},
		{"trailing garbage", `{"version":1,"surfaces":{}} x`, "data after the lock object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("x.lock", []byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}

func TestReadHuge(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName)
	big := `{"version":1,"surfaces":{"s":{` + strings.Repeat(" ", MaxFileBytes) + `}}}`
	if err := os.WriteFile(path, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(path); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("got %v", err)
	}
}

// TestReadVersion1: a lock written by an older toolgate (digests only) is
// still read — its pins hold — but records no definitions; written again
// it becomes the current version.
func TestReadVersion1(t *testing.T) {
	t.Parallel()
	a := string(d('a'))
	l, err := Parse("old.lock", []byte(`{"version":1,"surfaces":{"s":{"t":"`+a+`"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := l.Pinned("s", "t"); got != d('a') || l.Format != 1 {
		t.Fatalf("pinned %q, format %d", got, l.Format)
	}
	if _, ok := l.Definition("s", "t"); ok {
		t.Fatal("a version 1 lock has definitions")
	}
	if _, ok := l.SurfaceDefinitions("s"); ok {
		t.Fatal("SurfaceDefinitions of a version 1 surface")
	}
	back, err := Parse("new.lock", l.Marshal())
	if err != nil || back.Format != Version {
		t.Fatalf("rewritten: %v format %d\n%s", err, back.Format, l.Marshal())
	}
}

// TestDefinitionsRoundTrip: each definition is read back byte for byte
// (canonical), and SurfaceDefinitions lists them sorted.
func TestDefinitionsRoundTrip(t *testing.T) {
	t.Parallel()
	l := sampleLock(t)
	back, err := Parse("toolgate.lock", l.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	defs, ok := back.SurfaceDefinitions("mcpsrv_neotoma")
	if !ok || len(defs) != 2 || !strings.Contains(string(defs[0]), `"name":"retrieve_entities"`) || strings.Contains(string(defs[0]), "_meta") {
		t.Fatalf("%v %s", ok, defs)
	}
	want, _ := l.Definition("mcpsrv_neotoma", "store")
	if got, _ := back.Definition("mcpsrv_neotoma", "store"); string(got) != string(want) {
		t.Fatalf("store: %s, want %s", got, want)
	}
	if _, ok := back.SurfaceDefinitions("json-tools"); ok {
		t.Fatal("a surface pinned without definitions reports them")
	}
}
