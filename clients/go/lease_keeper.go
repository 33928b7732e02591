package ticketd

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"
)

// RetakeDelay is how long to wait between tries to take a lease after one failed.
const RetakeDelay = time.Second

// releaseTimeout bounds the release sent by Close (the generator's own context is over by then).
const releaseTimeout = 5 * time.Second

// heldLease is the lease held, as the generator judges it.
type heldLease struct {
	workerID   int
	epoch      string
	maxSkewMs  float64
	renewEvery time.Duration
	// expiresMono: monotonic time after which the lease may be over (counted from when it was asked for).
	expiresMono float64
	// The server's clock as of its answer, which came between two monotonic instants (asked,
	// answered): counted from answered it can only be behind the server's, so "ahead by more than
	// maxSkewMs" is never missed.
	serverMs     float64
	answeredMono float64
}

// takeWait is one take in flight; done is closed once err is set.
type takeWait struct {
	done chan struct{}
	err  error
}

// leaseKeeper keeps the worker-ID lease of one generator: taking it, renewing it every third of
// its TTL, judging it on the monotonic clock, measuring the clock's skew against the server's, and
// taking a new one by itself when it ends. Its state is guarded by the generator's lock mu; events
// are emitted with mu held.
type leaseKeeper struct {
	requests    LeaseRequests
	holder      string
	workerBits  int
	maxStepBack float64
	renewRatio  float64
	clock       Clock
	emit        func(SnowflakeEvent)
	onLeased    func(highWaterMs int64)
	onEnded     func()
	life        context.Context
	mu          *sync.Mutex

	held   *heldLease
	ended  string
	taking *takeWait
	timer  *time.Timer
	closed bool
	skewMs *float64
}

// measuredSkew is this clock minus the server's, as far as one round trip can tell: 0 when the server's reading fell inside it.
func measuredSkew(wallAsked, wallAnswered int64, serverMs float64) float64 {
	if serverMs < float64(wallAsked) {
		return float64(wallAsked) - serverMs
	}
	if serverMs > float64(wallAnswered) {
		return float64(wallAnswered) - serverMs
	}
	return 0
}

// skewText says a measured skew in words: "120 ms ahead of" or "40 ms behind".
func skewText(skewMs float64) string {
	if skewMs > 0 {
		return fmt.Sprintf("%d ms ahead of", int64(math.Round(math.Abs(skewMs))))
	}
	return fmt.Sprintf("%d ms behind", int64(math.Round(math.Abs(skewMs))))
}

// take takes a lease, single-flight (in a goroutine of its own, so a caller that gives up leaves it
// to finish); it returns once the take is over, with why it failed.
func (k *leaseKeeper) take(ctx context.Context) error {
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return newError(CodeNoLease, "generator is closed")
	}
	if k.held != nil {
		k.mu.Unlock()
		return nil
	}
	wait := k.taking
	if wait == nil {
		wait = &takeWait{done: make(chan struct{})}
		k.taking = wait
		go k.runTake(wait)
	}
	k.mu.Unlock()
	select {
	case <-wait.done:
		return wait.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (k *leaseKeeper) runTake(wait *takeWait) {
	err := k.takeOnce()
	k.mu.Lock()
	k.taking = nil
	if err != nil && !k.closed {
		event := SnowflakeEvent{Type: "take-failed", Error: err.Error(), Codes: []string{}}
		if e, ok := err.(*Error); ok && e.Codes != nil {
			event.Codes = e.Codes
		}
		k.emit(event)
	}
	k.mu.Unlock()
	wait.err = err
	close(wait.done)
}

func (k *leaseKeeper) takeOnce() error {
	asked := k.clock.MonoMs()
	wallAsked := k.clock.WallMs()
	lease, err := k.requests.Take(k.life, k.holder)
	if err != nil {
		return err
	}
	answered := k.clock.MonoMs()
	skew := measuredSkew(wallAsked, k.clock.WallMs(), lease.ServerTimeMs)
	k.mu.Lock()
	k.skewMs = &skew
	refusal := k.refusalLocked(lease, skew)
	closed := k.closed
	k.mu.Unlock()
	if refusal != nil || closed {
		k.release(lease.WorkerID, lease.Epoch, lease.HighWaterMs)
		if refusal != nil {
			return refusal
		}
		return newError(CodeNoLease, "generator is closed")
	}
	// Earlier holders used timestamps up to the high-water mark: start above it.
	if wait := lease.HighWaterMs - k.clock.WallMs() + 1; wait > 0 {
		time.Sleep(time.Duration(wait) * time.Millisecond)
	}
	k.mu.Lock()
	k.onLeased(lease.HighWaterMs)
	renewEvery := time.Duration(math.Max(100, lease.TTLMs*k.renewRatio) * float64(time.Millisecond))
	k.held = &heldLease{
		workerID:     lease.WorkerID,
		epoch:        lease.Epoch,
		maxSkewMs:    lease.MaxSkewMs,
		renewEvery:   renewEvery,
		expiresMono:  asked + lease.ExpiresInMs,
		serverMs:     lease.ServerTimeMs,
		answeredMono: answered,
	}
	// With the lock held: no ID is minted on the new lease before its event is seen.
	k.emit(SnowflakeEvent{Type: "leased", WorkerID: lease.WorkerID, Epoch: lease.Epoch, ExpiresInMs: lease.ExpiresInMs, HighWaterMs: lease.HighWaterMs})
	k.scheduleLocked(renewEvery, k.renew)
	k.mu.Unlock()
	return nil
}

// refusalLocked says why a lease cannot be used here: the layout cannot hold its worker ID, or this clock is off the server's.
func (k *leaseKeeper) refusalLocked(lease LeaseAnswer, skew float64) error {
	if lease.WorkerBits > k.workerBits {
		return newError(CodeSnowflakeLayout, fmt.Sprintf("pool %s has %d-bit worker IDs; layout.WorkerBits is %d", lease.Pool, lease.WorkerBits, k.workerBits))
	}
	if math.Abs(skew) > lease.MaxSkewMs {
		k.emit(SnowflakeEvent{Type: "skew", SkewMs: skew, LimitMs: lease.MaxSkewMs})
		return newError(CodeClockSkew, fmt.Sprintf("this clock is %s the server's (limit %g ms, the pool's maxSkewMs); lease given back", skewText(skew), lease.MaxSkewMs))
	}
	if wait := float64(lease.HighWaterMs - k.clock.WallMs()); wait > 2*lease.MaxSkewMs+k.maxStepBack {
		return newError(CodeClockBack, fmt.Sprintf("the worker ID's earlier holders used timestamps %g ms ahead of this clock; lease given back", wait))
	}
	return nil
}

func (k *leaseKeeper) release(workerID int, epoch string, lastUsedMs int64) error {
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	return k.requests.Release(ctx, workerID, epoch, lastUsedMs)
}

func (k *leaseKeeper) scheduleLocked(after time.Duration, action func()) {
	if k.timer != nil {
		k.timer.Stop()
		k.timer = nil
	}
	if !k.closed {
		k.timer = time.AfterFunc(after, action)
	}
}

// endLocked ends the lease held: nothing more is issued on it, not even in the millisecond open now.
func (k *leaseKeeper) endLocked(reason string) {
	held := k.held
	k.held = nil
	k.ended = reason
	k.onEnded()
	if k.timer != nil {
		k.timer.Stop()
		k.timer = nil
	}
	if held != nil && !k.closed {
		k.emit(SnowflakeEvent{Type: "lease-ended", WorkerID: held.workerID, Reason: reason})
	}
}

// retakeLocked takes a new lease in the background, trying again every RetakeDelay until one is
// held or the generator is closed.
func (k *leaseKeeper) retakeLocked() {
	if k.closed || k.taking != nil || k.held != nil {
		return
	}
	go func() {
		if err := k.take(k.life); err != nil {
			k.mu.Lock()
			if k.held == nil {
				k.scheduleLocked(RetakeDelay, func() {
					k.mu.Lock()
					defer k.mu.Unlock()
					k.retakeLocked()
				})
			}
			k.mu.Unlock()
		}
	}()
}

// close stops renewing and releases the lease with the last millisecond used (read once nothing else can change it).
func (k *leaseKeeper) close(lastUsed func() int64) {
	k.mu.Lock()
	k.closed = true
	if k.timer != nil {
		k.timer.Stop()
		k.timer = nil
	}
	taking := k.taking
	k.mu.Unlock()
	if taking != nil {
		<-taking.done
	}
	k.mu.Lock()
	held := k.held
	k.endLocked("closed")
	if held == nil {
		k.mu.Unlock()
		return
	}
	lastUsedMs := lastUsed()
	k.mu.Unlock()
	err := k.release(held.workerID, held.epoch, lastUsedMs)
	k.mu.Lock()
	defer k.mu.Unlock()
	if err != nil {
		// Unreleased, the lease simply runs out.
		k.emit(SnowflakeEvent{Type: "lease-ended", WorkerID: held.workerID, Reason: "release failed: " + err.Error()})
		return
	}
	k.emit(SnowflakeEvent{Type: "released", WorkerID: held.workerID, LastUsedMs: lastUsedMs})
}
