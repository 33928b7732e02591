package ticketd

import (
	"errors"
	"fmt"
)

// errRanOut marks the lease found run out by issueLocked: Next then waits for a new one.
var errRanOut = errors.New("lease ran out")

// ranOut is the CodeNoLease error of a lease found run out; it matches errRanOut too.
type ranOut struct{ err *Error }

func (r ranOut) Error() string        { return r.err.Error() }
func (r ranOut) Is(target error) bool { return target == errRanOut }
func (r ranOut) Unwrap() error        { return r.err }

// issueLocked is the next ID at wall time now; or, with wait > 0, the milliseconds to wait for the
// clock to pass the last millisecond opened (lock held).
func (s *Snowflake) issueLocked(now int64) (uint64, int64, error) {
	k := s.keeper
	held := k.held
	if held == nil {
		return 0, 0, newError(CodeNoLease, fmt.Sprintf("no lease of a worker ID is held (%s); Next waits for one", k.ended))
	}
	mono := s.clock.MonoMs()
	if mono >= held.expiresMono {
		k.endLocked(fmt.Sprintf("lease of worker %d ran out unrenewed", held.workerID))
		k.retakeLocked()
		return 0, 0, ranOut{newError(CodeNoLease, fmt.Sprintf("the lease of worker %d ran out before it was renewed; nothing more is issued on it", held.workerID))}
	}
	// The server's clock now lies in [serverMs + (mono - answered), serverMs + (mono - asked)].
	// Ahead is judged by the most it may be (a holder ahead of the server could mint past the
	// high-water mark the next holder starts from); behind by the least it surely is, since minting
	// above the high-water mark already guards that side, and a slow answer must not read as a clock behind.
	since := mono - held.answeredMono
	ahead := float64(now) - held.serverMs - since
	behind := held.serverMs + since - float64(now)
	if ahead > held.maxSkewMs || behind > held.maxSkewMs {
		skew := -behind
		if ahead > held.maxSkewMs {
			skew = ahead
		}
		s.emit(SnowflakeEvent{Type: "skew", SkewMs: skew, LimitMs: held.maxSkewMs})
		return 0, 0, newError(CodeClockSkew, fmt.Sprintf("this clock is %s the server's (limit %g ms, the pool's maxSkewMs): nothing is issued until it is back within it", skewText(skew), held.maxSkewMs))
	}
	if now > s.ms {
		first, err := firstIDOf(now, held.workerID, s.layout, s.epochMs)
		if err != nil {
			return 0, 0, err
		}
		s.ms = now
		s.backReported = false
		s.next = first + 1
		s.end = first + 1<<uint(s.layout.SequenceBits)
		return first, 0, nil
	}
	// A step back past MaxStepBack stops it at once: going on with the open millisecond's sequence
	// would freeze the time in its IDs without a word.
	stepBack := s.ms - now
	if float64(stepBack) > s.maxStepBack {
		if !s.backReported {
			s.emit(SnowflakeEvent{Type: "clock-back", BehindMs: float64(stepBack)})
		}
		s.backReported = true
		return 0, 0, newError(CodeClockBack, fmt.Sprintf("the clock is %d ms behind the last timestamp used (more than MaxStepBack %g ms): nothing is issued until it passes %s", stepBack, s.maxStepBack, isoMs(s.ms)))
	}
	// At or a little behind the last millisecond opened: its sequence goes on while it lasts.
	if s.next < s.end {
		id := s.next
		s.next++
		return id, 0, nil
	}
	return 0, stepBack + 1, nil
}
