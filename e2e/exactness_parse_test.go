package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The two ways a downstream server reads a tools/call, used by the
// exactness tests to check that whatever toolgate forwards reads the same
// to both, and the same as what toolgate decided:
//   - goView: encoding/json into a struct, as a Go server does (field
//     names match case-insensitively; of duplicate keys the last wins);
//   - exactView: keys exactly as written, of duplicates the first wins
//     (as some JSON readers do), numbers as their literal text.

// callView is a tools/call as one reader understood it.
type callView struct {
	Method string
	Name   string
	// Args is the arguments decoded with numbers as json.Number (nil when
	// absent or not an object).
	Args map[string]any
}

// goView reads a JSON-RPC message as a Go server's structs do.
func goView(msg []byte) (callView, error) {
	var env struct {
		Method string `json:"method"`
		Params struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		} `json:"params"`
	}
	dec := json.NewDecoder(bytes.NewReader(msg))
	dec.UseNumber()
	if err := dec.Decode(&env); err != nil {
		return callView{}, err
	}
	return callView{Method: env.Method, Name: env.Params.Name, Args: env.Params.Arguments}, nil
}

// exactView reads a JSON-RPC message with exact keys, first wins.
func exactView(msg []byte) (callView, error) {
	v, err := decodeFirstWins(msg)
	if err != nil {
		return callView{}, err
	}
	env, _ := v.(map[string]any)
	params, _ := env["params"].(map[string]any)
	var cv callView
	cv.Method, _ = env["method"].(string)
	cv.Name, _ = params["name"].(string)
	cv.Args, _ = params["arguments"].(map[string]any)
	return cv, nil
}

// decodeFirstWins decodes one JSON value with keys exactly as written,
// keeping the first of duplicate keys, and numbers as json.Number.
func decodeFirstWins(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := firstWinsValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

func firstWinsValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			m := map[string]any{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key %v", kt)
				}
				v, err := firstWinsValue(dec)
				if err != nil {
					return nil, err
				}
				if _, dup := m[k]; !dup {
					m[k] = v
				}
			}
			_, err := dec.Token() // '}'
			return m, err
		case '[':
			a := []any{}
			for dec.More() {
				v, err := firstWinsValue(dec)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := dec.Token() // ']'
			return a, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil
	}
}
