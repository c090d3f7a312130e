package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// TestAppendEventWritesEveryField fills every field of Event, recursively
// and with a non-zero value of its kind, and checks that what the hand
// encoder writes decodes (encoding/json) back to the same value: a field
// added to Event (or to Payload, Checkpoint) that appendEvent does not
// write fails here, instead of silently vanishing from the audit.
func TestAppendEventWritesEveryField(t *testing.T) {
	t.Parallel()
	var want Event
	f := filler{}
	f.fill(t, reflect.ValueOf(&want).Elem(), "Event")
	line, hash, err := encodeLine(&want)
	if err != nil {
		t.Fatal(err)
	}
	if oracle, _, err := oracleLine(&want); err != nil || !bytes.Equal(line, oracle) {
		t.Errorf("appendEvent and encoding/json differ:\n got %s\nwant %s (%v)", line, oracle, err)
	}
	want.Hash = hash // encodeLine ignores the filled Hash and writes the line's own
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	var got Event
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("decode %s: %v", line, err)
	}
	for _, diff := range fieldDiffs(reflect.ValueOf(want), reflect.ValueOf(got), "Event") {
		t.Errorf("%s: not written by appendEvent (or written wrongly): %s", diff, line)
	}
}

// filler sets every field to a distinct non-zero value: strings name
// their field, numbers count up, booleans are true, pointers and slices
// are allocated and filled, json.RawMessage is a JSON object, time.Time a
// UTC instant with nanoseconds.
type filler struct{ n int64 }

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

func (f *filler) fill(t *testing.T, v reflect.Value, path string) {
	t.Helper()
	f.n++
	switch {
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(time.Date(2026, 7, 28, 9, 30, 1, int(f.n), time.UTC)))
		return
	case v.Type() == rawType:
		v.Set(reflect.ValueOf(json.RawMessage(fmt.Sprintf(`{"field":%q,"n":%d}`, path, f.n))))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("value of " + path)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(f.n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(f.n))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(f.n) + 0.5)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		f.fill(t, v.Elem(), path)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			f.fill(t, v.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		f.fill(t, k, path+".key")
		f.fill(t, e, path+"[key]")
		v.SetMapIndex(k, e)
	case reflect.Struct:
		for i := range v.NumField() {
			sf := v.Type().Field(i)
			if !sf.IsExported() || sf.Tag.Get("json") == "-" {
				continue
			}
			f.fill(t, v.Field(i), path+"."+sf.Name)
		}
	default:
		t.Fatalf("%s: a field of kind %s: teach this test to fill it", path, v.Kind())
	}
}

// fieldDiffs names the leaves where got differs from want.
func fieldDiffs(want, got reflect.Value, path string) []string {
	if want.Type() == timeType {
		if !want.Interface().(time.Time).Equal(got.Interface().(time.Time)) {
			return []string{path}
		}
		return nil
	}
	if want.Type() == rawType {
		var w, g bytes.Buffer
		_ = json.Compact(&w, want.Bytes())
		_ = json.Compact(&g, got.Bytes())
		if !bytes.Equal(w.Bytes(), g.Bytes()) {
			return []string{path}
		}
		return nil
	}
	switch want.Kind() {
	case reflect.Pointer:
		if got.IsNil() {
			return []string{path}
		}
		return fieldDiffs(want.Elem(), got.Elem(), path)
	case reflect.Struct:
		var out []string
		for i := range want.NumField() {
			if sf := want.Type().Field(i); sf.IsExported() && sf.Tag.Get("json") != "-" {
				out = append(out, fieldDiffs(want.Field(i), got.Field(i), path+"."+sf.Name)...)
			}
		}
		return out
	}
	if !reflect.DeepEqual(want.Interface(), got.Interface()) {
		return []string{path}
	}
	return nil
}
