//go:build !linux

package state

// fileEvents is unavailable here: the embedded store polls instead.
func fileEvents(string) (<-chan struct{}, func(), bool) { return nil, nil, false }
