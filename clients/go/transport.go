package ticketd

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultTimeout is the per-request timeout when the options give none.
const DefaultTimeout = 2 * time.Second

// attempt is what one URL answered: a usable answer, or why not and whether another URL would
// answer the same (final: a 4xx, the same everywhere).
type attempt struct {
	ok    bool
	err   string
	final bool
	code  string
}

// transport makes one client's requests: its token, timeout and kept-alive connections.
type transport struct {
	http    *http.Client
	token   string
	timeout time.Duration
}

func newTransport(token string, timeout time.Duration, tlsConfig *tls.Config) *transport {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	base := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     tlsConfig,
		MaxIdleConnsPerHost: 16,
		// Below Node's keep-alive timeout (5 s): a connection ticketd is about to close is not reused.
		IdleConnTimeout:     4 * time.Second,
		TLSHandshakeTimeout: timeout,
		ForceAttemptHTTP2:   false,
	}
	return &transport{http: &http.Client{Transport: base}, token: token, timeout: timeout}
}

func (t *transport) withTimeout(timeout time.Duration) *transport {
	return &transport{http: t.http, token: t.token, timeout: timeout}
}

func (t *transport) close() {
	t.http.CloseIdleConnections()
}

// request sends one request and reads its answer. A kept-alive connection the server closed while
// idle fails without an answer: that is retried once on a new connection (a lease repeated that way
// only leaves a gap, never a duplicate).
func (t *transport) request(ctx context.Context, method, url string, body interface{}) (int, string, []byte, error) {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return 0, "", nil, err
		}
	}
	for try := 0; ; try++ {
		status, reason, answer, reused, err := t.once(ctx, method, url, payload)
		if err != nil && reused && try == 0 && ctx.Err() == nil && stale(err) {
			continue
		}
		return status, reason, answer, err
	}
}

func (t *transport) once(ctx context.Context, method, url string, payload []byte) (int, string, []byte, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	reused := false
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused }})
	var reader io.Reader
	if payload != nil {
		reader = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, reader)
	if err != nil {
		return 0, "", nil, false, err
	}
	req.Header.Set("Accept", "application/json")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if t.token != "" {
		req.Header.Set("Authorization", "Bearer "+t.token)
	}
	res, err := t.http.Do(req)
	if err != nil {
		return 0, "", nil, reused, err
	}
	defer res.Body.Close()
	answer, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, "", nil, reused, err
	}
	return res.StatusCode, strings.TrimPrefix(res.Status, strconv.Itoa(res.StatusCode)+" "), answer, reused, nil
}

func stale(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// problem is the part of an application/problem+json body the client reads.
type problem struct {
	Title  *string `json:"title"`
	Detail *string `json:"detail"`
	Code   *string `json:"code"`
}

// getJSON decodes a 200's JSON body into out when complete accepts it; otherwise it says why, from
// the status and the problem's title and detail.
func (t *transport) getJSON(ctx context.Context, method, url string, body, out interface{}, complete func() bool) (attempt, error) {
	status, reason, payload, err := t.request(ctx, method, url, body)
	if err != nil {
		return attempt{}, err
	}
	if status == 200 && json.Unmarshal(payload, out) == nil && (complete == nil || complete()) {
		return attempt{ok: true}, nil
	}
	var p problem
	isJSON := json.Unmarshal(payload, &p) == nil
	title, detail, code := reason, "", ""
	if isJSON {
		if p.Title != nil {
			title = *p.Title
		}
		if p.Detail != nil {
			detail = *p.Detail
		}
		if p.Code != nil {
			code = *p.Code
		}
	} else {
		text := string(payload)
		if len(text) > 80 {
			text = text[:80]
		}
		detail = fmt.Sprintf("not JSON: %q", text)
	}
	why := fmt.Sprintf("%d %s", status, title)
	if detail != "" {
		why += ": " + detail
	}
	// A 4xx (unknown sequence, bad name, exhausted, no token, retired) is the same everywhere: do not fail over.
	return attempt{err: why, final: status < 500, code: code}, nil
}

// askInTurn asks the URLs in turn from start, each once, until one answers: a final refusal (a 4xx)
// stops, a 5xx, a network error or an answer this client cannot use moves on. It returns the index
// of the URL that answered, or a CodeLeaseFailed error naming every URL's reason.
func askInTurn(ctx context.Context, urls []string, start int, failure string, ask func(url string) (attempt, error)) (int, error) {
	var reasons, codes []string
	retryable := false
	for k := range urls {
		index := (start + k) % len(urls)
		url := urls[index]
		answer, err := ask(url)
		if err != nil {
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			reasons = append(reasons, url+": "+networkReason(err))
			retryable = true
			continue
		}
		if answer.ok {
			return index, nil
		}
		reasons = append(reasons, url+": "+answer.err)
		retryable = !answer.final
		if answer.code != "" {
			codes = append(codes, answer.code)
		}
		if answer.final {
			break
		}
	}
	return 0, leaseFailed(failure, reasons, codes, retryable)
}

// networkReason says why a request got no answer, with a hint for the errors a newcomer meets first.
func networkReason(err error) string {
	var netErr net.Error
	var dnsErr *net.DNSError
	var clientErr *Error
	switch {
	case errors.As(err, &clientErr):
		return clientErr.Error()
	case errors.Is(err, syscall.ECONNREFUSED):
		return err.Error() + " (nothing listens there: is ticketd running on that port?)"
	case errors.As(err, &dnsErr):
		return err.Error() + " (no such host, or it could not be resolved now)"
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		return "no answer in time (timeout)"
	case stale(err):
		return err.Error() + " (the connection was closed while asking)"
	}
	return err.Error()
}

// wireID is an ID as ticketd sends it: a decimal string (or a number) up to 2^64 - 1.
type wireID uint64

// UnmarshalJSON accepts "123" and 123.
func (w *wireID) UnmarshalJSON(data []byte) error {
	text := strings.Trim(string(data), `"`)
	v, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		return fmt.Errorf("not an ID: %s", data)
	}
	*w = wireID(v)
	return nil
}

func trimURLs(urls []string) []string {
	out := make([]string, len(urls))
	for k, u := range urls {
		out[k] = strings.TrimRight(u, "/")
	}
	return out
}
