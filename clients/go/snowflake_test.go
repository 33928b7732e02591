package ticketd

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The Snowflake generator's judgement of its clocks and its lease, with both clocks injected and the
// lease routes answered in-process (pure logic: the real routes are exercised by the conformance
// scenarios against a real ticketd, test/integration/go-client.test.ts).

// steppedClock follows the real clocks, shifted at will.
type steppedClock struct {
	wallOffset atomic.Int64
	monoOffset atomic.Int64
}

func (c *steppedClock) WallMs() int64 { return time.Now().UnixMilli() + c.wallOffset.Load() }
func (c *steppedClock) MonoMs() float64 {
	return SystemClock{}.MonoMs() + float64(c.monoOffset.Load())
}

// fakeLeases answers take, renew and release as the real routes do; takes fail while refuse > 0.
type fakeLeases struct {
	mu          sync.Mutex
	workerBits  int
	ttlMs       float64
	maxSkewMs   float64
	highWaterMs int64
	epoch       int
	refuse      int
	released    []string
	renewals    int
}

func newFakeLeases() *fakeLeases {
	return &fakeLeases{workerBits: 10, ttlMs: 3000, maxSkewMs: 1000}
}

func (f *fakeLeases) answer() LeaseAnswer {
	return LeaseAnswer{Pool: "test", WorkerID: 7, Epoch: strconv.Itoa(f.epoch), ExpiresInMs: f.ttlMs, ServerTimeMs: float64(time.Now().UnixMilli()),
		HighWaterMs: f.highWaterMs, WorkerBits: f.workerBits, TTLMs: f.ttlMs, MaxSkewMs: f.maxSkewMs}
}

func (f *fakeLeases) Take(ctx context.Context, holder string) (LeaseAnswer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refuse > 0 {
		f.refuse--
		return LeaseAnswer{}, leaseFailed("no ticketd leased a worker ID of pool test", []string{"x: 503 Service Unavailable"}, []string{"TICKETD_POOL_EXHAUSTED"}, true)
	}
	f.epoch++
	return f.answer(), nil
}

func (f *fakeLeases) Renew(ctx context.Context, workerID int, epoch string, skewMs *int64) (LeaseAnswer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.renewals++
	return f.answer(), nil
}

func (f *fakeLeases) Release(ctx context.Context, workerID int, epoch string, lastUsedMs int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.released = append(f.released, strconv.Itoa(workerID)+"/"+epoch+"/"+strconv.FormatInt(lastUsedMs, 10))
	return nil
}

type eventLog struct {
	mu     sync.Mutex
	events []SnowflakeEvent
}

func (l *eventLog) add(e SnowflakeEvent) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

func (l *eventLog) count(kind string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, e := range l.events {
		if e.Type == kind {
			n++
		}
	}
	return n
}

func generator(t *testing.T, clock Clock, leases LeaseRequests, log *eventLog, options SnowflakeOptions) *Snowflake {
	t.Helper()
	options.URLs = []string{"http://unused.invalid"}
	options.Pool = "test"
	options.Clock = clock
	options.LeaseRequests = leases
	if log != nil {
		options.OnEvent = log.add
	}
	s, err := NewSnowflake(options)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

func mustNow(t *testing.T, s *Snowflake) uint64 {
	t.Helper()
	id, err := s.NextNow()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestASmallStepBackIsWaitedOutAndIDsKeepRising(t *testing.T) {
	clock := &steppedClock{}
	s := generator(t, clock, newFakeLeases(), nil, SnowflakeOptions{})
	var ids []uint64
	for k := 0; k < 3000; k++ {
		ids = append(ids, mustNow(t, s))
	}
	before := s.Decompose(ids[len(ids)-1]).TimestampMs
	clock.wallOffset.Store(-30)
	for k := 0; k < 9000; k++ {
		ids = append(ids, mustNow(t, s))
	}
	for k := 0; k < 1000; k++ {
		id, err := s.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for k := 1; k < len(ids); k++ {
		if ids[k] <= ids[k-1] {
			t.Fatalf("ID %d not above the one before", k)
		}
		if s.Decompose(ids[k]).WorkerID != 7 {
			t.Fatalf("worker ID %d", s.Decompose(ids[k]).WorkerID)
		}
	}
	if s.Decompose(ids[len(ids)-1]).TimestampMs <= before {
		t.Fatal("the time in the IDs did not move on")
	}
}

func TestALargeStepBackStopsItUntilTheClockPassesTheLastTimestamp(t *testing.T) {
	clock := &steppedClock{}
	log := &eventLog{}
	s := generator(t, clock, newFakeLeases(), log, SnowflakeOptions{})
	last := mustNow(t, s)
	clock.wallOffset.Store(-200)
	for k := 0; k < 3; k++ {
		_, err := s.NextNow()
		if !errors.Is(err, ErrClockBack) {
			t.Fatalf("got %v, want CLOCK_BACK", err)
		}
	}
	if log.count("clock-back") != 1 {
		t.Fatalf("%d clock-back events, want 1", log.count("clock-back"))
	}
	time.Sleep(250 * time.Millisecond)
	after := mustNow(t, s)
	if after <= last || s.Decompose(after).TimestampMs <= s.Decompose(last).TimestampMs {
		t.Fatal("an ID after the step is not above the last one before it")
	}
}

func TestAClockAheadOfTheServersByMoreThanMaxSkewIssuesNothing(t *testing.T) {
	clock := &steppedClock{}
	log := &eventLog{}
	leases := newFakeLeases()
	leases.maxSkewMs = 100
	s := generator(t, clock, leases, log, SnowflakeOptions{})
	mustNow(t, s)
	clock.wallOffset.Store(500)
	if _, err := s.NextNow(); !errors.Is(err, ErrClockSkew) {
		t.Fatalf("got %v, want CLOCK_SKEW", err)
	}
	if log.count("skew") == 0 {
		t.Fatal("no skew event")
	}
	clock.wallOffset.Store(0)
	mustNow(t, s)
}

func TestALeasePastItsTTLIssuesNothingMoreAndNextWaitsForANewOne(t *testing.T) {
	clock := &steppedClock{}
	log := &eventLog{}
	s := generator(t, clock, newFakeLeases(), log, SnowflakeOptions{})
	old := mustNow(t, s)
	time.Sleep(2 * time.Millisecond)
	// The process was paused: the monotonic clock moved on past the TTL, the lease unrenewed.
	clock.monoOffset.Store(5000)
	if _, err := s.NextNow(); !errors.Is(err, ErrNoLease) {
		t.Fatalf("got %v, want NO_LEASE", err)
	}
	if log.count("lease-ended") != 1 {
		t.Fatalf("%d lease-ended events", log.count("lease-ended"))
	}
	clock.monoOffset.Store(10000)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	id, err := s.Next(ctx)
	if err != nil {
		t.Fatalf("Next after a pause: %v", err)
	}
	if id <= old || log.count("leased") < 2 {
		t.Fatalf("Next gave %d (old %d) after %d leases", id, old, log.count("leased"))
	}
}

func TestNextWaitsOutAFullPoolThenGivesUpWithNoLease(t *testing.T) {
	leases := newFakeLeases()
	log := &eventLog{}
	leases.refuse = 1
	s := generator(t, &steppedClock{}, leases, log, SnowflakeOptions{})
	if _, err := s.Next(context.Background()); err != nil || log.count("take-failed") != 1 {
		t.Fatalf("Next after one full-pool answer: %v, %d take-failed", err, log.count("take-failed"))
	}
	leases.mu.Lock()
	leases.refuse = 100
	leases.mu.Unlock()
	waiting, err := NewSnowflake(SnowflakeOptions{URLs: []string{"http://unused.invalid"}, Pool: "test", LeaseRequests: leases, LeaseWait: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer waiting.Close()
	began := time.Now()
	_, err = waiting.Next(context.Background())
	var e *Error
	if !errors.Is(err, ErrNoLease) || !errors.As(errors.Unwrap(err), &e) || !e.HasCode("TICKETD_POOL_EXHAUSTED") {
		t.Fatalf("got %v, want NO_LEASE caused by POOL_EXHAUSTED", err)
	}
	if waited := time.Since(began); waited < 1400*time.Millisecond || waited > 4*time.Second {
		t.Fatalf("waited %v for a LeaseWait of 1.5 s", waited)
	}
}

func TestItMintsAboveTheHighWaterMarkAndReleasesWithTheLastTimestamp(t *testing.T) {
	leases := newFakeLeases()
	leases.highWaterMs = time.Now().UnixMilli() + 40
	s := generator(t, &steppedClock{}, leases, nil, SnowflakeOptions{})
	var ids []uint64
	for k := 0; k < 100; k++ {
		id, err := s.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if s.Decompose(ids[0]).TimestampMs <= leases.highWaterMs {
		t.Fatal("minted at or below the high-water mark")
	}
	_ = s.Close()
	want := "7/1/" + strconv.FormatInt(s.Decompose(ids[len(ids)-1]).TimestampMs, 10)
	if len(leases.released) != 1 || leases.released[0] != want {
		t.Fatalf("released %v, want %s", leases.released, want)
	}
	if _, err := s.NextNow(); !errors.Is(err, ErrNoLease) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestAPoolWiderThanTheLayoutIsRefusedAndGivenBack(t *testing.T) {
	leases := newFakeLeases()
	leases.workerBits = 12
	s, err := NewSnowflake(SnowflakeOptions{URLs: []string{"http://unused.invalid"}, Pool: "test", LeaseRequests: leases})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Ready(context.Background()); !errors.Is(err, ErrSnowflakeLayout) {
		t.Fatalf("got %v, want SNOWFLAKE_LAYOUT", err)
	}
	if len(leases.released) != 1 {
		t.Fatalf("released %v", leases.released)
	}
}

func TestTheLeaseIsRenewedInTheBackground(t *testing.T) {
	leases := newFakeLeases()
	leases.ttlMs = 300
	s := generator(t, &steppedClock{}, leases, nil, SnowflakeOptions{})
	time.Sleep(450 * time.Millisecond)
	leases.mu.Lock()
	renewals := leases.renewals
	leases.mu.Unlock()
	if renewals < 2 {
		t.Fatalf("%d renewals in 450 ms of a 300 ms TTL", renewals)
	}
	mustNow(t, s)
}
