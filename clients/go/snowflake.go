package ticketd

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"time"
)

// Snowflake mints Snowflake IDs (milliseconds since the epoch, worker ID, sequence) on a worker ID
// leased from ticketd; safe for concurrent use. Two rules keep IDs unique: only while a lease is
// held, judged on the monotonic clock from when it was asked for (so a process paused past its TTL
// finds its lease over when it wakes), does it open a new millisecond, and only milliseconds above
// the lease's high-water mark and above every one it opened before; and its clock must stay within
// the pool's maxSkewMs of the server's. Close it when done: that releases the lease.
type Snowflake struct {
	layout      SnowflakeLayout
	epochMs     int64
	maxStepBack float64
	leaseWait   time.Duration
	pool        string
	clock       Clock
	emit        func(SnowflakeEvent)
	t           *transport
	life        context.Context
	cancel      context.CancelFunc
	keeper      *leaseKeeper

	// Guarded by mu (the keeper's state too): the millisecond opened last, the next ID in it, the end of its sequence.
	mu           sync.Mutex
	ms           int64
	next         uint64
	end          uint64
	backReported bool
}

// NewSnowflake makes a generator; the lease is taken by Ready or the first Next. It fails with
// CodeNoLease when no URL is given, CodeSnowflakeLayout for a layout that does not check.
func NewSnowflake(options SnowflakeOptions) (*Snowflake, error) {
	if len(options.URLs) == 0 && options.LeaseRequests == nil {
		return nil, newError(CodeNoLease, "a Snowflake generator needs at least one ticketd URL")
	}
	layout := options.Layout.orDefault()
	if err := layout.Check(); err != nil {
		return nil, err
	}
	s := &Snowflake{layout: layout, epochMs: DefaultSnowflakeEpochMs, pool: options.Pool, clock: options.Clock, emit: options.OnEvent, ms: math.MinInt64}
	if !options.Epoch.IsZero() {
		s.epochMs = options.Epoch.UnixMilli()
	}
	s.maxStepBack = float64(DefaultMaxStepBack.Milliseconds())
	if options.MaxStepBack != 0 {
		s.maxStepBack = math.Max(0, float64(options.MaxStepBack)/float64(time.Millisecond))
	}
	s.leaseWait = options.LeaseWait
	if s.leaseWait == 0 {
		s.leaseWait = DefaultLeaseWait
	}
	if s.clock == nil {
		s.clock = SystemClock{}
	}
	if s.emit == nil {
		s.emit = func(SnowflakeEvent) {}
	}
	ratio := options.RenewAfterRatio
	if ratio <= 0 || ratio >= 1 {
		ratio = 1.0 / 3
	}
	holder := options.Holder
	if holder == "" {
		host, _ := os.Hostname()
		holder = fmt.Sprintf("%s/%d", host, os.Getpid())
	}
	s.t = newTransport(options.Token, options.Timeout, options.TLSConfig)
	s.life, s.cancel = context.WithCancel(context.Background())
	requests := options.LeaseRequests
	if requests == nil {
		requests = &httpLeaseRequests{urls: trimURLs(options.URLs), pool: options.Pool, t: s.t}
	}
	s.keeper = &leaseKeeper{
		requests: requests, holder: holder, workerBits: layout.WorkerBits, maxStepBack: s.maxStepBack,
		renewRatio: ratio, clock: s.clock, emit: s.emit, life: s.life, mu: &s.mu, ended: "no lease taken yet",
		onLeased: s.onLeased, onEnded: s.onEnded,
	}
	return s, nil
}

// Above the earlier holders' last millisecond, and above every one this generator opened (lock held).
func (s *Snowflake) onLeased(highWaterMs int64) {
	if highWaterMs > s.ms {
		s.ms = highWaterMs
	}
	s.end = s.next
}

// Nothing more on the lease that ended, not even in the millisecond open now (lock held).
func (s *Snowflake) onEnded() {
	s.end = s.next
}

// WorkerID is the worker ID held now, and whether one is held.
func (s *Snowflake) WorkerID() (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keeper.held == nil {
		return 0, false
	}
	return s.keeper.held.workerID, true
}

// SkewMs is the clock skew measured against the server at the last lease or renewal (this clock
// minus the server's), and whether one was measured.
func (s *Snowflake) SkewMs() (float64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keeper.skewMs == nil {
		return 0, false
	}
	return *s.keeper.skewMs, true
}

// Layout is the generator's layout.
func (s *Snowflake) Layout() SnowflakeLayout { return s.layout }

// Decompose takes an ID apart by this generator's layout and epoch.
func (s *Snowflake) Decompose(id uint64) SnowflakeParts {
	return Decompose(id, s.layout, s.epochMs)
}

// Ready takes a lease (once) and returns when IDs can be issued. It waits up to LeaseWait, trying
// again every RetakeDelay while the failure may pass (network, 5xx, a full pool); it fails with
// CodeNoLease (its Cause the last lease failure) when the wait ends, or at once with a 4xx's
// CodeLeaseFailed, CodeSnowflakeLayout, CodeClockSkew or CodeClockBack.
func (s *Snowflake) Ready(ctx context.Context) error {
	began := time.Now()
	for {
		err := s.keeper.take(ctx)
		s.mu.Lock()
		held := s.keeper.held != nil
		closed := s.keeper.closed
		s.mu.Unlock()
		if closed {
			return newError(CodeNoLease, "generator is closed")
		}
		if err == nil && held {
			return nil
		}
		if err != nil && (ctx.Err() != nil || !retryable(err)) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		left := s.leaseWait - time.Since(began)
		if s.leaseWait < 0 || left <= 0 {
			last := "the lease taken ended at once"
			if err != nil {
				last = err.Error()
			}
			return &Error{Code: CodeNoLease, Message: fmt.Sprintf("no lease of a worker ID of pool %s within %d ms (LeaseWait): %s", s.pool, s.leaseWait.Milliseconds(), last), Cause: err}
		}
		if err == nil {
			continue
		}
		pause := RetakeDelay
		if left < pause {
			pause = left
		}
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Next returns the next ID. It waits for a lease whenever none is usable (not taken yet, lost, or
// run out during a pause: that one is ended first and nothing more is minted on it), as Ready
// does, and for small clock steps back. It fails with CodeClockBack, CodeClockSkew, CodeNoLease
// (no lease within LeaseWait) or ctx's error.
func (s *Snowflake) Next(ctx context.Context) (uint64, error) {
	now := s.clock.WallMs()
	s.mu.Lock()
	if now == s.ms && s.next < s.end {
		id := s.next
		s.next++
		s.mu.Unlock()
		return id, nil
	}
	s.mu.Unlock()
	for {
		s.mu.Lock()
		held := s.keeper.held != nil
		s.mu.Unlock()
		if !held {
			if err := s.Ready(ctx); err != nil {
				return 0, err
			}
			now = s.clock.WallMs()
		}
		s.mu.Lock()
		id, wait, err := s.issueLocked(now)
		s.mu.Unlock()
		if err != nil {
			if errors.Is(err, errRanOut) {
				continue
			}
			return 0, err
		}
		if wait == 0 {
			return id, nil
		}
		select {
		case <-time.After(time.Duration(wait) * time.Millisecond):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		now = s.clock.WallMs()
	}
}

// NextNow returns the next ID without waiting for a lease (a small step back is spun out). With no
// usable lease it fails with CodeNoLease at once and starts taking a new one in the background;
// also CodeClockBack, CodeClockSkew (Node's nextSync()).
func (s *Snowflake) NextNow() (uint64, error) {
	now := s.clock.WallMs()
	s.mu.Lock()
	defer s.mu.Unlock()
	if now == s.ms && s.next < s.end {
		id := s.next
		s.next++
		return id, nil
	}
	spinUntil := s.clock.MonoMs() + s.maxStepBack + 2
	for {
		id, wait, err := s.issueLocked(now)
		if err != nil || wait == 0 {
			if err != nil && s.keeper.held == nil {
				s.keeper.retakeLocked()
			}
			var r ranOut
			if errors.As(err, &r) {
				err = r.err
			}
			return id, err
		}
		if s.clock.MonoMs() > spinUntil {
			return 0, newError(CodeClockBack, fmt.Sprintf("the clock has not passed %s (the last timestamp used) within %g ms", isoMs(s.ms), s.maxStepBack))
		}
		now = s.clock.WallMs()
	}
}

// Close stops renewing and releases the lease with the last timestamp used.
func (s *Snowflake) Close() error {
	s.keeper.close(func() int64 {
		if s.ms == math.MinInt64 {
			return 0
		}
		return s.ms
	})
	s.cancel()
	s.t.close()
	return nil
}
