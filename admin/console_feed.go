package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/audit"
)

// Feed timings: how often the audit file is polled for new events, how
// long one write may take, and the keep-alive ping interval.
const (
	feedPoll         = 200 * time.Millisecond
	feedWriteTimeout = 10 * time.Second
	feedPing         = 30 * time.Second
	feedBacklog      = 50
)

// FeedMessage is one message of the console's websocket: the pending
// approvals of the whole deployment (whenever they change in the shared
// store), one audit event (as it is appended, by this process or any other
// of the deployment: the file, or the PostgreSQL chain), or an error.
type FeedMessage struct {
	Type    string              `json:"type"`
	Pending []approvals.Request `json:"pending,omitempty"`
	Event   *audit.Event        `json:"event,omitempty"`
	Error   string              `json:"error,omitempty"`
}

// consoleFeed upgrades to a websocket and streams FeedMessages. Query
// parameters agent and decision filter the audit events.
func (s *Server) consoleFeed(w http.ResponseWriter, r *http.Request) {
	up := websocket.Upgrader{CheckOrigin: func(r *http.Request) bool {
		if o := r.Header.Get("Origin"); o != "" {
			for _, a := range s.opts.AllowedOrigins {
				if strings.EqualFold(a, o) {
					return true
				}
			}
		}
		return sameOrigin(r)
	}}
	conn, err := up.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade has answered
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		// The console sends nothing; reading notices the close.
		for {
			if _, _, err := conn.ReadMessage(); err != nil {
				cancel()
				return
			}
		}
	}()

	changed, unsubscribe := s.opts.Approvals.Subscribe()
	defer unsubscribe()
	events := make(chan audit.Event)
	tailErr := make(chan error, 1)
	filter := audit.Filter{Agent: r.URL.Query().Get("agent"), Decision: r.URL.Query().Get("decision")}
	go func() {
		tailErr <- s.opts.Audit.Tail(ctx, audit.TailOptions{Filter: filter, Last: feedBacklog, Follow: true, Poll: feedPoll}, func(rec audit.Record) error {
			select {
			case events <- rec.Event:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	ping := time.NewTicker(feedPing)
	defer ping.Stop()

	send := func(m FeedMessage) bool {
		_ = conn.SetWriteDeadline(time.Now().Add(feedWriteTimeout))
		return conn.WriteJSON(m) == nil
	}
	// The store wakes its watchers on any change (and, embedded, on the
	// first look after a quiet spell): the list is sent when it differs
	// from the one the console has.
	var sent []byte
	sendPending := func() bool {
		pending, err := s.opts.Approvals.PendingContext(ctx)
		if err != nil {
			sent = nil
			return send(FeedMessage{Type: "error", Error: "the shared store did not answer: " + err.Error()})
		}
		b, _ := json.Marshal(pending)
		if sent != nil && bytes.Equal(b, sent) {
			return true
		}
		sent = b
		return send(FeedMessage{Type: "approvals", Pending: nonNil(pending)})
	}
	if !sendPending() {
		return
	}
	for {
		var ok bool
		select {
		case <-ctx.Done():
			_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "gateway stopping"), time.Now().Add(time.Second))
			return
		case <-changed:
			ok = sendPending()
		case ev := <-events:
			ok = send(FeedMessage{Type: "event", Event: &ev})
		case err := <-tailErr:
			if err == nil || ctx.Err() != nil {
				return
			}
			ok = send(FeedMessage{Type: "error", Error: "audit feed stopped: " + err.Error()})
			tailErr = nil
		case <-ping.C:
			ok = conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(feedWriteTimeout)) == nil
		}
		if !ok {
			return
		}
	}
}
