package ticketd

import (
	"context"
	"crypto/tls"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// MaxBlocksAhead is the most blocks a Client leases ahead of use.
const MaxBlocksAhead = 32

// Options configure a Client.
type Options struct {
	// URLs are ticketd base URLs (at least one); a lease fails over from one to the next.
	URLs []string
	// Sequence is the sequence's name.
	Sequence string
	// Token is sent as a bearer token (sequences with client tokens; an opaque sequence's key needs one).
	Token string
	// PrefetchBelowRatio: lease the next block when less than this fraction of the current one is left (default 0.5).
	PrefetchBelowRatio float64
	// Timeout is the time per request (default 2 s; 5 s for a strict sequence).
	Timeout time.Duration
	// Ordered hands out an opaque sequence's ordered IDs (Codec().Encode shows the opaque ones).
	Ordered bool
	// TLSConfig is for https:// URLs with a private CA or client certificates.
	TLSConfig *tls.Config
	// GiveBackTimeout is how long Close may spend giving unused leased IDs back (zero:
	// DefaultGiveBackTimeout; negative: none given back).
	GiveBackTimeout time.Duration
	// OnEvent is called with each event (returned, return-failed) from the goroutine that calls Close.
	OnEvent func(ClientEvent)
}

// Client hands out the IDs of one sequence from blocks it leases from ticketd. It is safe for
// concurrent use; nothing is leased until the first ID is asked for. Close it when done.
type Client struct {
	urls            []string
	sequence        string
	ordered         bool
	prefetchRatio   float64
	timeoutGiven    time.Duration
	giveBackTimeout time.Duration
	emit            func(ClientEvent)
	t               *transport
	// life is canceled by Close: leases in flight and the strict sender stop with it.
	life   context.Context
	cancel context.CancelFunc
	// The ordered block being handed out, read without the lock.
	hot    atomic.Pointer[hotBlock]
	leases atomic.Int64

	// Every field below is guarded by mu.
	mu          sync.Mutex
	blocks      []block
	preferred   int
	closed      bool
	permutation *Permutation
	inFlight    int
	ahead       int
	wait        *leaseWait
	opaque      opaqueCursor
	strict      *strictIDs
	// leaseEnded is closed (and replaced) whenever a lease ends, for Close.
	leaseEnded chan struct{}
	// late holds blocks whose lease ended after Close began, given back with the rest; nil once Close took them.
	late []tail

	codecMu sync.Mutex
	codec   *Codec

	// leaser leases one block: c.lease, or a stand-in in the package's tests.
	leaser func(ctx context.Context) (block, error)
}

// NewClient makes a client of one sequence; it fails with CodeLeaseFailed when no URL is given.
func NewClient(options Options) (*Client, error) {
	if len(options.URLs) == 0 {
		return nil, newError(CodeLeaseFailed, "the ticketd Go client needs at least one ticketd URL")
	}
	ratio := options.PrefetchBelowRatio
	if ratio <= 0 || ratio > 1 {
		ratio = 0.5
	}
	life, cancel := context.WithCancel(context.Background())
	giveBackTimeout := options.GiveBackTimeout
	if giveBackTimeout == 0 {
		giveBackTimeout = DefaultGiveBackTimeout
	}
	emit := options.OnEvent
	if emit == nil {
		emit = func(ClientEvent) {}
	}
	c := &Client{
		urls:            trimURLs(options.URLs),
		sequence:        options.Sequence,
		ordered:         options.Ordered,
		prefetchRatio:   ratio,
		timeoutGiven:    options.Timeout,
		giveBackTimeout: giveBackTimeout,
		emit:            emit,
		leaseEnded:      make(chan struct{}),
		late:            []tail{},
		t:               newTransport(options.Token, options.Timeout, options.TLSConfig),
		life:            life,
		cancel:          cancel,
		ahead:           1,
	}
	c.leaser = c.lease
	c.hot.Store(emptyHot())
	return c, nil
}

// Next returns the next ID; it waits for a lease only when no block is buffered (a strict
// sequence: it asks ticketd each time). It fails with CodeLeaseFailed when no URL leased a block,
// or with ctx's error.
func (c *Client) Next(ctx context.Context) (uint64, error) {
	// The hot path, small enough to be inlined: one atomic add below the block's prefetch point.
	h := c.hot.Load()
	k := h.drawn.Add(1) - 1
	if k < h.end.Load() {
		return h.first + k, nil
	}
	return c.nextPastHot(ctx, h, k)
}

// nextPastHot is Next at or past the hot block's prefetch point, or with no block.
func (c *Client) nextPastHot(ctx context.Context, h *hotBlock, k uint64) (uint64, error) {
	c.mu.Lock()
	id, ok := c.takeLocked(h, k, true)
	c.mu.Unlock()
	if ok {
		return id, nil
	}
	return c.nextSlow(ctx)
}

// NextNow returns the next ID without waiting; it fails with CodeEmpty when no block is buffered,
// CodeStrict on a strict sequence (Node's nextSync()).
func (c *Client) NextNow() (uint64, error) {
	h := c.hot.Load()
	k := h.drawn.Add(1) - 1
	if k < h.end.Load() {
		return h.first + k, nil
	}
	c.mu.Lock()
	id, ok := c.takeLocked(h, k, true)
	strict := c.strict
	c.mu.Unlock()
	if ok {
		return id, nil
	}
	if strict != nil {
		return 0, strict.refuseTry()
	}
	return 0, newError(CodeEmpty, "no block of "+c.sequence+" is buffered yet; call Next, which waits for a lease")
}

// Codec returns the sequence's codec; for an opaque sequence it fetches the key (which needs the
// sequence's own client token) once.
func (c *Client) Codec(ctx context.Context) (Codec, error) {
	c.codecMu.Lock()
	defer c.codecMu.Unlock()
	if c.codec == nil {
		codec, err := fetchCodec(ctx, c.urls, c.sequence, c.t)
		if err != nil {
			return Codec{}, err
		}
		c.codec = &codec
	}
	return *c.codec, nil
}

// Strict reports whether ticketd answered that the sequence is strict.
func (c *Client) Strict() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.strict != nil
}

// Leases is the number of blocks leased so far.
func (c *Client) Leases() int64 {
	return c.leases.Load()
}

// StrictRequests is the number of requests sent for a strict sequence's IDs (fewer than the calls
// when calls were coalesced); 0 for other sequences.
func (c *Client) StrictRequests() int64 {
	c.mu.Lock()
	strict := c.strict
	c.mu.Unlock()
	if strict == nil {
		return 0
	}
	return strict.requests.Load()
}

// Close stops prefetching and gives the unused IDs of the blocks in hand back (those ticketd leased
// with a lease), once, within GiveBackTimeout; the rest are given up (a gap). It waits for the leases
// in flight (within the same time when giving back). Calls after Close fail with CodeLeaseFailed;
// a second Close does nothing. It returns nil: IDs not given back are reported through OnEvent.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	tails := c.unusedTails()
	strict := c.strict
	c.blocks = nil
	c.hot.Store(emptyHot())
	c.opaque = opaqueCursor{}
	wait := c.wait
	c.mu.Unlock()
	if strict != nil {
		strict.close()
	}
	if c.giveBackTimeout < 0 {
		c.cancel()
		if wait != nil {
			<-wait.done
		}
		c.t.close()
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.giveBackTimeout)
	defer cancel()
	c.awaitLeases(ctx.Done())
	c.cancel()
	c.mu.Lock()
	tails = append(tails, c.late...)
	c.late = nil
	start := c.preferred
	c.mu.Unlock()
	c.giveBack(ctx, start, tails, c.emit)
	c.t.close()
	return nil
}

func (c *Client) nextSlow(ctx context.Context) (uint64, error) {
	doubled := false
	for {
		c.mu.Lock()
		strict := c.strict
		var wait *leaseWait
		if strict == nil {
			if id, ok := c.takeLocked(nil, 0, false); ok {
				c.mu.Unlock()
				return id, nil
			}
			if c.closed {
				c.mu.Unlock()
				return 0, newError(CodeLeaseFailed, "client is closed")
			}
			if c.inFlight > 0 {
				// next() had to wait: keep more blocks ahead, so a fast consumer covers a lease's round trip.
				if !doubled && c.ahead < MaxBlocksAhead {
					c.ahead *= 2
				}
				doubled = true
				wait = c.wait
			} else {
				wait = c.refill()
			}
		}
		c.mu.Unlock()
		if strict != nil {
			return strict.next(ctx)
		}
		select {
		case <-wait.done:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		if wait.err == nil {
			continue
		}
		if c.becameStrict(wait.err) {
			continue
		}
		c.mu.Lock()
		buffered := len(c.blocks) > 0
		c.mu.Unlock()
		if !buffered {
			return 0, wait.err
		}
	}
}

// becameStrict reports whether a lease's failure says the sequence is strict; then every ID is asked for from here on.
func (c *Client) becameStrict(err error) bool {
	var clientErr *Error
	if !errors.As(err, &clientErr) || !clientErr.HasCode(strictNoBlocks) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.strict == nil {
		timeout := c.timeoutGiven
		if timeout <= 0 {
			timeout = StrictTimeout
		}
		c.strict = newStrictIDs(c.life, c.urls, c.sequence, c.t.withTimeout(timeout))
	}
	return true
}
