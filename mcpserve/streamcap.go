package mcpserve

import (
	"fmt"
	"sync"
)

// StreamCaps counts the long-lived streams of one process — 2026-07-28
// subscriptions/listen streams and 2025 GET (SSE) streams, on every
// surface and transport — against a cap per agent and a cap for the
// process (gateway.streams). Each open stream holds a connection and a
// goroutine until one side closes it, so without a cap one agent could
// hold them without end. One StreamCaps serves the whole process; it is
// safe for concurrent use.
type StreamCaps struct {
	perAgent, total int

	mu   sync.Mutex
	open map[string]int
	n    int
}

// NewStreamCaps returns the counter for caps perAgent and total (0: no
// bound of that kind).
func NewStreamCaps(perAgent, total int) *StreamCaps {
	return &StreamCaps{perAgent: perAgent, total: total, open: map[string]int{}}
}

// StreamCapError refuses a stream over a cap; it names the workspace field
// and its value, so the message says what to change.
type StreamCapError struct {
	// Agent is whose stream was refused.
	Agent string
	// Field is the cap reached: gateway.streams.max_per_agent or
	// gateway.streams.max_total.
	Field string
	// Max is the cap's value.
	Max int
}

// The caps a StreamCapError names.
const (
	FieldStreamsPerAgent = "gateway.streams.max_per_agent"
	FieldStreamsTotal    = "gateway.streams.max_total"
)

func (e *StreamCapError) Error() string {
	if e.Field == FieldStreamsTotal {
		return fmt.Sprintf("too many open streams in this gateway (the cap is %s = %d): close a subscriptions/listen or GET stream, or raise the cap", e.Field, e.Max)
	}
	return fmt.Sprintf("too many open streams for agent %q (the cap is %s = %d): close one of its subscriptions/listen or GET streams first", e.Agent, e.Field, e.Max)
}

// Take reserves a stream for agent. release gives it back (calling it
// again does nothing); err is a *StreamCapError over a cap.
func (c *StreamCaps) Take(agent string) (release func(), err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.perAgent > 0 && c.open[agent] >= c.perAgent:
		return nil, &StreamCapError{Agent: agent, Field: FieldStreamsPerAgent, Max: c.perAgent}
	case c.total > 0 && c.n >= c.total:
		return nil, &StreamCapError{Agent: agent, Field: FieldStreamsTotal, Max: c.total}
	}
	c.open[agent]++
	c.n++
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.n--
			if c.open[agent]--; c.open[agent] <= 0 {
				delete(c.open, agent)
			}
		})
	}, nil
}

// Open reports how many streams agent holds, and the process in total.
func (c *StreamCaps) Open(agent string) (agents, total int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open[agent], c.n
}

// For is agent's view of the caps, what an Endpoint or a stdio instance
// serving that agent takes its streams from.
func (c *StreamCaps) For(agent string) StreamSlots {
	if c == nil {
		return nil
	}
	return func() (func(), error) { return c.Take(agent) }
}

// StreamSlots reserves one long-lived stream of one agent (StreamCaps.For);
// nil means unbounded.
type StreamSlots func() (release func(), err error)

// take reserves a stream; with no slots configured it always succeeds.
func (s StreamSlots) take() (func(), error) {
	if s == nil {
		return func() {}, nil
	}
	return s()
}

// isStream reports whether a request opens a long-lived stream that
// counts against the caps.
func isStream(method string) bool { return method == "subscriptions/listen" }
