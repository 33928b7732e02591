package ticketd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Close gives the unused IDs of leased blocks back: once, from where the client got to, bounded in
// time; a failure is reported as lost (against a stand-in for ticketd's block and return routes).

// standIn leases blocks t·1000 .. t·1000 + 999 as lease L<t> and records the returns it is sent.
type standIn struct {
	mu           sync.Mutex
	tickets      uint64
	returns      []map[string]string
	returnStatus int
	noLease      bool
	hang         time.Duration
}

func (s *standIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if strings.HasSuffix(r.URL.Path, "/blocks/return") {
		var body map[string]string
		_ = json.NewDecoder(r.Body).Decode(&body)
		s.mu.Lock()
		s.returns = append(s.returns, body)
		status := s.returnStatus
		s.mu.Unlock()
		select {
		case <-time.After(s.hang):
		case <-r.Context().Done():
		}
		if status != 0 {
			w.WriteHeader(status)
			fmt.Fprint(w, `{"title":"refused","code":"TICKETD_LEASE_RETURNED"}`)
			return
		}
		t, _ := strconv.ParseUint(strings.TrimPrefix(body["lease"], "L"), 10, 64)
		from, _ := strconv.ParseUint(body["from"], 10, 64)
		fmt.Fprintf(w, `{"sequence":"s","returned":"%d"}`, t*1000+999-from+1)
		return
	}
	s.mu.Lock()
	s.tickets++
	t := s.tickets
	s.mu.Unlock()
	lease := fmt.Sprintf(`,"lease":"L%d"`, t)
	if s.noLease {
		lease = ""
	}
	fmt.Fprintf(w, `{"sequence":"s","first":"%d","last":"%d","ids":"ordered"%s}`, t*1000, t*1000+999, lease)
}

func (s *standIn) leased() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tickets
}

// closingClient is a client of the stand-in whose events are recorded.
func closingClient(t *testing.T, s *standIn, options Options) (*Client, func() []ClientEvent) {
	server := httptest.NewServer(s)
	t.Cleanup(server.Close)
	var mu sync.Mutex
	var events []ClientEvent
	options.URLs = append(options.URLs, server.URL)
	options.Sequence = "s"
	options.OnEvent = func(e ClientEvent) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	c, err := NewClient(options)
	if err != nil {
		t.Fatal(err)
	}
	return c, func() []ClientEvent {
		mu.Lock()
		defer mu.Unlock()
		return append([]ClientEvent(nil), events...)
	}
}

func TestCloseGivesTheRestOfTheBlockBackOnceAndRefusesLaterCalls(t *testing.T) {
	s := &standIn{}
	c, events := closingClient(t, s, Options{})
	for k := uint64(0); k < 3; k++ {
		if id, err := c.Next(context.Background()); err != nil || id != 1000+k {
			t.Fatalf("Next: %d, %v", id, err)
		}
	}
	c.Close()
	c.Close()
	// The Go client leases the next block as soon as it starts on one: Close waits for it and gives it back whole.
	if fmt.Sprint(s.returns) != "[map[from:1003 lease:L1] map[from:2000 lease:L2]]" {
		t.Fatalf("returns %v", s.returns)
	}
	if got := events(); len(got) != 2 || got[0].Type != "returned" || got[0].First != 1003 || got[0].Last != 1999 || got[0].Count != 997 || got[1].Count != 1000 {
		t.Fatalf("events %+v", got)
	}
	if _, err := c.Next(context.Background()); !errors.Is(err, ErrLeaseFailed) {
		t.Fatalf("Next after Close: %v", err)
	}
}

func TestBlocksBufferedAheadAreGivenBackWhole(t *testing.T) {
	s := &standIn{}
	c, events := closingClient(t, s, Options{})
	// Past the prefetch point (half the block): the next block is leased ahead.
	if _, err := c.NextBatch(context.Background(), 600); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); s.leased() < 2 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	c.Close()
	if fmt.Sprint(s.returns) != "[map[from:1600 lease:L1] map[from:2000 lease:L2]]" {
		t.Fatalf("returns %v", s.returns)
	}
	var returned uint64
	for _, e := range events() {
		returned += e.Count
	}
	if returned != 400+1000 {
		t.Fatalf("%d IDs given back, want 1400", returned)
	}
}

func TestNoIDHandedOutByGoroutinesRacingCloseIsGivenBack(t *testing.T) {
	s := &standIn{}
	// Time enough for every block buffered to go back on a loaded machine: this judges what, not how fast.
	c, events := closingClient(t, s, Options{GiveBackTimeout: 20 * time.Second})
	if _, err := c.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var handedOut []uint64
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var mine []uint64
			for {
				if w%2 == 0 {
					id, err := c.Next(context.Background())
					if err != nil {
						break
					}
					mine = append(mine, id)
				} else {
					batch, err := c.NextBatch(context.Background(), 7)
					mine = append(mine, batch...)
					if err != nil {
						break
					}
				}
			}
			mu.Lock()
			handedOut = append(handedOut, mine...)
			mu.Unlock()
		}(w)
	}
	time.Sleep(30 * time.Millisecond)
	c.Close()
	wg.Wait()
	got := events()
	if len(handedOut) == 0 || len(got) == 0 {
		t.Fatalf("%d IDs handed out, %d events", len(handedOut), len(got))
	}
	seen := map[uint64]bool{}
	for _, id := range handedOut {
		if seen[id] {
			t.Fatalf("%d handed out twice", id)
		}
		seen[id] = true
	}
	var returned uint64
	for _, e := range got {
		if e.Type != "returned" {
			t.Fatalf("event %+v", e)
		}
		returned += e.Count
		for _, id := range handedOut {
			if id >= e.First && id <= e.Last {
				t.Fatalf("%d was handed out and given back in %+v", id, e)
			}
		}
	}
	// Every ID leased is handed out, given back, or drawn by a goroutine that met Close (a gap: at most a batch each).
	accounted := uint64(len(handedOut)) + 1 + returned
	if leased := s.leased() * 1000; accounted > leased || accounted+4*7 < leased {
		t.Fatalf("%d IDs handed out or given back of %d leased", accounted, leased)
	}
}

func TestARefusedOrLateReturnIsReportedAsLostAndCloseIsBounded(t *testing.T) {
	c, events := closingClient(t, &standIn{returnStatus: 409}, Options{})
	if _, err := c.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if got := events(); len(got) != 2 || got[0].Type != "return-failed" || got[0].Count != 999 || fmt.Sprint(got[0].Codes) != "[TICKETD_LEASE_RETURNED]" {
		t.Fatalf("events %+v", got)
	}

	hung := &standIn{hang: 10 * time.Second}
	c, events = closingClient(t, hung, Options{GiveBackTimeout: 300 * time.Millisecond})
	c.urls = append(c.urls, c.urls[0])
	if _, err := c.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	c.Close()
	// Unbounded, it would wait 10 s for each of two URLs and two blocks.
	if took := time.Since(began); took > 3*time.Second {
		t.Fatalf("Close took %v", took)
	}
	if got := events(); len(got) != 2 || got[0].Type != "return-failed" || got[1].Type != "return-failed" {
		t.Fatalf("events %+v", got)
	}
}

func TestABlockWithoutALeaseOrANegativeTimeoutGivesNothingBack(t *testing.T) {
	bare := &standIn{noLease: true}
	c, events := closingClient(t, bare, Options{})
	if _, err := c.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Close()
	off := &standIn{}
	d, moreEvents := closingClient(t, off, Options{GiveBackTimeout: -1})
	if _, err := d.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if len(bare.returns)+len(off.returns)+len(events())+len(moreEvents()) != 0 {
		t.Fatalf("returns %v %v", bare.returns, off.returns)
	}
}
