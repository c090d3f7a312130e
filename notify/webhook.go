// Package notify tells people that a call waits for them: a webhook
// (gateway.approvals.notify.webhook) receives a JSON event each time a
// call is held for approval. Delivery never blocks the call — events go
// through a bounded queue to background senders, each attempt is bounded
// in time, failures are retried with backoff and, when they run out,
// reported to the caller's OnFailure (the gateway audits them).
//
// Trust boundary: what leaves the process is chosen here. The argument
// preview is redacted (package redact) after it is cut to size, so a
// credential cut at the edge is caught too; header values (secrets) and
// the URL's path and query are never logged nor audited, only its origin.
package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/redact"
)

// Defaults of Options.
const (
	DefaultAttempts   = 5
	DefaultTimeout    = 5 * time.Second
	DefaultBackoff    = 500 * time.Millisecond
	MaxBackoff        = 30 * time.Second
	DefaultQueue      = 256
	DefaultSenders    = 2
	MaxPreviewBytes   = 1024
	maxResponseBytes  = 4 << 10
	eventTypeHeld     = "approval.held"
	eventContentType  = "application/json"
	eventUserAgent    = "toolgate-notify/1"
	eventTypeHeader   = "X-Toolgate-Event"
	deliveryIDHeader  = "X-Toolgate-Delivery"
	previewCutMarker  = "…"
	failurePermanent  = "permanent"
	failureExhausted  = "exhausted"
	failureQueueFull  = "queue-full"
	failureShutdown   = "shutdown"
	failureBadRequest = "bad-request"
)

// Event is the JSON body POSTed for one held call.
type Event struct {
	Type   string `json:"type"`
	ID     string `json:"id"`
	Agent  string `json:"agent"`
	Action string `json:"action"`
	// Arguments is a preview of the call's arguments (compact JSON text,
	// at most MaxPreviewBytes, then "…"), every credential redacted.
	Arguments string    `json:"arguments"`
	Truncated bool      `json:"arguments_truncated,omitempty"`
	Argv      []string  `json:"argv,omitempty"`
	Tier      string    `json:"tier"`
	Reason    string    `json:"reason"`
	Created   time.Time `json:"created"`
	Expires   time.Time `json:"expires"`
	// Approve and Deny are the commands an operator runs.
	Approve string `json:"approve"`
	Deny    string `json:"deny"`
}

// Failure is a delivery that did not succeed, for the audit.
type Failure struct {
	Event    Event
	Attempts int
	// Kind is permanent (the receiver refused it: 4xx), exhausted (every
	// attempt failed), queue-full (too many undelivered events) or
	// shutdown (the gateway stopped first).
	Kind string
	// Err says why the last attempt failed; it names the receiver by its
	// origin only.
	Err string
}

// Options configure a Webhook.
type Options struct {
	// URL is where events are POSTed; Headers go with each (resolved
	// secrets).
	URL     string
	Headers map[string]string
	// Redactor redacts the argument preview, the reason and argv.
	Redactor *redact.Redactor
	// Approve renders the approve command of a request id (the gateway's
	// hint); Deny likewise.
	Approve, Deny func(id string) string
	// OnFailure is told of each event that could not be delivered.
	OnFailure func(Failure)
	// Attempts, Timeout (per attempt), Backoff (before the first retry,
	// doubling up to MaxBackoff), Queue and Senders take their defaults
	// when zero.
	Attempts int
	Timeout  time.Duration
	Backoff  time.Duration
	Queue    int
	Senders  int
	Client   *http.Client
	Logger   *slog.Logger
}

// Webhook delivers held-call events in the background.
type Webhook struct {
	opts   Options
	origin string
	queue  chan Event
	stop   chan struct{}
	wg     sync.WaitGroup
	once   sync.Once
}

// New checks opts and starts the senders; Close stops them.
func New(opts Options) (*Webhook, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("notify webhook: %q is not an http(s) URL", opts.URL)
	}
	if opts.Attempts <= 0 {
		opts.Attempts = DefaultAttempts
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Backoff <= 0 {
		opts.Backoff = DefaultBackoff
	}
	if opts.Queue <= 0 {
		opts.Queue = DefaultQueue
	}
	if opts.Senders <= 0 {
		opts.Senders = DefaultSenders
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Redactor == nil {
		opts.Redactor = redact.New(nil)
	}
	if opts.Client == nil {
		// Redirects are not followed: the headers (secrets) go to the
		// configured URL only.
		opts.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	w := &Webhook{opts: opts, origin: u.Scheme + "://" + u.Host, queue: make(chan Event, opts.Queue), stop: make(chan struct{})}
	for range opts.Senders {
		w.wg.Add(1)
		go w.send()
	}
	return w, nil
}

// Held queues the event of request r, never waiting: with the queue full
// the event is dropped and reported as a failure.
func (w *Webhook) Held(r approvals.Request) {
	ev := w.event(r)
	select {
	case <-w.stop:
		w.fail(Failure{Event: ev, Kind: failureShutdown, Err: "the gateway is stopping"})
	case w.queue <- ev:
	default:
		w.fail(Failure{Event: ev, Kind: failureQueueFull, Err: fmt.Sprintf("%d events are waiting for %s already", cap(w.queue), w.origin)})
	}
}

// event renders r for the receiver, redacted.
func (w *Webhook) event(r approvals.Request) Event {
	red := w.opts.Redactor
	ev := Event{
		Type: eventTypeHeld, ID: r.ID, Agent: r.Agent, Action: r.Action, Tier: r.Tier,
		Reason: red.Redact(r.Reason), Created: r.Created.UTC(), Expires: r.Expires.UTC(),
	}
	ev.Arguments, ev.Truncated = preview(red, r.Arguments)
	for _, a := range r.Argv {
		ev.Argv = append(ev.Argv, red.Redact(a))
	}
	if w.opts.Approve != nil {
		ev.Approve = w.opts.Approve(r.ID)
	}
	if w.opts.Deny != nil {
		ev.Deny = w.opts.Deny(r.ID)
	}
	return ev
}

// preview is the arguments as compact JSON text, cut at MaxPreviewBytes
// and redacted after the cut, so a credential straddling the cut is
// caught by its edge fragment.
func preview(red *redact.Redactor, args json.RawMessage) (string, bool) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, args); err != nil {
		buf.Reset()
		buf.Write(args)
	}
	s := buf.String()
	if len(s) <= MaxPreviewBytes {
		return red.Redact(s), false
	}
	cut := MaxPreviewBytes
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return red.Cut(s[:cut], false, true) + previewCutMarker, true
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// Close stops the senders; events not yet delivered are reported as
// failures of kind shutdown.
func (w *Webhook) Close() {
	w.once.Do(func() {
		close(w.stop)
		w.wg.Wait()
		for {
			select {
			case ev := <-w.queue:
				w.fail(Failure{Event: ev, Kind: failureShutdown, Err: "the gateway stopped before it was delivered"})
			default:
				return
			}
		}
	})
}

func (w *Webhook) send() {
	defer w.wg.Done()
	for {
		select {
		case <-w.stop:
			return
		case ev := <-w.queue:
			w.deliver(ev)
		}
	}
}

// deliver POSTs ev until it is accepted (2xx), refused (another 4xx than
// 408 and 429: no retry) or the attempts run out, waiting Backoff,
// doubled each time, between attempts.
func (w *Webhook) deliver(ev Event) {
	body, err := json.Marshal(ev)
	if err != nil {
		w.fail(Failure{Event: ev, Kind: failureBadRequest, Err: err.Error()})
		return
	}
	wait := w.opts.Backoff
	var last string
	for attempt := 1; attempt <= w.opts.Attempts; attempt++ {
		retry, err := w.post(body, ev.ID, attempt)
		if err == nil {
			w.opts.Logger.Debug("approval webhook delivered", "approval", ev.ID, "attempt", attempt)
			return
		}
		last = err.Error()
		if !retry {
			w.fail(Failure{Event: ev, Attempts: attempt, Kind: failurePermanent, Err: last})
			return
		}
		if attempt == w.opts.Attempts {
			break
		}
		t := time.NewTimer(wait)
		select {
		case <-w.stop:
			t.Stop()
			w.fail(Failure{Event: ev, Attempts: attempt, Kind: failureShutdown, Err: last})
			return
		case <-t.C:
		}
		wait = min(2*wait, MaxBackoff)
	}
	w.fail(Failure{Event: ev, Attempts: w.opts.Attempts, Kind: failureExhausted, Err: last})
}

// post makes one attempt; retry says whether another may succeed.
func (w *Webhook) post(body []byte, id string, attempt int) (retry bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), w.opts.Timeout)
	defer cancel()
	go func() {
		select {
		case <-w.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.opts.URL, bytes.NewReader(body))
	if err != nil {
		return false, fmt.Errorf("POST %s: %v", w.origin, err)
	}
	for k, v := range w.opts.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", eventContentType)
	req.Header.Set("User-Agent", eventUserAgent)
	req.Header.Set(eventTypeHeader, eventTypeHeld)
	req.Header.Set(deliveryIDHeader, fmt.Sprintf("%s-%d", id, attempt))
	resp, err := w.opts.Client.Do(req)
	if err != nil {
		// The error may quote the whole URL: name the origin only.
		return true, fmt.Errorf("POST %s: %s", w.origin, transportError(ctx, err))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBytes))
	resp.Body.Close()
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
		return false, nil
	case c == http.StatusRequestTimeout || c == http.StatusTooManyRequests || c >= 500:
		return true, fmt.Errorf("POST %s: HTTP %d", w.origin, c)
	default:
		return false, fmt.Errorf("POST %s: HTTP %d (not retried: the receiver refused the event)", w.origin, c)
	}
}

// transportError says why a request failed without its URL.
func transportError(ctx context.Context, err error) string {
	if ctx.Err() == context.DeadlineExceeded {
		return "no answer within the attempt's timeout"
	}
	if ue, ok := err.(*url.Error); ok {
		return ue.Err.Error()
	}
	return err.Error()
}

func (w *Webhook) fail(f Failure) {
	w.opts.Logger.Warn("approval webhook not delivered", "approval", f.Event.ID, "kind", f.Kind, "attempts", f.Attempts, "err", f.Err)
	if w.opts.OnFailure != nil {
		w.opts.OnFailure(f)
	}
}
