package ticketd

import (
	"fmt"
	"math"
	"time"
)

// renew extends the lease held, every renewEvery, and judges what ticketd answers.
func (k *leaseKeeper) renew() {
	k.mu.Lock()
	held := k.held
	if held == nil || k.closed {
		k.mu.Unlock()
		return
	}
	// Woken past the lease's end (a pause): it is over, whatever a renewal would answer now.
	if k.clock.MonoMs() >= held.expiresMono {
		k.endLocked(fmt.Sprintf("lease of worker %d ran out unrenewed", held.workerID))
		k.retakeLocked()
		k.mu.Unlock()
		return
	}
	var skew *int64
	if k.skewMs != nil {
		rounded := int64(math.Round(*k.skewMs))
		skew = &rounded
	}
	k.mu.Unlock()
	asked := k.clock.MonoMs()
	wallAsked := k.clock.WallMs()
	lease, err := k.requests.Renew(k.life, held.workerID, held.epoch, skew)
	if err != nil {
		k.renewFailed(held, err)
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.held != held {
		return
	}
	answered := k.clock.MonoMs()
	now := measuredSkew(wallAsked, k.clock.WallMs(), lease.ServerTimeMs)
	k.skewMs = &now
	held.expiresMono = asked + lease.ExpiresInMs
	held.serverMs = lease.ServerTimeMs
	held.answeredMono = answered
	k.emit(SnowflakeEvent{Type: "renewed", WorkerID: held.workerID, SkewMs: now})
	if math.Abs(now) > held.maxSkewMs {
		k.emit(SnowflakeEvent{Type: "skew", SkewMs: now, LimitMs: held.maxSkewMs})
	}
	k.scheduleLocked(held.renewEvery, k.renew)
}

func (k *leaseKeeper) renewFailed(held *heldLease, err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.held != held {
		return
	}
	left := held.expiresMono - k.clock.MonoMs()
	if leaseIsLost(err) {
		reason := fmt.Sprintf("ticketd answered that the lease of worker %d is lost", held.workerID)
		if left <= 0 {
			reason = fmt.Sprintf("lease of worker %d ran out unrenewed (ticketd answered that it is lost)", held.workerID)
		}
		k.endLocked(reason)
		k.retakeLocked()
		return
	}
	if left <= 0 {
		// Over: an idle generator learns it here rather than at its next ID.
		k.endLocked(fmt.Sprintf("lease of worker %d ran out unrenewed", held.workerID))
	}
	k.emit(SnowflakeEvent{Type: "renew-failed", WorkerID: held.workerID, Error: err.Error(), LeftMs: left})
	if left <= 0 {
		k.retakeLocked()
		return
	}
	// Try again while the lease lasts.
	k.scheduleLocked(time.Duration(math.Max(50, math.Min(1000, left/4))*float64(time.Millisecond)), k.renew)
}
