package ticketd

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
)

// LeaseAnswer is a worker-ID lease as ticketd answers it.
type LeaseAnswer struct {
	Pool     string `json:"pool"`
	WorkerID int    `json:"workerId"`
	// Epoch tells this lease of the worker ID from every other one (a decimal string).
	Epoch  string `json:"epoch"`
	Holder string `json:"holder"`
	// ExpiresInMs is how long the lease runs from when the server granted or renewed it, by the server's clock.
	ExpiresInMs float64 `json:"expiresInMs"`
	// ServerTimeMs is the server's clock when it answered, in Unix milliseconds.
	ServerTimeMs float64 `json:"serverTimeMs"`
	// HighWaterMs: every earlier holder of the worker ID used only timestamps at or below this one.
	HighWaterMs int64   `json:"highWaterMs"`
	WorkerBits  int     `json:"workerBits"`
	TTLMs       float64 `json:"ttlMs"`
	MaxSkewMs   float64 `json:"maxSkewMs"`
}

// LeaseRequests are a worker pool's lease routes. The client's own speaks HTTP to ticketd; tests
// pass their own in SnowflakeOptions.LeaseRequests.
type LeaseRequests interface {
	// Take takes a free worker ID of the pool.
	Take(ctx context.Context, holder string) (LeaseAnswer, error)
	// Renew extends the lease; skewMs (when not nil) reports the skew measured at the last renewal.
	Renew(ctx context.Context, workerID int, epoch string, skewMs *int64) (LeaseAnswer, error)
	// Release ends the lease: nothing after lastUsedMs was issued on it.
	Release(ctx context.Context, workerID int, epoch string, lastUsedMs int64) error
}

// httpLeaseRequests are the lease routes of one pool over HTTP; the URL that answered last is where the next call starts.
type httpLeaseRequests struct {
	urls      []string
	pool      string
	t         *transport
	mu        sync.Mutex
	preferred int
}

func (r *httpLeaseRequests) Take(ctx context.Context, holder string) (LeaseAnswer, error) {
	return r.post(ctx, "leases", map[string]interface{}{"holder": holder}, "no ticketd leased a worker ID of pool "+r.pool)
}

func (r *httpLeaseRequests) Renew(ctx context.Context, workerID int, epoch string, skewMs *int64) (LeaseAnswer, error) {
	body := map[string]interface{}{"epoch": epoch}
	if skewMs != nil {
		body["skewMs"] = *skewMs
	}
	return r.post(ctx, fmt.Sprintf("leases/%d/renew", workerID), body, fmt.Sprintf("no ticketd renewed worker %d of pool %s", workerID, r.pool))
}

func (r *httpLeaseRequests) Release(ctx context.Context, workerID int, epoch string, lastUsedMs int64) error {
	_, err := r.post(ctx, fmt.Sprintf("leases/%d/release", workerID), map[string]interface{}{"epoch": epoch, "lastUsedMs": lastUsedMs}, fmt.Sprintf("no ticketd released worker %d of pool %s", workerID, r.pool))
	return err
}

func (r *httpLeaseRequests) post(ctx context.Context, path string, body map[string]interface{}, failure string) (LeaseAnswer, error) {
	target := "/v1/worker-pools/" + url.PathEscape(r.pool) + "/" + path
	var answer LeaseAnswer
	ask := func(base string) (attempt, error) {
		answer = LeaseAnswer{}
		return r.t.getJSON(ctx, "POST", base+target, body, &answer, nil)
	}
	r.mu.Lock()
	start := r.preferred
	r.mu.Unlock()
	index, err := askInTurn(ctx, r.urls, start, failure, ask)
	if err != nil {
		return LeaseAnswer{}, err
	}
	r.mu.Lock()
	r.preferred = index
	r.mu.Unlock()
	return answer, nil
}

// leaseIsLost reports whether ticketd answered that the lease is gone (TICKETD_LEASE_LOST), not that it was out of reach.
func leaseIsLost(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == CodeLeaseFailed && e.HasCode("TICKETD_LEASE_LOST")
}

// retryable reports whether a failed take may succeed later: a lease failure whose last URL failed
// on the network or answered with a 5xx (a full pool, backends down).
func retryable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == CodeLeaseFailed && e.Retryable
}
