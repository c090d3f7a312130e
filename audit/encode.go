package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/toolgate/toolgate/strictjson"
)

// appendEvent appends the JSON of ev without its hash field: byte for byte
// what encoding/json writes for an Event (field order, omitempty, no HTML
// escaping, time as RFC 3339 with nanoseconds, raw approval compacted),
// without reflection — the audit line is written twice per call, and
// encoding/json was a tenth of the gateway's CPU per call. encode_test.go
// holds encoding/json as the oracle.
func appendEvent(dst []byte, ev *Event) ([]byte, error) {
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendInt(dst, ev.Seq, 10)
	dst = append(dst, `,"time":"`...)
	var err error
	if dst, err = ev.Time.AppendText(dst); err != nil {
		return nil, fmt.Errorf("encode audit event: time: %w", err)
	}
	dst = append(dst, `","agent":`...)
	dst = strictjson.AppendStringNoHTML(dst, ev.Agent)
	dst = append(dst, `,"action":`...)
	dst = strictjson.AppendStringNoHTML(dst, ev.Action)
	dst = append(dst, `,"decision":`...)
	dst = strictjson.AppendStringNoHTML(dst, ev.Decision)
	dst = append(dst, `,"reason":`...)
	dst = strictjson.AppendStringNoHTML(dst, ev.Reason)
	dst = append(dst, `,"tier":`...)
	dst = strictjson.AppendStringNoHTML(dst, ev.Tier)
	dst = append(dst, `,"payload":{"provider":`...)
	dst = strictjson.AppendStringNoHTML(dst, ev.Payload.Provider)
	dst = append(dst, `,"container":`...)
	dst = strictjson.AppendStringNoHTML(dst, ev.Payload.Container)
	dst = append(dst, `,"member":`...)
	dst = strictjson.AppendStringNoHTML(dst, ev.Payload.Member)
	dst = append(dst, `,"effects":`...)
	dst = strictjson.AppendStringNoHTML(dst, ev.Payload.Effects)
	dst = append(dst, `},"args_sha256":`...)
	dst = strictjson.AppendStringNoHTML(dst, ev.ArgsSHA256)
	if len(ev.Arguments) > 0 {
		dst = append(dst, `,"arguments":`...)
		if dst, err = appendRaw(dst, ev.Arguments); err != nil {
			return nil, fmt.Errorf("encode audit event: arguments: %w", err)
		}
	}
	if len(ev.Argv) > 0 {
		dst = append(dst, `,"argv":[`...)
		for i, a := range ev.Argv {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = strictjson.AppendStringNoHTML(dst, a)
		}
		dst = append(dst, ']')
	}
	if ev.Exit != nil {
		dst = append(dst, `,"exit":`...)
		dst = strconv.AppendInt(dst, int64(*ev.Exit), 10)
	}
	if ev.DurationMS != nil {
		dst = append(dst, `,"duration_ms":`...)
		dst = strconv.AppendInt(dst, *ev.DurationMS, 10)
	}
	if ev.OutputBytes != nil {
		dst = append(dst, `,"output_bytes":`...)
		dst = strconv.AppendInt(dst, *ev.OutputBytes, 10)
	}
	if ev.Truncated != nil {
		dst = append(dst, `,"truncated":`...)
		dst = strconv.AppendBool(dst, *ev.Truncated)
	}
	if ev.Error != "" {
		dst = append(dst, `,"error":`...)
		dst = strictjson.AppendStringNoHTML(dst, ev.Error)
	}
	if ev.Of != nil {
		dst = append(dst, `,"of":`...)
		dst = strconv.AppendInt(dst, *ev.Of, 10)
	}
	if ev.Revision != "" {
		dst = append(dst, `,"revision":`...)
		dst = strictjson.AppendStringNoHTML(dst, ev.Revision)
	}
	if ev.TraceID != "" {
		dst = append(dst, `,"trace_id":`...)
		dst = strictjson.AppendStringNoHTML(dst, ev.TraceID)
	}
	dst = append(dst, `,"approval":`...)
	if dst, err = appendRaw(dst, ev.Approval); err != nil {
		return nil, fmt.Errorf("encode audit event: approval: %w", err)
	}
	if cp := ev.Checkpoint; cp != nil {
		dst = append(dst, `,"checkpoint":{"seq":`...)
		dst = strconv.AppendInt(dst, cp.Seq, 10)
		dst = append(dst, `,"hash":`...)
		dst = strictjson.AppendStringNoHTML(dst, cp.Hash)
		dst = append(dst, `,"key":`...)
		dst = strictjson.AppendStringNoHTML(dst, cp.Key)
		dst = append(dst, `,"sig":`...)
		dst = strictjson.AppendStringNoHTML(dst, cp.Sig)
		dst = append(dst, '}')
	}
	dst = append(dst, `,"prev":`...)
	dst = strictjson.AppendStringNoHTML(dst, ev.Prev)
	return append(dst, '}'), nil
}

// appendRaw appends raw JSON as encoding/json does for a json.RawMessage:
// null for nil, else the value compacted, and an error when it is not
// one valid JSON value.
func appendRaw(dst []byte, raw json.RawMessage) ([]byte, error) {
	if raw == nil {
		return append(dst, "null"...), nil
	}
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// encodeLine renders ev (whose Hash is ignored) as one audit line ending in a
// newline, and returns the line's hash. The hash covers exactly the bytes of
// the line up to its hash field, closed with "}".
func encodeLine(ev *Event) ([]byte, string, error) {
	// A call's event without its variable parts (time, seq, prev, agent,
	// action, revision, digests, payload) is ~550 bytes: one buffer.
	size := 640 + len(ev.Reason) + len(ev.Error) + len(ev.Approval) + len(ev.Arguments)
	for _, a := range ev.Argv {
		size += len(a) + 3
	}
	body, err := appendEvent(make([]byte, 0, size+hashSuffixLen), ev)
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(body)
	var hexSum [2 * sha256.Size]byte
	hex.Encode(hexSum[:], sum[:])
	line := append(body[:len(body)-1], hashField...)
	line = append(line, hexSum[:]...)
	line = append(line, "\"}\n"...)
	return line, string(hexSum[:]), nil
}
