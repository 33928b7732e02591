package ticketd

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// DefaultGiveBackTimeout is how long Close may spend giving unused leased IDs back when the options give none.
const DefaultGiveBackTimeout = time.Second

// ClientEvent is what a Client reports to Options.OnEvent. Type is returned (ticketd took IDs
// First..Last back, Count of them) or return-failed (those Count IDs are lost: a gap; Error says why,
// Codes are the servers' problem codes). First and Last are the block's own ordered IDs, before an
// opaque sequence's permutation.
type ClientEvent struct {
	Type  string
	First uint64
	Last  uint64
	Count uint64
	Error string
	Codes []string
}

// tail is a leased block's unused IDs first..last and the lease that proves it was leased.
type tail struct {
	lease       string
	first, last uint64
}

// tailFrom returns the IDs from..last of a block leased with lease, or false when none is left or it cannot be given back.
func tailFrom(lease string, from, last uint64, held bool) (tail, bool) {
	if lease == "" || !held || from > last {
		return tail{}, false
	}
	return tail{lease: lease, first: from, last: last}, true
}

type returnAnswer struct {
	Returned *string `json:"returned"`
}

// giveBack gives each tail back in turn (POST /v1/sequences/{name}/blocks/return), each URL at most
// once, until ctx's deadline, and reports each outcome through emit. A tail not taken is lost, which
// only leaves a gap: nothing is retried past the deadline.
func (c *Client) giveBack(ctx context.Context, start int, tails []tail, emit func(ClientEvent)) {
	path := "/v1/sequences/" + url.PathEscape(c.sequence) + "/blocks/return"
	for _, tl := range tails {
		count := tl.last - tl.first + 1
		var answer returnAnswer
		body := map[string]string{"lease": tl.lease, "from": strconv.FormatUint(tl.first, 10)}
		ask := func(base string) (attempt, error) {
			if ctx.Err() != nil {
				return attempt{err: "no time left (GiveBackTimeout)", final: true}, nil
			}
			answer = returnAnswer{}
			return c.t.getJSON(ctx, "POST", base+path, body, &answer, func() bool { return answer.Returned != nil })
		}
		failure := fmt.Sprintf("no ticketd took back IDs %d..%d of %s", tl.first, tl.last, c.sequence)
		_, err := askInTurn(ctx, c.urls, start, failure, ask)
		var returned uint64
		if err == nil {
			returned, err = strconv.ParseUint(*answer.Returned, 10, 64)
		}
		if err != nil {
			event := ClientEvent{Type: "return-failed", First: tl.first, Last: tl.last, Count: count, Error: err.Error()}
			var clientErr *Error
			if errors.As(err, &clientErr) {
				event.Codes = clientErr.Codes
			}
			emit(event)
			continue
		}
		emit(ClientEvent{Type: "returned", First: tl.first, Last: tl.last, Count: returned})
	}
}

// unusedTails returns the unused IDs of the block in hand and of every block buffered (lock held,
// closed set). Goroutines still on the hot block find it used up: its counter is set to its end,
// and what they drew before stays theirs.
func (c *Client) unusedTails() []tail {
	var tails []tail
	if c.permutation != nil {
		// Encoded but not handed out: the IDs before the cursor, in the block's own order.
		o := &c.opaque
		left := uint64(len(o.encoded) - o.pos)
		if t, ok := tailFrom(o.lease, o.cur-left, o.last, o.inHand || left > 0); ok {
			tails = append(tails, t)
		}
	} else if h := c.hot.Load(); h.size > 0 {
		used := h.drawn.Swap(h.size)
		if t, ok := tailFrom(h.lease, h.first+used, h.first+h.size-1, used < h.size); ok {
			tails = append(tails, t)
		}
	}
	for _, b := range c.blocks {
		if t, ok := tailFrom(b.lease, b.first, b.last, true); ok {
			tails = append(tails, t)
		}
	}
	return tails
}

// awaitLeases waits until no lease is in flight, or until the deadline. A lease still running then
// is given up: its block, when it comes, is dropped.
func (c *Client) awaitLeases(deadline <-chan struct{}) {
	for {
		c.mu.Lock()
		inFlight, ended := c.inFlight, c.leaseEnded
		c.mu.Unlock()
		if inFlight == 0 {
			return
		}
		select {
		case <-ended:
		case <-deadline:
			return
		}
	}
}
