package ticketd

import (
	"crypto/tls"
	"time"
)

// DefaultMaxStepBack is the clock step back waited out when SnowflakeOptions.MaxStepBack is zero.
const DefaultMaxStepBack = 50 * time.Millisecond

// DefaultLeaseWait is how long Next and Ready wait for a lease when SnowflakeOptions.LeaseWait is zero.
const DefaultLeaseWait = 30 * time.Second

// Clock is what a generator reads: wall-clock Unix milliseconds (what goes into IDs) and monotonic
// milliseconds (what judges the lease). Tests pass their own in SnowflakeOptions.Clock.
type Clock interface {
	WallMs() int64
	MonoMs() float64
}

// SystemClock is the system's clocks: time.Now's wall and monotonic readings.
type SystemClock struct{}

var processStart = time.Now()

// WallMs is Unix milliseconds.
func (SystemClock) WallMs() int64 { return time.Now().UnixMilli() }

// MonoMs is milliseconds on the monotonic clock (since this package was loaded).
func (SystemClock) MonoMs() float64 {
	return float64(time.Since(processStart)) / float64(time.Millisecond)
}

// SnowflakeEvent is what a generator reports to SnowflakeOptions.OnEvent. Type is one of leased,
// renewed, renew-failed, lease-ended, take-failed, clock-back, skew, released; the fields each type
// sets are listed in the README ("Snowflake events").
type SnowflakeEvent struct {
	Type        string
	WorkerID    int
	Epoch       string
	ExpiresInMs float64
	HighWaterMs int64
	SkewMs      float64
	LimitMs     float64
	BehindMs    float64
	LastUsedMs  int64
	LeftMs      float64
	Reason      string
	Error       string
	Codes       []string
}

// SnowflakeOptions configure a Snowflake generator.
type SnowflakeOptions struct {
	// URLs are ticketd base URLs (at least one); each call fails over from one to the next.
	URLs []string
	// Pool is the worker pool (created by an admin: PUT /v1/worker-pools/{pool}).
	Pool string
	// Token is a client token of the pool, when ticketd has TICKETD_CLIENT_TOKENS.
	Token string
	// Epoch is the IDs' time zero (the zero time: 2024-01-01T00:00:00Z, DefaultSnowflakeEpochMs).
	Epoch time.Time
	// Layout is the bit widths (the zero layout: DefaultLayout); WorkerBits must hold the pool's worker IDs.
	Layout SnowflakeLayout
	// Holder is shown to operators (default host/pid).
	Holder string
	// MaxStepBack: a clock step back up to this is waited out; a larger one stops issuing until the
	// clock passes the last timestamp (zero: DefaultMaxStepBack; negative: none).
	MaxStepBack time.Duration
	// RenewAfterRatio: renew after this fraction of the TTL (zero: 1/3, two more tries before the lease ends).
	RenewAfterRatio float64
	// Timeout is the time per request (default 2 s).
	Timeout time.Duration
	// LeaseWait is how long Next and Ready wait for a lease (zero: DefaultLeaseWait; negative: one try of every URL).
	LeaseWait time.Duration
	// TLSConfig is for https:// URLs with a private CA or client certificates.
	TLSConfig *tls.Config
	// OnEvent is called with each event, with the generator's lock held: it must not call the generator.
	OnEvent func(SnowflakeEvent)
	// Clock replaces the system clocks (tests).
	Clock Clock
	// LeaseRequests replaces ticketd's lease routes (tests).
	LeaseRequests LeaseRequests
}
