package ticketd

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// strictNoBlocks is the problem code of POST .../blocks for a strict sequence.
	strictNoBlocks = "TICKETD_STRICT_NO_BLOCKS"
	// StrictMaxPerRequest is the most IDs one request for a strict sequence asks for (ticketd's TICKETD_MAX_COUNT is 10000 unless set lower).
	StrictMaxPerRequest = 1000
	// StrictTimeout is the per-request timeout of a strict sequence when none is given: above the 3 s a front end waits out a leader change.
	StrictTimeout = 5 * time.Second
)

// strictWaiter is one call waiting for a strict sequence's IDs; done is closed once ids or err is set.
type strictWaiter struct {
	count int
	done  chan struct{}
	ids   []uint64
	err   error
}

// strictIDs are a strict sequence's IDs for one client (docs/strict-sequences.md): no block is
// ever buffered. One request is in flight at most; calls made while it is in flight wait for the
// next one, which asks for all of them at once (coalesced). They never join the request in flight:
// it was sent before they were made, and an answer given elsewhere since may hold greater IDs.
type strictIDs struct {
	life      context.Context
	urls      []string
	sequence  string
	t         *transport
	requests  atomic.Int64
	mu        sync.Mutex
	waiting   []*strictWaiter
	inFlight  bool
	closed    bool
	preferred int
}

func newStrictIDs(life context.Context, urls []string, sequence string, t *transport) *strictIDs {
	return &strictIDs{life: life, urls: urls, sequence: sequence, t: t}
}

func (s *strictIDs) next(ctx context.Context) (uint64, error) {
	ids, err := s.ask(ctx, 1)
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// batch asks for count IDs in requests of at most StrictMaxPerRequest, each sent once the one before is answered.
func (s *strictIDs) batch(ctx context.Context, count int) ([]uint64, error) {
	ids := make([]uint64, 0, count)
	for len(ids) < count {
		n := count - len(ids)
		if n > StrictMaxPerRequest {
			n = StrictMaxPerRequest
		}
		got, err := s.ask(ctx, n)
		if err != nil {
			return ids, err
		}
		ids = append(ids, got...)
	}
	return ids, nil
}

func (s *strictIDs) refuseTry() error {
	return newError(CodeStrict, fmt.Sprintf("sequence %s is strict: each ID comes from ticketd, none is buffered; call Next", s.sequence))
}

// close refuses the calls still waiting; the request in flight is answered to nobody.
func (s *strictIDs) close() {
	s.mu.Lock()
	s.closed = true
	waiting := s.waiting
	s.waiting = nil
	s.mu.Unlock()
	for _, w := range waiting {
		w.err = newError(CodeLeaseFailed, "client is closed")
		close(w.done)
	}
}

func (s *strictIDs) ask(ctx context.Context, count int) ([]uint64, error) {
	w := &strictWaiter{count: count, done: make(chan struct{})}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, newError(CodeLeaseFailed, "client is closed")
	}
	s.waiting = append(s.waiting, w)
	if !s.inFlight {
		s.inFlight = true
		go s.send()
	}
	s.mu.Unlock()
	select {
	case <-w.done:
		return w.ids, w.err
	case <-ctx.Done():
		s.abandon(w)
		return nil, ctx.Err()
	}
}

// abandon takes a call whose context ended out of the queue (if a request already holds it, its IDs are a gap).
func (s *strictIDs) abandon(w *strictWaiter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, other := range s.waiting {
		if other == w {
			s.waiting = append(s.waiting[:k], s.waiting[k+1:]...)
			return
		}
	}
}

// send sends one request for the calls waiting (as many as fit) after another, until none waits.
func (s *strictIDs) send() {
	for {
		s.mu.Lock()
		if s.closed || len(s.waiting) == 0 {
			s.inFlight = false
			s.mu.Unlock()
			return
		}
		total, taken := 0, 0
		for taken < len(s.waiting) && total+s.waiting[taken].count <= StrictMaxPerRequest {
			total += s.waiting[taken].count
			taken++
		}
		batch := append([]*strictWaiter(nil), s.waiting[:taken]...)
		s.waiting = s.waiting[taken:]
		s.mu.Unlock()
		ids, err := s.request(total)
		at := 0
		for _, w := range batch {
			if err != nil {
				w.err = err
			} else {
				w.ids = ids[at : at+w.count]
				at += w.count
			}
			close(w.done)
		}
	}
}

type idsAnswer struct {
	IDs []wireID `json:"ids"`
}

func (s *strictIDs) request(count int) ([]uint64, error) {
	s.requests.Add(1)
	path := fmt.Sprintf("/v1/sequences/%s/ids?count=%d", url.PathEscape(s.sequence), count)
	var answer idsAnswer
	ask := func(base string) (attempt, error) {
		answer = idsAnswer{}
		return s.t.getJSON(s.life, "POST", base+path, nil, &answer, func() bool { return len(answer.IDs) == count })
	}
	s.mu.Lock()
	start := s.preferred
	s.mu.Unlock()
	index, err := askInTurn(s.life, s.urls, start, "no ticketd issued IDs of strict sequence "+s.sequence, ask)
	if err != nil {
		if s.life.Err() != nil {
			return nil, newError(CodeLeaseFailed, "client is closed")
		}
		return nil, err
	}
	s.mu.Lock()
	s.preferred = index
	s.mu.Unlock()
	ids := make([]uint64, count)
	for k, id := range answer.IDs {
		ids[k] = uint64(id)
	}
	return ids, nil
}
