package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/iotest"
)

// rehash decodes a line, lets edit change it, and re-encodes it with a
// freshly computed hash, as a forger who knows the format would.
func rehash(t *testing.T, line []byte, edit func(*Event)) []byte {
	t.Helper()
	var ev Event
	if err := json.Unmarshal(line, &ev); err != nil {
		t.Fatal(err)
	}
	edit(&ev)
	out, _, err := encodeLine(&ev)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestVerifyDetectsTampering(t *testing.T) {
	t.Parallel()
	_, data := writeChain(t, 5)
	join := func(ls ...[]byte) []byte { return bytes.Join(ls, nil) }
	tests := []struct {
		name    string
		tamper  func(ls [][]byte) []byte
		line    int
		seq     int64
		problem Problem
		detail  string
	}{
		{"edit a reason", func(ls [][]byte) []byte {
			ls[2] = bytes.Replace(ls[2], []byte("event 2"), []byte("event 9"), 1)
			return join(ls...)
		}, 3, 3, ProblemEdited, "does not match its hash"},
		{"insert a space", func(ls [][]byte) []byte {
			ls[1] = bytes.Replace(ls[1], []byte(`"agent":`), []byte(`"agent": `), 1)
			return join(ls...)
		}, 2, 2, ProblemEdited, "does not match its hash"},
		{"edit prev in place", func(ls [][]byte) []byte {
			ls[3] = bytes.Replace(ls[3], []byte(`"prev":"`), []byte(`"prev":"0`), 1)
			return join(ls...)
		}, 4, 4, ProblemEdited, "does not match its hash"},
		{"uppercase the hash", func(ls [][]byte) []byte {
			i := bytes.LastIndex(ls[1], []byte(hashField)) + len(hashField)
			copy(ls[1][i:], bytes.ToUpper(ls[1][i:i+64]))
			return join(ls...)
		}, 2, 2, ProblemMalformed, "hash field"},
		{"garbage line", func(ls [][]byte) []byte {
			return join(ls[0], []byte("not json\n"), ls[1], ls[2], ls[3], ls[4])
		}, 2, 2, ProblemMalformed, "not a JSON audit event"},
		{"blank line", func(ls [][]byte) []byte {
			return join(ls[0], ls[1], []byte("\n"), ls[2], ls[3], ls[4])
		}, 3, 3, ProblemMalformed, "not a JSON audit event"},
		{"remove the first line", func(ls [][]byte) []byte { return join(ls[1:]...) }, 1, 1, ProblemMissing, "seq 1 is missing"},
		{"remove a middle line", func(ls [][]byte) []byte {
			return join(ls[0], ls[1], ls[3], ls[4])
		}, 3, 3, ProblemMissing, "seq 3 is missing (the line holds seq 4)"},
		{"remove two lines", func(ls [][]byte) []byte {
			return join(ls[0], ls[3], ls[4])
		}, 2, 2, ProblemMissing, "seqs 2 to 3 are missing"},
		{"swap two lines", func(ls [][]byte) []byte {
			return join(ls[0], ls[2], ls[1], ls[3], ls[4])
		}, 2, 2, ProblemReordered, "seq 2 is on line 3"},
		{"duplicate a line", func(ls [][]byte) []byte {
			return join(ls[0], ls[1], ls[1], ls[2], ls[3], ls[4])
		}, 3, 3, ProblemReordered, "holds seq 2 again"},
		{"forged prev with recomputed hash", func(ls [][]byte) []byte {
			ls[3] = rehash(t, ls[3], func(ev *Event) { ev.Prev = strings.Repeat("0", 64) })
			return join(ls...)
		}, 4, 4, ProblemPrevMismatch, "prev is"},
		{"rewritten line with recomputed hash", func(ls [][]byte) []byte {
			ls[1] = rehash(t, ls[1], func(ev *Event) { ev.Decision = "allow" })
			return join(ls...)
		}, 3, 3, ProblemPrevMismatch, "previous line's hash"},
		{"crash mid-append", func(ls [][]byte) []byte {
			return join(ls[0], ls[1], ls[2], ls[3], ls[4][:len(ls[4])/2])
		}, 5, 5, ProblemTruncated,
			"line 5 is truncated (no trailing newline / incomplete JSON): the writer probably crashed mid-append; the 4 events before it verify"},
		{"newline lost", func(ls [][]byte) []byte {
			return bytes.TrimSuffix(join(ls...), []byte("\n"))
		}, 5, 5, ProblemTruncated, "line 5 is truncated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tampered := tt.tamper(lines(bytes.Clone(data)))
			rep, err := Verify(bytes.NewReader(tampered))
			ve, ok := AsVerifyError(err)
			if !ok {
				t.Fatalf("Verify = %+v, %v; want a *VerifyError", rep, err)
			}
			if ve.Line != tt.line || ve.Seq != tt.seq || ve.Problem != tt.problem || !strings.Contains(err.Error(), tt.detail) {
				t.Errorf("got line %d seq %d %s: %v\nwant line %d seq %d %s containing %q", ve.Line, ve.Seq, ve.Problem, err, tt.line, tt.seq, tt.problem, tt.detail)
			}
			if rep.Events != tt.line-1 {
				t.Errorf("report counts %d good events before line %d", rep.Events, tt.line)
			}
			if prefix := lines(tampered)[:tt.line-1]; ve.Offset != int64(len(bytes.Join(prefix, nil))) {
				t.Errorf("offset %d is not where line %d starts", ve.Offset, tt.line)
			}
		})
	}
}

// TestVerifyEveryByteEdit flips each byte of a log in turn: every edit must
// be caught, on the line it was made in.
func TestVerifyEveryByteEdit(t *testing.T) {
	t.Parallel()
	_, data := writeChain(t, 4)
	lineAt := make([]int, len(data))
	for i, ln := 0, 1; i < len(data); i++ {
		lineAt[i] = ln
		if data[i] == '\n' {
			ln++
		}
	}
	for i := range data {
		tampered := bytes.Clone(data)
		tampered[i] ^= 0x01
		_, err := Verify(bytes.NewReader(tampered))
		ve, ok := AsVerifyError(err)
		if !ok {
			t.Fatalf("byte %d (%q→%q) edited: Verify = %v", i, data[i], tampered[i], err)
		}
		if want := lineAt[i]; ve.Line != want {
			t.Errorf("byte %d on line %d edited: reported line %d (%v)", i, want, ve.Line, err)
		}
	}
}

func TestVerifyEmptyAndReadErrors(t *testing.T) {
	t.Parallel()
	rep, err := Verify(strings.NewReader(""))
	if err != nil || rep.Events != 0 || rep.LastHash != "" {
		t.Errorf("empty log: %+v, %v", rep, err)
	}
	_, data := writeChain(t, 3)
	boom := errors.New("disk on fire")
	_, err = Verify(iotest.TimeoutReader(bytes.NewReader(data)))
	if err == nil {
		t.Error("a read error was not reported")
	}
	_, err = Verify(iotest.ErrReader(boom))
	if !errors.Is(err, boom) {
		t.Errorf("Verify(failing reader) = %v, want it to wrap the read error", err)
	}
	if _, ok := AsVerifyError(err); ok {
		t.Error("a read error must not look like a broken chain")
	}
}
