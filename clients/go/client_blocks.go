package ticketd

import (
	"context"
	"fmt"
	"net/url"
	"sync/atomic"
)

// encodeChunk is how many opaque IDs are encoded at a time, under the client's lock.
const encodeChunk = 256

// block is a leased block: its IDs first..last, and from prefetchAt on the next one is leased;
// lease (empty when ticketd gave none) gives its unused IDs back on Close.
type block struct {
	first, last, prefetchAt uint64
	lease                   string
}

// hotBlock is the ordered block being handed out without the lock: offsets below end are drawn
// with one atomic add; from end on (the prefetch point, then the block's end) the lock is taken.
// Offsets, not IDs, are counted, so a block at the top of 2^64 cannot wrap around.
type hotBlock struct {
	drawn atomic.Uint64
	end   atomic.Uint64
	first uint64
	size  uint64
	lease string
}

func emptyHot() *hotBlock {
	return &hotBlock{}
}

func newHot(b block) *hotBlock {
	h := &hotBlock{first: b.first, size: b.last - b.first + 1, lease: b.lease}
	h.end.Store(b.prefetchAt - b.first)
	return h
}

// opaqueCursor is an opaque block being handed out (under the lock): the next ordered ID, the
// prefetch point, the last ID, and the opaque IDs encoded ahead of the cursor.
type opaqueCursor struct {
	inHand  bool
	cur     uint64
	fastEnd uint64
	last    uint64
	encoded []uint64
	pos     int
	lease   string
}

// leaseWait is one lease in flight; done is closed once err is set.
type leaseWait struct {
	done chan struct{}
	err  error
}

// takeLocked returns an ID from the buffered blocks, or false when none is buffered (lock held).
// With drawn, k is an offset the hot path drew at or past h's prefetch point: still the caller's if it lies in h.
func (c *Client) takeLocked(h *hotBlock, k uint64, drawn bool) (uint64, bool) {
	if c.closed {
		return 0, false
	}
	if c.permutation != nil {
		return c.takeEncoded()
	}
	if drawn && k < h.size {
		if c.hot.Load() == h && h.end.Load() < h.size {
			c.pastPrefetchPoint(h)
		}
		return h.first + k, true
	}
	for {
		h := c.hot.Load()
		k := h.drawn.Add(1) - 1
		if k < h.size {
			if h.end.Load() < h.size {
				c.pastPrefetchPoint(h)
			}
			return h.first + k, true
		}
		// This block is used up (offsets drawn past its end are never handed out).
		if len(c.blocks) == 0 {
			return 0, false
		}
		b := c.blocks[0]
		c.blocks = c.blocks[1:]
		c.hot.Store(newHot(b))
	}
}

// pastPrefetchPoint leases ahead while the block still has a share left, so Next rarely waits; the
// rest of the block then goes out on the hot path.
func (c *Client) pastPrefetchPoint(h *hotBlock) {
	c.topUp()
	h.end.Store(h.size)
}

func (c *Client) topUp() {
	for !c.closed && len(c.blocks)+c.inFlight < c.ahead {
		c.refill()
	}
}

// refill starts a lease in a goroutine of its own (lock held).
func (c *Client) refill() *leaseWait {
	c.inFlight++
	wait := &leaseWait{done: make(chan struct{})}
	c.wait = wait
	go c.leaseInto(wait)
	return wait
}

func (c *Client) leaseInto(wait *leaseWait) {
	b, err := c.leaser(c.life)
	c.mu.Lock()
	c.inFlight--
	close(c.leaseEnded)
	c.leaseEnded = make(chan struct{})
	if err == nil && !c.closed {
		c.blocks = append(c.blocks, b)
		c.leases.Add(1)
	} else if err == nil && c.late != nil {
		// Leased after Close began: nobody will take from it, so it is given back with the rest (if in time).
		if t, ok := tailFrom(b.lease, b.first, b.last, true); ok {
			c.late = append(c.late, t)
		}
	}
	if err != nil && c.life.Err() != nil {
		err = newError(CodeLeaseFailed, "client is closed")
	}
	c.mu.Unlock()
	wait.err = err
	close(wait.done)
}

type blockAnswer struct {
	First *wireID `json:"first"`
	Last  *wireID `json:"last"`
	IDs   *string `json:"ids"`
	Lease *string `json:"lease"`
}

// misreadMode says why a block answer's ids cannot be trusted: a mode this version does not know,
// or not opaque for a sequence known to be.
func (c *Client) misreadMode(ids *string) string {
	if ids != nil && *ids != "ordered" && *ids != "opaque" {
		return fmt.Sprintf("block answer has ids %q, unknown to this version; upgrade the ticketd Go client", *ids)
	}
	c.mu.Lock()
	opaque := c.permutation != nil
	c.mu.Unlock()
	if opaque && (ids == nil || *ids != "opaque") {
		given := "a sequence without ids"
		if ids != nil {
			given = *ids
		}
		return fmt.Sprintf("sequence %s is opaque, but this ticketd leased it as %s: upgrade that ticketd", c.sequence, given)
	}
	return ""
}

func (c *Client) lease(ctx context.Context) (block, error) {
	path := "/v1/sequences/" + url.PathEscape(c.sequence) + "/blocks"
	var leased blockAnswer
	ask := func(base string) (attempt, error) {
		leased = blockAnswer{}
		got, err := c.t.getJSON(ctx, "POST", base+path, nil, &leased, func() bool {
			return leased.First != nil && leased.Last != nil && *leased.First <= *leased.Last
		})
		if err != nil || !got.ok {
			return got, err
		}
		if why := c.misreadMode(leased.IDs); why != "" {
			return attempt{err: why}, nil
		}
		// The key comes with the first opaque block; not getting it counts against this URL.
		if leased.IDs != nil && *leased.IDs == "opaque" && !c.ordered {
			c.mu.Lock()
			known := c.permutation != nil
			c.mu.Unlock()
			if !known {
				codec, err := c.Codec(ctx)
				if err != nil {
					return attempt{}, err
				}
				c.mu.Lock()
				c.permutation = codec.Permutation
				c.mu.Unlock()
			}
		}
		return got, nil
	}
	c.mu.Lock()
	start := c.preferred
	c.mu.Unlock()
	index, err := askInTurn(ctx, c.urls, start, "no ticketd leased a block of "+c.sequence, ask)
	if err != nil {
		return block{}, err
	}
	// Stick with a URL that answers; move on from one that did not.
	c.mu.Lock()
	c.preferred = index
	c.mu.Unlock()
	first, last := uint64(*leased.First), uint64(*leased.Last)
	size := last - first + 1
	r := uint64(c.prefetchRatio*1000 + 0.5)
	keep := size/1000*r + size%1000*r/1000
	prefetchAt := first
	if keep < size {
		prefetchAt = last - keep
	}
	lease := ""
	if leased.Lease != nil {
		lease = *leased.Lease
	}
	return block{first: first, last: last, prefetchAt: prefetchAt, lease: lease}, nil
}

// takeEncoded returns the next opaque ID, encoding the next chunk of the block when the last one is used up (lock held).
func (c *Client) takeEncoded() (uint64, bool) {
	o := &c.opaque
	if o.pos < len(o.encoded) {
		o.pos++
		return o.encoded[o.pos-1], true
	}
	if !o.inHand || o.cur > o.last {
		if len(c.blocks) == 0 {
			return 0, false
		}
		b := c.blocks[0]
		c.blocks = c.blocks[1:]
		*o = opaqueCursor{inHand: true, cur: b.first, last: b.last, fastEnd: b.prefetchAt, lease: b.lease}
	}
	if o.cur >= o.fastEnd {
		c.topUp()
		o.fastEnd = o.last + 1
	}
	n := o.fastEnd - o.cur
	if o.fastEnd == 0 || n > encodeChunk {
		// fastEnd wrapped past 2^64 - 1 (the block ends at the top), or more than a chunk is left.
		n = encodeChunk
		if left := o.last - o.cur + 1; left != 0 && left < n {
			n = left
		}
	}
	encoded := make([]uint64, n)
	if err := c.permutation.EncodeRun(o.cur, encoded); err != nil {
		// The block does not lie in the domain the key gave: hand none of it out.
		o.inHand = false
		o.encoded, o.pos = nil, 0
		return c.takeEncoded()
	}
	o.encoded, o.pos = encoded, 1
	o.cur += n
	if o.cur == 0 {
		o.inHand = false
	}
	return encoded[0], true
}
